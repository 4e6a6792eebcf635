"""Residual add fused with RMSNorm: definition, input checks, reference math, autograd.

x = x1 + x2 (added in float32, rounded once to x1's dtype), then y, rstd = rms_norm(x, gamma,
epsilon) computed from that rounded x, so the fused op and the unfused graph agree bit for bit.
Outputs in torch_npu's ``npu_add_rms_norm`` order: (y, rstd, x); x feeds the next residual.
The backward is rms_norm_backward plus the gradient arriving at x: no IR of its own. Eager on the
CPU, the two run as one kernel (rms_norm_backward_add, the same bits in one pass over memory);
every traced graph keeps the two ops.
"""

import torch

from .. import cpu_kernels
from .._library import define
from ..opdef import (
    IrAttr,
    IrParam,
    Layout,
    OpDefinition,
    compute_dtype,
    check_attr_float,
    check_not_empty,
    check_same_device,
    check_same_shape,
)
from .rms_norm import RMS_NORM, RMS_NORM_BACKWARD, check_gamma, check_rms_norm_backward, rms_norm_math

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
    layout=Layout(-1, per_feature=("gamma",)),
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
    # An output the loss does not use (the last layer's residual x, or y where only x is used) gets
    # None, not a zero tensor: a graph then has no zeros + add, and TorchAir's aclgraph converter
    # cannot compile a backward graph that creates a tensor from nothing (aten.zeros runs for real
    # there, outside the fake mode, and meets the graph's FakeTensors).
    ctx.set_materialize_grads(False)


# rms_norm_backward's dx + dx_residual in one pass: dx rounded to x's dtype as rms_norm_backward
# stores it, then the sum in float (float64 for float64) rounded once, as ATen's add_ computes it.
_rms_norm_backward_add = cpu_kernels.fused_kernel(
    RMS_NORM_BACKWARD, check_rms_norm_backward, "rms_norm_backward_add", "Tensor dx_residual"
)


def _fusable(dy, x, rstd, gamma, dx_residual) -> bool:
    """Whether this backward is a plain eager CPU call, which rms_norm_backward_add may serve.

    Not while anything records the ops instead: Dynamo (torch.compile, compiled autograd's
    backward), a TorchDispatchMode (AOT autograd, make_fx, FakeTensorMode, FunctionalTensorMode)
    or a tensor subclass (FakeTensor, FunctionalTensor): those graphs keep rms_norm_backward + add,
    which TorchAir maps to GE. Not in grad mode (create_graph): a double backward differentiates
    the add, and the fused kernel has no derivative. And dx_residual as the kernel reads it: x's
    shape and dtype, contiguous (ATen's add_ reads an expanded or strided one without the copy the
    kernel would need), its memory holding its values (not a zero tensor nor a negative view)."""
    return (
        not torch.compiler.is_compiling()
        and not torch.is_grad_enabled()
        and torch._C._len_torch_dispatch_stack() == 0
        and all(type(t) is torch.Tensor and t.device.type == "cpu" and t.layout == torch.strided
                for t in (dy, x, rstd, gamma, dx_residual))
        and dx_residual.shape == x.shape
        and dx_residual.dtype == x.dtype
        and dx_residual.is_contiguous()
        and not dx_residual.is_neg()
        and not dx_residual._is_zerotensor()
    )


def _backward(ctx, dy, _drstd, dx_residual):
    x, rstd, gamma = ctx.saved_tensors
    if dy is None:  # only the residual x reaches the loss
        return dx_residual, dx_residual, None, None
    # x reaches the loss through y and, as the next residual, directly: dx is the sum of both.
    if dx_residual is not None and _fusable(dy, x, rstd, gamma, dx_residual):
        dx, dgamma = _rms_norm_backward_add(dy, x, rstd, gamma, dx_residual)
    else:
        dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma)
        if dx_residual is not None:
            # In place: dx is the kernel's fresh output, and a new tensor would cost another x-sized
            # allocation (page faults when large).
            dx.add_(dx_residual)
    return dx, dx, dgamma, None


torch.library.register_autograd(ADD_RMS_NORM.qualname, _backward, setup_context=_setup_context)
