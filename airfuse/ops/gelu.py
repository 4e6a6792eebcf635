"""GELU and its backward: op definitions, input checks, reference math and autograd.

y = x * Φ(x), as ``torch.nn.functional.gelu``: ``approximate="tanh"`` takes
Φ(x) = 0.5 * (1 + tanh(√(2/π) * (x + 0.044715 * x³))), ``"none"`` the normal CDF (erf form).
The kernels compute Φ in forms without cancellation or overflow over the whole float range:
0.5 * (1 + tanh(u)) = sigmoid(2u), and 0.5 * (1 + erf(x/√2)) = 0.5 * erfc(-x/√2).
"""

import math

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

APPROXIMATIONS = ("tanh", "none")

GELU = OpDefinition(
    name="gelu",
    schema='(Tensor x, str approximate="tanh") -> Tensor y',
    inputs=(IrParam("x"),),
    outputs=(IrParam("y"),),
    attrs=(IrAttr("approximate", "Str", "tanh", choices=APPROXIMATIONS),),
    dtype_combos=tuple({"x": dt, "y": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout(None),
)

GELU_BACKWARD = OpDefinition(
    name="gelu_backward",
    schema='(Tensor dy, Tensor x, str approximate="tanh") -> Tensor dx',
    inputs=(IrParam("dy"), IrParam("x")),
    outputs=(IrParam("dx"),),
    attrs=(IrAttr("approximate", "Str", "tanh", choices=APPROXIMATIONS),),
    dtype_combos=tuple({"dy": dt, "x": dt, "dx": dt} for dt in IR_FLOAT_DTYPES),
    layout=Layout(None, linear_in=("dy",)),
)

_TANH_SCALE = 2 * math.sqrt(2 / math.pi)  # the 2 turns 0.5 * (1 + tanh(u)) into sigmoid(2u)
_CUBIC = 0.044715
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def check_gelu(x, approximate) -> dict:
    """Validate gelu's inputs (eager and fake); return the dtype combination they select."""
    combo = GELU.check_input_dtypes({"x": x})
    check_attr_choice(GELU, "approximate", approximate)
    check_not_empty(GELU, {"x": x})
    return combo


def check_gelu_backward(dy, x, approximate) -> dict:
    op = GELU_BACKWARD
    combo = op.check_input_dtypes({"dy": dy, "x": x})
    check_same_device(op, {"dy": dy, "x": x})
    check_attr_choice(op, "approximate", approximate)
    ensure(
        dy.shape == x.shape,
        lambda: f"{op.public_name}: dy must have x's shape {list(x.shape)}, got {list(dy.shape)} (no broadcasting)",
    )
    check_not_empty(op, {"x": x})
    return combo


def _tanh_argument(x):
    """2u with u = √(2/π) * (x + 0.044715 * x³); ±inf once x³ overflows, where sigmoid is exact."""
    return _TANH_SCALE * x * (1 + _CUBIC * x * x)


def _cdf(x, approximate):
    """Φ(x), the gate GELU multiplies x by."""
    if approximate == "tanh":
        return torch.sigmoid(_tanh_argument(x))
    return 0.5 * torch.special.erfc(-x * _SQRT_HALF)


def _x_times_density(x, approximate):
    """x * Φ'(x), the second term of GELU's derivative Φ(x) + x * Φ'(x)."""
    if approximate == "tanh":
        w = _tanh_argument(x)
        density = torch.sigmoid(w) * torch.sigmoid(-w)
        slope = _TANH_SCALE * (1 + 3 * _CUBIC * x * x)
        # Where the density underflows to 0 (|x| > ~11 in float32), x * slope may overflow (|x| > ~1e12) and
        # 0 * inf would be NaN: the term is 0 there.
        return torch.where(density == 0, 0.0, x * slope * density)
    # exp(-x²/2) underflows to 0 before x² overflows to inf: no 0 * inf here.
    return x * torch.exp(-0.5 * x * x) * _INV_SQRT_2PI


def gelu_reference(x, approximate="tanh"):
    combo = check_gelu(x, approximate)
    xf = x.contiguous().to(compute_dtype(x.dtype))
    return (xf * _cdf(xf, approximate)).to(combo["y"])


def gelu_backward_reference(dy, x, approximate="tanh"):
    combo = check_gelu_backward(dy, x, approximate)
    acc = compute_dtype(x.dtype)
    xf, dyf = x.contiguous().to(acc), dy.contiguous().to(acc)
    return (dyf * (_cdf(xf, approximate) + _x_times_density(xf, approximate))).to(combo["dx"])


define(GELU, check_gelu)
define(GELU_BACKWARD, check_gelu_backward)


def _setup_context(ctx, inputs, output):
    x, approximate = inputs
    ctx.save_for_backward(x)
    ctx.approximate = approximate


def _backward(ctx, dy):
    (x,) = ctx.saved_tensors
    return torch.ops.airfuse.gelu_backward(dy, x, ctx.approximate), None


torch.library.register_autograd(GELU.qualname, _backward, setup_context=_setup_context)
