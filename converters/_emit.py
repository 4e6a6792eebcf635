"""Emit one airfuse GE IR node from a converter, checked against the op definition.

Every converter goes through ``emit_ir``: input and attr names must be the IR's, in IR order;
attrs must be compile-time constants (a symbolic value arrives as a graph tensor and cannot be a
GE attr) and values the IR takes (a Float finite as a float32, a Str among its choices); input
dtypes must be a combination the IR supports (CPU-only float64 is refused here).
"""

import math

import numpy as np
from torchair import ge

from airfuse.ge_dtypes import ge_dtype_to_torch
from airfuse.opdef import OpDefinition, check_attr_choice, check_attr_float, check_attr_int


class _DtypeOnly:
    """What ``OpDefinition.check_input_dtypes`` reads of a tensor."""

    def __init__(self, tensor, op, name):
        try:
            self.dtype = ge_dtype_to_torch(tensor.dtype, f"{op.ir_type}: input {name}")
        except NotImplementedError as error:
            raise TypeError(f"{error}; no airfuse IR takes it") from None


def emit_ir(op: OpDefinition, *, inputs: dict, attrs: dict):
    """Add ``op.ir_type`` to the current GE graph; return its outputs (a tuple if several)."""
    if list(inputs) != [p.name for p in op.inputs]:
        raise AssertionError(f"{op.ir_type}: converter passes inputs {list(inputs)}, IR has {[p.name for p in op.inputs]}")
    if list(attrs) != [a.name for a in op.attrs]:
        raise AssertionError(f"{op.ir_type}: converter passes attrs {list(attrs)}, IR has {[a.name for a in op.attrs]}")
    for name, value in inputs.items():
        if not isinstance(value, ge.Tensor):
            raise TypeError(f"{op.ir_type}: input {name} of {op.public_name} must be a tensor, got {type(value).__name__}")
    for attr in op.attrs:
        value = attrs[attr.name]
        if isinstance(value, ge.Tensor):
            raise TypeError(
                f"{op.ir_type}: attr {attr.name} of {op.public_name} must be a constant at compile time, but it is "
                "symbolic here (a graph tensor); pass it as a Python constant or mark it static"
            )
        if attr.ge_type == "Float":
            # The GE attr is a float32: whatever the fake impl accepted must also fit there.
            check_attr_float(op, attr.name, value, minimum=-math.inf)
        elif attr.ge_type == "Int":
            check_attr_int(op, attr.name, value)
        if attr.choices:
            check_attr_choice(op, attr.name, value)
    try:
        op.check_input_dtypes({n: _DtypeOnly(t, op, n) for n, t in inputs.items()}, reference=False)
    except TypeError as error:
        raise TypeError(f"{op.ir_type} (GE IR) cannot express this call: {error}") from None
    ge_attrs = {a.name: getattr(ge.attr, a.ge_type)(_python_value(attrs[a.name])) for a in op.attrs}
    return ge.custom_op(op.ir_type, inputs=inputs, outputs=[p.name for p in op.outputs], attrs=ge_attrs)


def _python_value(value):
    """numpy scalars (accepted as the numbers they are) as the Python values ge.attr takes."""
    return value.item() if isinstance(value, np.generic) else value
