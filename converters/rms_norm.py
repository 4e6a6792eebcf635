"""TorchAir converters: airfuse::rms_norm -> AirfuseRmsNorm, rms_norm_backward -> AirfuseRmsNormGrad."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.rms_norm import RMS_NORM, RMS_NORM_BACKWARD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.rms_norm.default)
def convert_rms_norm(x, gamma, epsilon=1e-6):
    return emit_ir(RMS_NORM, inputs={"x": x, "gamma": gamma}, attrs={"epsilon": epsilon})


@register_fx_node_ge_converter(torch.ops.airfuse.rms_norm_backward.default)
def convert_rms_norm_backward(dy, x, rstd, gamma):
    return emit_ir(RMS_NORM_BACKWARD, inputs={"dy": dy, "x": x, "rstd": rstd, "gamma": gamma}, attrs={})
