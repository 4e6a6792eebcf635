"""TorchAir converters: airfuse::swiglu -> AirfuseSwiglu, swiglu_backward -> AirfuseSwigluGrad."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.swiglu import SWIGLU, SWIGLU_BACKWARD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.swiglu.default)
def convert_swiglu(x, dim=-1):
    return emit_ir(SWIGLU, inputs={"x": x}, attrs={"dim": dim})


@register_fx_node_ge_converter(torch.ops.airfuse.swiglu_backward.default)
def convert_swiglu_backward(dy, x, dim=-1):
    return emit_ir(SWIGLU_BACKWARD, inputs={"dy": dy, "x": x}, attrs={"dim": dim})
