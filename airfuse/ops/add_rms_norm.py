"""Residual add fused with RMSNorm: definition, input checks, reference math, autograd.

x = x1 + x2 (added in float32, rounded once to x1's dtype), then y, rstd = rms_norm(x, gamma,
epsilon) computed from that rounded x, so the fused op and the unfused graph agree bit for bit.
Outputs in torch_npu's ``npu_add_rms_norm`` order: (y, rstd, x); x feeds the next residual.
The backward is rms_norm_backward plus the gradient arriving at x: no IR of its own.
"""

import torch

from .._library import define
from ..opdef import (
    IrAttr,
    IrParam,
    OpDefinition,
    compute_dtype,
    check_attr_float,
    check_not_empty,
    check_same_device,
    check_same_shape,
)
from .rms_norm import RMS_NORM, check_gamma, rms_norm_math

ADD_RMS_NORM = OpDefinition(
    name="add_rms_norm",
    schema="(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-6) -> (Tensor y, Tensor rstd, Tensor x)",
    inputs=(IrParam("x1"), IrParam("x2"), IrParam("gamma")),
    outputs=(IrParam("y"), IrParam("rstd"), IrParam("x")),
    attrs=(IrAttr("epsilon", "Float", 1e-6),),
    dtype_combos=tuple(
        {"x1": c["x"], "x2": c["x"], "gamma": c["gamma"], "y": c["y"], "rstd": c["rstd"], "x": c["x"]}
        for c in RMS_NORM.dtype_combos
    ),
)


def check_add_rms_norm(x1, x2, gamma, epsilon) -> dict:
    op = ADD_RMS_NORM
    tensors = {"x1": x1, "x2": x2, "gamma": gamma}
    combo = op.check_input_dtypes(tensors)
    check_same_device(op, tensors)
    check_same_shape(op, {"x1": x1, "x2": x2})
    check_gamma(op, x1, gamma)
    check_not_empty(op, {"x1": x1})
    check_attr_float(op, "epsilon", epsilon)
    return combo


def add_rms_norm_reference(x1, x2, gamma, epsilon=1e-6):
    combo = check_add_rms_norm(x1, x2, gamma, epsilon)
    acc = compute_dtype(x1.dtype)
    x = (x1.to(acc) + x2.to(acc)).to(combo["x"])
    y, rstd = rms_norm_math(x, gamma, epsilon)
    return y.to(combo["y"]), rstd.to(combo["rstd"]), x


define(ADD_RMS_NORM, check_add_rms_norm)


def _setup_context(ctx, inputs, output):
    _, _, gamma, _ = inputs
    _, rstd, x = output
    ctx.save_for_backward(x, rstd, gamma)
    ctx.mark_non_differentiable(rstd)


def _backward(ctx, dy, _drstd, dx_residual):
    x, rstd, gamma = ctx.saved_tensors
    dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma)
    # x reaches the loss through y and, as the next residual, directly. In place: dx is the kernel's
    # fresh output, and a new tensor would cost another x-sized allocation (page faults when large).
    dx.add_(dx_residual)
    return dx, dx, dgamma, None


torch.library.register_autograd(ADD_RMS_NORM.qualname, _backward, setup_context=_setup_context)
