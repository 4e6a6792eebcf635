"""TorchAir converters: airfuse::rope -> AirfuseRope, rope_backward -> AirfuseRopeGrad."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.rope import ROPE, ROPE_BACKWARD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.rope.default)
def convert_rope(x, cos, sin, mode="half"):
    return emit_ir(ROPE, inputs={"x": x, "cos": cos, "sin": sin}, attrs={"mode": mode})


@register_fx_node_ge_converter(torch.ops.airfuse.rope_backward.default)
def convert_rope_backward(dy, cos, sin, mode="half"):
    return emit_ir(ROPE_BACKWARD, inputs={"dy": dy, "cos": cos, "sin": sin}, attrs={"mode": mode})
