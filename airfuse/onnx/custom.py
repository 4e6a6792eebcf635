"""The ``custom`` form: each airfuse forward op as one node of domain ``ai.airfuse``, op type its GE
IR type (``AirfuseRmsNorm``), inputs, outputs and attributes as its op definition names and orders
them, for converters that map custom op types to the NPU kernels.

The ONNX schemas of these nodes are derived from the op definitions and registered with onnx, so
``onnx.checker`` verifies every custom node (input and output counts, attribute names and types)
as it does standard ones.
"""

import inspect

import onnx
import onnx.defs
import torch
from onnxscript import values

from ..ops import ALL_OPS
from ..opdef import BACKWARD_SUFFIX, OpDefinition

DOMAIN = "ai.airfuse"
DOMAIN_VERSION = 1

# GE attr type -> (ONNX attribute type, the Python type the exporter passes as that attribute).
_ONNX_ATTR = {
    "Float": (onnx.defs.OpSchema.AttrType.FLOAT, float),
    "Int": (onnx.defs.OpSchema.AttrType.INT, int),
    "Bool": (onnx.defs.OpSchema.AttrType.INT, bool),
    "Str": (onnx.defs.OpSchema.AttrType.STRING, str),
    "ListInt": (onnx.defs.OpSchema.AttrType.INTS, list[int]),
}
_ONNX_TYPE = {torch.float32: "tensor(float)", torch.float16: "tensor(float16)", torch.bfloat16: "tensor(bfloat16)"}

FORWARD_OPS = tuple(op for op in ALL_OPS.values() if not op.name.endswith(BACKWARD_SUFFIX))


def onnx_schema(opdef: OpDefinition) -> onnx.defs.OpSchema:
    """The node's schema: one type variable per group of inputs and outputs whose dtypes are equal
    in every dtype combination of the op (x and y of rms_norm, say), allowing the dtypes they take."""
    params = opdef.inputs + opdef.outputs
    signature = {p.name: tuple(combo[p.name] for combo in opdef.dtype_combos) for p in params}
    type_var = {}
    constraints = []
    for name, dtypes in signature.items():
        if dtypes not in type_var:
            type_var[dtypes] = f"T{len(type_var)}"
            allowed = sorted({_ONNX_TYPE[d] for d in dtypes})
            constraints.append((type_var[dtypes], allowed, f"the dtypes {opdef.public_name} takes for {name}"))

    def formal(p):
        return onnx.defs.OpSchema.FormalParameter(p.name, type_var[signature[p.name]])

    attributes = [onnx.defs.OpSchema.Attribute(a.name, _ONNX_ATTR[a.ge_type][0], a.name, required=False) for a in opdef.attrs]
    return onnx.defs.OpSchema(
        opdef.ir_type, DOMAIN, DOMAIN_VERSION, f"{opdef.public_name}{opdef.schema}",
        inputs=[formal(p) for p in opdef.inputs], outputs=[formal(p) for p in opdef.outputs],
        type_constraints=constraints, attributes=attributes,
    )


def register_schemas():
    """Register every forward op's schema with onnx, once per process."""
    for opdef in FORWARD_OPS:
        try:
            onnx.defs.get_schema(opdef.ir_type, DOMAIN_VERSION, DOMAIN)
        except onnx.defs.SchemaError:
            onnx.defs.register_schema(onnx_schema(opdef))


def translation(opdef: OpDefinition):
    """The exporter's translation of ``opdef``: one ``ai.airfuse`` node. Its signature is the op's
    schema (tensors unannotated, attributes annotated with their Python types, with the op's
    defaults), which is how the exporter tells inputs from attributes."""
    node = values.Op(values.Opset(DOMAIN, DOMAIN_VERSION), opdef.ir_type, onnx.defs.get_schema(opdef.ir_type, DOMAIN_VERSION, DOMAIN))
    tensor_names = [p.name for p in opdef.inputs]

    def translate(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs = [bound.arguments[name] for name in tensor_names]
        attrs = {a.name: bound.arguments[a.name] for a in opdef.attrs}
        return node(*inputs, **attrs, _outputs=len(opdef.outputs))

    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature(
        [inspect.Parameter(name, keyword) for name in tensor_names]
        + [inspect.Parameter(a.name, keyword, default=a.default, annotation=_ONNX_ATTR[a.ge_type][1]) for a in opdef.attrs]
    )
    translate.__signature__ = signature
    translate.__annotations__ = {a.name: _ONNX_ATTR[a.ge_type][1] for a in opdef.attrs}
    translate.__name__ = translate.__qualname__ = opdef.name
    return translate


register_schemas()
TRANSLATIONS = {opdef.name: translation(opdef) for opdef in FORWARD_OPS}
