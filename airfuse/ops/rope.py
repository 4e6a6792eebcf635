"""Rotary position embedding (RoPE) and its backward: op definitions, input checks, reference math
and autograd.

y = x * cos + rotate(x) * sin over the last dim D (even). ``mode="half"`` rotates the two halves
(Hugging Face's layout): rotate(x) = cat(-x[..., D/2:], x[..., :D/2]); ``mode="interleave"``
rotates adjacent pairs (GPT-J / Meta's layout): (x[2i], x[2i+1]) -> (-x[2i+1], x[2i]). cos and sin
are position tables with x's rank and last dim, every other dim x's or 1 (broadcast over batch or
heads), as torch_npu's ``npu_rotary_mul`` takes them. Gradients for cos and sin are not provided.
"""

import torch

from .._library import define
from ..opdef import (
    IR_FLOAT_DTYPES,
    IrAttr,
    IrParam,
    Layout,
    OpDefinition,
    check_attr_choice,
    check_not_empty,
    check_same_device,
    compute_dtype,
    ensure,
)

_F32 = torch.float32
MODES = ("half", "interleave")

ROPE = OpDefinition(
    name="rope",
    schema='(Tensor x, Tensor cos, Tensor sin, str mode="half") -> Tensor y',
    inputs=(IrParam("x"), IrParam("cos"), IrParam("sin")),
    outputs=(IrParam("y"),),
    attrs=(IrAttr("mode", "Str", "half", choices=MODES),),
    # cos and sin share one dtype: x's, or float32 (tables kept in full precision).
    dtype_combos=tuple(
        {"x": dt, "cos": table_dt, "sin": table_dt, "y": dt}
        for dt in IR_FLOAT_DTYPES
        for table_dt in dict.fromkeys((dt, _F32))
    ),
    layout=Layout(-1, linear_in=("x",)),
)

ROPE_BACKWARD = OpDefinition(
    name="rope_backward",
    schema='(Tensor dy, Tensor cos, Tensor sin, str mode="half") -> Tensor dx',
    inputs=(IrParam("dy"), IrParam("cos"), IrParam("sin")),
    outputs=(IrParam("dx"),),
    attrs=(IrAttr("mode", "Str", "half", choices=MODES),),
    dtype_combos=tuple({"dy": c["x"], "cos": c["cos"], "sin": c["sin"], "dx": c["y"]} for c in ROPE.dtype_combos),
    layout=Layout(-1, linear_in=("dy",)),
)


def _check(op, name, x, cos, sin, mode) -> dict:
    """The checks rope and rope_backward share; ``name`` is the rotated tensor's (x or dy)."""
    tensors = {name: x, "cos": cos, "sin": sin}
    combo = op.check_input_dtypes(tensors)
    check_same_device(op, tensors)
    check_attr_choice(op, "mode", mode)
    ensure(x.dim() >= 1, lambda: f"{op.public_name}: {name} must have at least 1 dimension, got a 0-d tensor")
    check_not_empty(op, {name: x})
    ensure(
        x.shape[-1] % 2 == 0,
        lambda: f"{op.public_name}: {name}'s last dim must be even (it is rotated in pairs), got {x.shape[-1]}",
    )
    ensure(
        cos.dim() == x.dim()
        and cos.shape[-1] == x.shape[-1]
        and all(c == 1 or c == d for c, d in zip(cos.shape[:-1], x.shape[:-1], strict=True)),
        lambda: f"{op.public_name}: cos must have {name}'s rank and last dim, every other dim {name}'s or 1 "
        f"({name} has shape {list(x.shape)}), got {list(cos.shape)}",
    )
    ensure(
        sin.shape == cos.shape,
        lambda: f"{op.public_name}: sin must have cos's shape {list(cos.shape)}, got {list(sin.shape)}",
    )
    return combo


def check_rope(x, cos, sin, mode) -> dict:
    """Validate rope's inputs (eager and fake); return the dtype combination they select."""
    return _check(ROPE, "x", x, cos, sin, mode)


def check_rope_backward(dy, cos, sin, mode) -> dict:
    return _check(ROPE_BACKWARD, "dy", dy, cos, sin, mode)


def rotate(x, mode):
    """The 90° turn of each rotated pair: rotate(x) in y = x * cos + rotate(x) * sin. Its transpose
    is -rotate (a 90° turn back), which is what the backward applies."""
    if mode == "half":
        first, second = x.split(x.shape[-1] // 2, dim=-1)
        return torch.cat((second.neg(), first), dim=-1)
    pairs = x.unflatten(-1, (-1, 2))
    return torch.stack((pairs[..., 1].neg(), pairs[..., 0]), dim=-1).flatten(-2)


def rope_reference(x, cos, sin, mode="half"):
    combo = check_rope(x, cos, sin, mode)
    acc = compute_dtype(x.dtype)
    xf = x.contiguous().to(acc)
    return (xf * cos.to(acc) + rotate(xf, mode) * sin.to(acc)).to(combo["y"])


def rope_backward_reference(dy, cos, sin, mode="half"):
    combo = check_rope_backward(dy, cos, sin, mode)
    acc = compute_dtype(dy.dtype)
    dyf = dy.contiguous().to(acc)
    # dx = cos * dy + rotateᵀ(sin * dy), and rotateᵀ = -rotate.
    return (dyf * cos.to(acc) - rotate(dyf * sin.to(acc), mode)).to(combo["dx"])


define(ROPE, check_rope)
define(ROPE_BACKWARD, check_rope_backward)


def _setup_context(ctx, inputs, output):
    _, cos, sin, mode = inputs
    for name, table in (("cos", cos), ("sin", sin)):
        if table.requires_grad:
            raise RuntimeError(
                f"{ROPE.public_name}: gradients for {name} are not provided, but {name} requires grad; "
                f"pass {name}.detach() (position tables are constants), or compute RoPE with torch ops to train them"
            )
    ctx.save_for_backward(cos, sin)
    ctx.mode = mode


def _backward(ctx, dy):
    cos, sin = ctx.saved_tensors
    return torch.ops.airfuse.rope_backward(dy, cos, sin, ctx.mode), None, None, None


torch.library.register_autograd(ROPE.qualname, _backward, setup_context=_setup_context)
