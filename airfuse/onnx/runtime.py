"""Running exported models in ONNX Runtime, the custom form on airfuse's CPU kernels.

A standard-form model needs nothing but ONNX Runtime. A custom-form model's ``ai.airfuse`` nodes
run through onnxruntime-extensions' Python custom ops, each calling ``torch.ops.airfuse.<op>`` (the
CPU kernels eager mode runs). Two limits of that mechanism shape what is registered here:

- Python custom ops live in one domain, the extensions' own (``ai.onnx.contrib``): the session gets
  a copy of the model with its ``ai.airfuse`` nodes moved there; the model itself is unchanged.
- They carry float32 (and integer) tensors only; float16 and bfloat16 are refused by the
  extensions (``Type float16 not supported by python customops api``). So each op is registered
  for its all-float32 dtype combination; ``reference_run`` runs the other dtypes with onnx's
  reference evaluator on the same kernels.
"""

import functools

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import torch
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from .._library import overload
from .custom import DOMAIN, FORWARD_OPS

_F32 = torch.float32


def session(model, *, threads: int = 1) -> onnxruntime.InferenceSession:
    """An ONNX Runtime CPU session for ``model`` (a ModelProto or a path), custom form included."""
    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(model)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if any(node.domain == DOMAIN for node in proto.graph.node):
        options.register_custom_ops_library(_extensions_library())
        proto = _in_extensions_domain(proto)
    return onnxruntime.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run(ort_session: onnxruntime.InferenceSession, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """The session's outputs for ``tensors`` (in the model's input order), as torch tensors."""
    names = [i.name for i in ort_session.get_inputs()]
    feeds = {name: _to_numpy(t) for name, t in zip(names, tensors, strict=True)}
    return [_to_torch(np.asarray(out)) for out in ort_session.run(None, feeds)]


def reference_run(model: onnx.ModelProto, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """``model``'s outputs from onnx's reference evaluator, its ``ai.airfuse`` nodes on airfuse's
    CPU kernels in every dtype (for the dtypes ONNX Runtime's Python custom ops cannot carry)."""
    evaluator = ReferenceEvaluator(model, new_ops=_reference_ops())
    feeds = {name: _to_numpy(t) for name, t in zip(evaluator.input_names, tensors, strict=True)}
    return [_to_torch(np.asarray(out)) for out in evaluator.run(None, feeds)]


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    # numpy has no bfloat16; onnx's reference evaluator and ONNX Runtime take ml_dtypes' one.
    if tensor.dtype == torch.bfloat16:
        return tensor.detach().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.detach().numpy()


def _to_torch(array: np.ndarray) -> torch.Tensor:
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(np.ascontiguousarray(array).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array))


@functools.cache
def _reference_ops() -> list:
    def op_run_class(opdef):
        call = overload(opdef)

        def _run(self, *arrays, **attrs):
            outputs = call(*map(_to_torch, arrays), **attrs)
            return tuple(_to_numpy(t) for t in ((outputs,) if isinstance(outputs, torch.Tensor) else outputs))

        return type(opdef.ir_type, (OpRun,), {"op_domain": DOMAIN, "_run": _run})

    return [op_run_class(opdef) for opdef in FORWARD_OPS]


@functools.cache
def _extensions_library() -> str:
    from onnxruntime_extensions import PyCustomOpDef, get_library_path, onnx_op

    attr_types = {"Float": PyCustomOpDef.dt_float, "Int": PyCustomOpDef.dt_int64, "Str": PyCustomOpDef.dt_string}
    for opdef in FORWARD_OPS:
        onnx_op(
            op_type=opdef.ir_type,
            inputs=[PyCustomOpDef.dt_float] * len(opdef.inputs),
            outputs=[PyCustomOpDef.dt_float] * len(opdef.outputs),
            attrs={a.name: attr_types[a.ge_type] for a in opdef.attrs},
        )(_kernel(opdef))
    return get_library_path()


def _kernel(opdef):
    if not any(all(d == _F32 for d in combo.values()) for combo in opdef.dtype_combos):
        raise AssertionError(f"{opdef.public_name}: no all-float32 dtype combination to register with ONNX Runtime")
    call = overload(opdef)

    def kernel(*arrays, **attrs):
        outputs = call(*map(_to_torch, arrays), **attrs)
        if isinstance(outputs, torch.Tensor):
            return outputs.numpy()
        return tuple(t.numpy() for t in outputs)

    kernel.__name__ = opdef.name
    return kernel


def _in_extensions_domain(proto: onnx.ModelProto) -> onnx.ModelProto:
    from onnxruntime_extensions import default_opset_domain

    moved = onnx.ModelProto()
    moved.CopyFrom(proto)
    for node in moved.graph.node:
        if node.domain == DOMAIN:
            node.domain = default_opset_domain()
    for opset in moved.opset_import:
        if opset.domain == DOMAIN:
            opset.domain = default_opset_domain()
    return moved
