"""TorchAir converter: airfuse::add -> AirfuseAdd."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.add import ADD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.add.default)
def convert_add(x, y):
    return emit_ir(ADD, inputs={"x": x, "y": y}, attrs={})
