"""SwiGLU on merged gate/up projections (torch_npu ``npu_swiglu`` semantics): definition, input
checks, reference math, autograd.

a, b = x.chunk(2, dim); y = silu(a) * b, with silu_mul's math. x.shape[dim] must be even.
"""

import torch

from .._library import define
from ..opdef import (
    IR_FLOAT_DTYPES,
    IrAttr,
    IrParam,
    Layout,
    OpDefinition,
    check_attr_int,
    check_not_empty,
    check_same_device,
    compute_dtype,
    ensure,
    ensure_index,
)
from .silu_mul import silu_mul_grad_math, silu_mul_math

SWIGLU = OpDefinition(
    name="swiglu",
    schema="(Tensor x, int dim=-1) -> Tensor y",
    inputs=(IrParam("x"),),
    outputs=(IrParam("y"),),
    attrs=(IrAttr("dim", "Int", -1),),
    dtype_combos=tuple({"x": dt, "y": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout("dim"),
)

SWIGLU_BACKWARD = OpDefinition(
    name="swiglu_backward",
    schema="(Tensor dy, Tensor x, int dim=-1) -> Tensor dx",
    inputs=(IrParam("dy"), IrParam("x")),
    outputs=(IrParam("dx"),),
    attrs=(IrAttr("dim", "Int", -1),),
    dtype_combos=tuple({"dy": dt, "x": dt, "dx": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout("dim", linear_in=("dy",)),
)


def halved_shape(x, dim: int) -> list:
    """y's shape: x's with dim (already checked) halved; symbolic sizes stay symbolic."""
    shape = list(x.shape)
    shape[dim] = shape[dim] // 2
    return shape


def _check_dim(op, x, dim):
    check_attr_int(op, "dim", dim)
    ensure(x.dim() >= 1, lambda: f"{op.public_name}: x must have at least 1 dimension, got a 0-d tensor")
    ensure_index(
        -x.dim() <= dim < x.dim(), lambda: f"{op.public_name}: dim must be in [{-x.dim()}, {x.dim() - 1}] for x of rank {x.dim()}, got {dim}"
    )
    ensure(
        x.shape[dim] % 2 == 0,
        lambda: f"{op.public_name}: x.shape[{dim}] must be even to split into gate and up halves, got {x.shape[dim]}",
    )


def check_swiglu(x, dim) -> dict:
    combo = SWIGLU.check_input_dtypes({"x": x})
    _check_dim(SWIGLU, x, dim)
    check_not_empty(SWIGLU, {"x": x})
    return combo


def check_swiglu_backward(dy, x, dim) -> dict:
    op = SWIGLU_BACKWARD
    combo = op.check_input_dtypes({"dy": dy, "x": x})
    check_same_device(op, {"dy": dy, "x": x})
    _check_dim(op, x, dim)
    expected = halved_shape(x, dim)
    ensure(
        list(dy.shape) == expected, lambda: f"{op.public_name}: dy must have shape {expected} (x's with dim {dim} halved), got {list(dy.shape)}"
    )
    check_not_empty(op, {"x": x})
    return combo


def swiglu_reference(x, dim=-1):
    combo = check_swiglu(x, dim)
    a, b = x.to(compute_dtype(x.dtype)).chunk(2, dim)
    return silu_mul_math(a, b).to(combo["y"])


def swiglu_backward_reference(dy, x, dim=-1):
    combo = check_swiglu_backward(dy, x, dim)
    acc = compute_dtype(x.dtype)
    a, b = x.to(acc).chunk(2, dim)
    da, db = silu_mul_grad_math(dy.to(acc), a, b)
    return torch.cat([da, db], dim).to(combo["dx"])


define(SWIGLU, check_swiglu)
define(SWIGLU_BACKWARD, check_swiglu_backward)


def _setup_context(ctx, inputs, output):
    x, dim = inputs
    ctx.save_for_backward(x)
    ctx.dim = dim


def _backward(ctx, dy):
    (x,) = ctx.saved_tensors
    return torch.ops.airfuse.swiglu_backward(dy, x, ctx.dim), None


torch.library.register_autograd(SWIGLU.qualname, _backward, setup_context=_setup_context)
