"""Elementwise add of two same-shape tensors: definition, input checks, reference math, autograd.

No broadcasting: the NPU kernel streams both inputs once, so shapes must match exactly.
Half and bfloat16 are added in float32 and rounded once, as the NPU kernel does.
"""

import torch

from .._library import define
from ..opdef import IR_FLOAT_DTYPES, IrParam, Layout, OpDefinition, compute_dtype, check_not_empty, check_same_device, check_same_shape

ADD = OpDefinition(
    name="add",
    schema="(Tensor x, Tensor y) -> Tensor z",
    inputs=(IrParam("x"), IrParam("y")),
    outputs=(IrParam("z"),),
    attrs=(),
    dtype_combos=tuple({"x": dt, "y": dt, "z": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout(None, linear_in=("x", "y")),
)


def check_add(x, y) -> dict:
    combo = ADD.check_input_dtypes({"x": x, "y": y})
    check_same_device(ADD, {"x": x, "y": y})
    check_same_shape(ADD, {"x": x, "y": y})
    check_not_empty(ADD, {"x": x})
    return combo


def add_reference(x, y):
    combo = check_add(x, y)
    acc = compute_dtype(x.dtype)
    return (x.contiguous().to(acc) + y.contiguous().to(acc)).to(combo["z"])


define(ADD, check_add)


def _backward(ctx, dz):
    return dz, dz


torch.library.register_autograd(ADD.qualname, _backward)
