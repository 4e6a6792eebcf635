"""SiLU-gated product of two same-shape tensors (Hugging Face's separate gate_proj / up_proj):
definition, input checks, reference math, autograd.

y = silu(a) * b, computed in float32 and rounded once. The math here also serves ``swiglu``,
which takes a and b as the two halves of one tensor.
"""

import torch

from .._library import define
from ..opdef import (
    IR_FLOAT_DTYPES,
    IrParam,
    Layout,
    OpDefinition,
    compute_dtype,
    check_not_empty,
    check_same_device,
    check_same_shape,
)

SILU_MUL = OpDefinition(
    name="silu_mul",
    schema="(Tensor a, Tensor b) -> Tensor y",
    inputs=(IrParam("a"), IrParam("b")),
    outputs=(IrParam("y"),),
    attrs=(),
    dtype_combos=tuple({"a": dt, "b": dt, "y": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout(None, linear_in=("b",)),
)

SILU_MUL_BACKWARD = OpDefinition(
    name="silu_mul_backward",
    schema="(Tensor dy, Tensor a, Tensor b) -> (Tensor da, Tensor db)",
    inputs=(IrParam("dy"), IrParam("a"), IrParam("b")),
    outputs=(IrParam("da"), IrParam("db")),
    attrs=(),
    dtype_combos=tuple({"dy": dt, "a": dt, "b": dt, "da": dt, "db": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout(None, linear_in=("dy",)),
)


def silu_mul_math(a, b):
    """silu(a) * b for a, b already in the accumulation dtype; silu(a) = a / (1 + exp(-a))."""
    return a / (1 + torch.exp(-a)) * b


def silu_mul_grad_math(dy, a, b):
    """(da, db) of y = silu(a) * b, all in the accumulation dtype."""
    s = torch.sigmoid(a)
    # silu'(a) = s + a * s * (1 - s) = s * (1 + a * (1 - s)); dy * s serves both
    dy_s = dy * s
    return dy_s * b * (1 + a * (1 - s)), dy_s * a


def _check(op, tensors: dict) -> dict:
    combo = op.check_input_dtypes(tensors)
    check_same_device(op, tensors)
    check_same_shape(op, tensors)
    check_not_empty(op, tensors)
    return combo


def check_silu_mul(a, b) -> dict:
    return _check(SILU_MUL, {"a": a, "b": b})


def check_silu_mul_backward(dy, a, b) -> dict:
    return _check(SILU_MUL_BACKWARD, {"dy": dy, "a": a, "b": b})


def silu_mul_reference(a, b):
    combo = check_silu_mul(a, b)
    acc = compute_dtype(a.dtype)
    return silu_mul_math(a.to(acc), b.to(acc)).to(combo["y"])


def silu_mul_backward_reference(dy, a, b):
    combo = check_silu_mul_backward(dy, a, b)
    acc = compute_dtype(a.dtype)
    da, db = silu_mul_grad_math(dy.to(acc), a.to(acc), b.to(acc))
    return da.to(combo["da"]), db.to(combo["db"])


define(SILU_MUL, check_silu_mul)
define(SILU_MUL_BACKWARD, check_silu_mul_backward)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dy):
    a, b = ctx.saved_tensors
    return torch.ops.airfuse.silu_mul_backward(dy, a, b)


torch.library.register_autograd(SILU_MUL.qualname, _backward, setup_context=_setup_context)
