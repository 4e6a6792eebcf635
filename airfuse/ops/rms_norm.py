"""RMSNorm and its backward: op definitions, input checks, reference math and autograd.

y = x * rsqrt(mean(x^2, last dim) + epsilon) * gamma, accumulated in float32 (float64 for the
float64 reference dtype). rstd is returned with shape ``x.shape[:-1] + (1,)``, as torch_npu's
``npu_rms_norm`` does, and like it is not differentiable: it is a statistic saved for backward.
"""

import torch

from .._library import define
from ..opdef import (
    IR_FLOAT_DTYPES,
    IrAttr,
    IrParam,
    Layout,
    OpDefinition,
    check_attr_float,
    check_not_empty,
    check_same_device,
    compute_dtype,
    ensure,
)

_F32 = torch.float32

RMS_NORM = OpDefinition(
    name="rms_norm",
    schema="(Tensor x, Tensor gamma, float epsilon=1e-6) -> (Tensor y, Tensor rstd)",
    inputs=(IrParam("x"), IrParam("gamma")),
    outputs=(IrParam("y"), IrParam("rstd")),
    attrs=(IrAttr("epsilon", "Float", 1e-6),),
    # gamma is in x's dtype or float32; rstd is always float32.
    dtype_combos=tuple(
        {"x": dt, "gamma": gamma_dt, "y": dt, "rstd": _F32}
        for dt in IR_FLOAT_DTYPES
        for gamma_dt in dict.fromkeys((dt, _F32))
    ),
    layout=Layout(-1, per_feature=("gamma",)),
)

RMS_NORM_BACKWARD = OpDefinition(
    name="rms_norm_backward",
    schema="(Tensor dy, Tensor x, Tensor rstd, Tensor gamma) -> (Tensor dx, Tensor dgamma)",
    inputs=(IrParam("dy"), IrParam("x"), IrParam("rstd"), IrParam("gamma")),
    outputs=(IrParam("dx"), IrParam("dgamma")),
    attrs=(),
    dtype_combos=tuple(
        {"dy": c["x"], "x": c["x"], "rstd": _F32, "gamma": c["gamma"], "dx": c["x"], "dgamma": c["gamma"]}
        for c in RMS_NORM.dtype_combos
    ),
    layout=Layout(-1, per_feature=("gamma", "dgamma"), linear_in=("dy",)),
)


def check_gamma(op, x, gamma):
    ensure(x.dim() >= 1, lambda: f"{op.public_name}: x must have at least 1 dimension, got a 0-d tensor")
    ensure(
        gamma.dim() == 1 and gamma.shape[0] == x.shape[-1],
        lambda: f"{op.public_name}: gamma must have shape [{x.shape[-1]}] (x's last dim), got {list(gamma.shape)}",
    )


def check_rms_norm(x, gamma, epsilon) -> dict:
    """Validate rms_norm's inputs (eager and fake); return the dtype combination they select."""
    combo = RMS_NORM.check_input_dtypes({"x": x, "gamma": gamma})
    check_same_device(RMS_NORM, {"x": x, "gamma": gamma})
    check_gamma(RMS_NORM, x, gamma)
    check_not_empty(RMS_NORM, {"x": x})
    check_attr_float(RMS_NORM, "epsilon", epsilon)
    return combo


def check_rms_norm_backward(dy, x, rstd, gamma) -> dict:
    op = RMS_NORM_BACKWARD
    tensors = {"dy": dy, "x": x, "rstd": rstd, "gamma": gamma}
    combo = op.check_input_dtypes(tensors)
    check_same_device(op, tensors)
    check_gamma(op, x, gamma)
    ensure(
        dy.shape == x.shape,
        lambda: f"{op.public_name}: dy must have x's shape {list(x.shape)}, got {list(dy.shape)}",
    )
    ensure(
        rstd.shape == (*x.shape[:-1], 1),
        lambda: f"{op.public_name}: rstd must have shape {[*x.shape[:-1], 1]}, got {list(rstd.shape)}",
    )
    check_not_empty(op, {"x": x})
    return combo


def rms_norm_math(x, gamma, epsilon):
    """(y, rstd) in the accumulation dtype, without checks: shared with add_rms_norm."""
    xf = x.contiguous().to(compute_dtype(x.dtype))
    rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + epsilon)
    return xf * rstd * gamma.to(xf.dtype), rstd


def rms_norm_reference(x, gamma, epsilon=1e-6):
    combo = check_rms_norm(x, gamma, epsilon)
    y, rstd = rms_norm_math(x, gamma, epsilon)
    return y.to(combo["y"]), rstd.to(combo["rstd"])


def rms_norm_backward_reference(dy, x, rstd, gamma):
    combo = check_rms_norm_backward(dy, x, rstd, gamma)
    acc = compute_dtype(x.dtype)
    xf, dyf = x.contiguous().to(acc), dy.contiguous().to(acc)
    r = rstd.to(acc)
    xhat = xf * r
    dxhat = dyf * gamma.to(acc)
    # d/dx of x*r: r * (dxhat - xhat * mean(dxhat * xhat)), the mean over the normalized dim.
    dx = r * (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    dgamma = (dyf * xhat).reshape(-1, x.shape[-1]).sum(0)
    return dx.to(combo["dx"]), dgamma.to(combo["dgamma"])


define(RMS_NORM, check_rms_norm)
define(RMS_NORM_BACKWARD, check_rms_norm_backward)


def _setup_context(ctx, inputs, output):
    x, gamma, _ = inputs
    _, rstd = output
    ctx.save_for_backward(x, rstd, gamma)
    ctx.mark_non_differentiable(rstd)


def _backward(ctx, dy, _drstd):
    x, rstd, gamma = ctx.saved_tensors
    dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma)
    return dx, dgamma, None


torch.library.register_autograd(RMS_NORM.qualname, _backward, setup_context=_setup_context)
