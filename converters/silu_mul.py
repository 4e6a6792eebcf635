"""TorchAir converters: airfuse::silu_mul -> AirfuseSiluMul, silu_mul_backward -> AirfuseSiluMulGrad."""

import torch
from torchair import register_fx_node_ge_converter

from airfuse.ops.silu_mul import SILU_MUL, SILU_MUL_BACKWARD

from ._emit import emit_ir


@register_fx_node_ge_converter(torch.ops.airfuse.silu_mul.default)
def convert_silu_mul(a, b):
    return emit_ir(SILU_MUL, inputs={"a": a, "b": b}, attrs={})


@register_fx_node_ge_converter(torch.ops.airfuse.silu_mul_backward.default)
def convert_silu_mul_backward(dy, a, b):
    return emit_ir(SILU_MUL_BACKWARD, inputs={"dy": dy, "a": a, "b": b}, attrs={})
