"""TorchAir converters: airfuse::gelu -> AirfuseGelu, gelu_backward -> AirfuseGeluGrad."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.gelu import GELU, GELU_BACKWARD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.gelu.default)
def convert_gelu(x, approximate="tanh"):
    return emit_ir(GELU, inputs={"x": x}, attrs={"approximate": approximate})


@register_fx_node_ge_converter(torch.ops.airfuse.gelu_backward.default)
def convert_gelu_backward(dy, x, approximate="tanh"):
    return emit_ir(GELU_BACKWARD, inputs={"dy": dy, "x": x}, attrs={"approximate": approximate})
