"""Small models for graph-mode numerics: written out the way LLM code writes them, no dependencies.

``LlamaBlock`` is one LLaMA decoder layer (RMSNorm written out, rotate-half RoPE, grouped-query
attention as matmul + causal mask + softmax, SiLU-gated MLP); ``rms_norm="airfuse"`` swaps its
RMSNorm for ``torch.ops.airfuse.rms_norm``, ``rope="airfuse"`` its RoPE on q and k for
``torch.ops.airfuse.rope``. ``Gpt2Mlp`` is GPT-2's MLP with tanh GELU (``gelu="airfuse"``:
``torch.ops.airfuse.gelu``) and ``Elementwise`` a plain pointwise graph.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class RmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, fused=False):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.eps = eps
        self.fused = fused

    def forward(self, x):
        if self.fused:
            return torch.ops.airfuse.rms_norm(x, self.weight, self.eps)[0]
        # As LLaMA writes it: statistics in float32, the product back in the input dtype.
        xf = x.to(torch.float32)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(seq_len, head_dim, dtype, base=10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def _fused(model, name, choice):
    if choice not in ("unfused", "airfuse"):
        raise ValueError(f"{model}: {name} must be 'unfused' or 'airfuse', got {choice!r}")
    return choice == "airfuse"


class LlamaBlock(nn.Module):
    def __init__(self, hidden=64, heads=4, kv_heads=2, intermediate=128, rms_norm="unfused", rope="unfused"):
        super().__init__()
        fused = _fused("LlamaBlock", "rms_norm", rms_norm)
        self.fused_rope = _fused("LlamaBlock", "rope", rope)
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.input_norm = RmsNorm(hidden, fused=fused)
        self.post_norm = RmsNorm(hidden, fused=fused)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def attention(self, x, cos, sin):
        batch, seq, _ = x.shape
        q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.fused_rope:
            # airfuse.rope takes tables of q's rank: [S, D] broadcast over batch and heads.
            cos, sin = cos[None, None], sin[None, None]
            q = torch.ops.airfuse.rope(q, cos, sin, "half")
            k = torch.ops.airfuse.rope(k, cos, sin, "half")
        else:
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        groups = self.heads // self.kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        causal = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = (probs @ v).transpose(1, 2).reshape(batch, seq, -1)
        return self.o_proj(out)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.input_norm(x), cos, sin)
        h = self.post_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Gpt2Mlp(nn.Module):
    def __init__(self, hidden=64, intermediate=256, gelu="unfused"):
        super().__init__()
        self.c_fc = nn.Linear(hidden, intermediate)
        self.c_proj = nn.Linear(intermediate, hidden)
        self.fused_gelu = _fused("Gpt2Mlp", "gelu", gelu)

    def forward(self, x):
        h = self.c_fc(x)
        h = torch.ops.airfuse.gelu(h, "tanh") if self.fused_gelu else F.gelu(h, approximate="tanh")
        return self.c_proj(h)


class Elementwise(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        y = torch.sigmoid(x) * self.scale + x.exp() / (x.abs() + 1)
        return torch.relu(y - 0.5) - torch.tanh(x) * 2
