"""LLaMA decoder layers written as fused-kernel inference code writes them.

The residual stream is carried beside the normalised activations: every residual add that feeds
an RMSNorm is one ``add_rms_norm`` (its x output is the next residual), and the gated MLP is one
``silu_mul`` (separate gate/up projections) or one ``swiglu`` (a merged gate_up projection, here
the two weights concatenated). With ``fused=False`` the same parameters run the plain layers of
``models.LlamaBlock``, so both forms can be compared number for number.
"""

import torch
import torch.nn.functional as F
from torch import nn

from models import LlamaBlock, RmsNorm

MLPS = ("silu_mul", "swiglu")


class LlamaLayers(nn.Module):
    def __init__(self, layers=2, hidden=64, mlp="silu_mul", fused=True):
        super().__init__()
        if mlp not in MLPS:
            raise ValueError(f"LlamaLayers: mlp must be one of {MLPS}, got {mlp!r}")
        self.mlp, self.fused = mlp, fused
        self.blocks = nn.ModuleList(LlamaBlock(hidden=hidden) for _ in range(layers))
        self.norm = RmsNorm(hidden)

    def forward(self, x, cos, sin):
        if not self.fused:
            for block in self.blocks:
                x = block(x, cos, sin)
            return self.norm(x)
        first = self.blocks[0].input_norm
        h, _ = torch.ops.airfuse.rms_norm(x, first.weight, first.eps)
        residual = x
        next_norms = [block.input_norm for block in self.blocks[1:]] + [self.norm]
        for block, next_norm in zip(self.blocks, next_norms, strict=True):
            attention = block.attention(h, cos, sin)
            h, _, residual = torch.ops.airfuse.add_rms_norm(residual, attention, block.post_norm.weight, block.post_norm.eps)
            h, _, residual = torch.ops.airfuse.add_rms_norm(residual, self._mlp(block, h), next_norm.weight, next_norm.eps)
        return h

    def _mlp(self, block, h):
        if self.mlp == "silu_mul":
            gated = torch.ops.airfuse.silu_mul(block.gate_proj(h), block.up_proj(h))
        else:
            gate_up = F.linear(h, torch.cat([block.gate_proj.weight, block.up_proj.weight]))
            gated = torch.ops.airfuse.swiglu(gate_up, -1)
        return block.down_proj(gated)
