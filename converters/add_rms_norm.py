"""TorchAir converter: airfuse::add_rms_norm -> AirfuseAddRmsNorm."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.add_rms_norm import ADD_RMS_NORM

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.add_rms_norm.default)
def convert_add_rms_norm(x1, x2, gamma, epsilon=1e-6):
    return emit_ir(ADD_RMS_NORM, inputs={"x1": x1, "x2": x2, "gamma": gamma}, attrs={"epsilon": epsilon})
