"""The forwards ``airfuse.patch`` gives Hugging Face modules: the same computation through airfuse ops.

Each reads the module's own parameters and attributes, so a patched module keeps its state dict.
"""

import torch

airfuse = torch.ops.airfuse


def _rms_norm_output(x, gamma, epsilon, out_dtype):
    y = airfuse.rms_norm(x, gamma, epsilon)[0]
    # airfuse's y is in x's dtype; the Llama form returns weight * x in their promoted dtype.
    return y if y.dtype == out_dtype else y.to(out_dtype)


def llama_rms_norm_forward(self, hidden_states):
    """``weight * (x * rstd)`` with the epsilon in ``variance_epsilon`` (Llama, Mistral, Qwen2/3, Phi-3).

    Hugging Face rounds ``x * rstd`` to x's dtype before multiplying by the weight; airfuse rounds
    once, at the end, so half-precision outputs differ by about one rounding of x's dtype."""
    out_dtype = torch.promote_types(hidden_states.dtype, self.weight.dtype)
    return _rms_norm_output(hidden_states, self.weight, self.variance_epsilon, out_dtype)


def olmo_rms_norm_forward(self, hidden_states):
    """``(weight * (x * rstd)).to(x's dtype)`` in float32, rounded once (OLMo 2/3, Helium): airfuse's
    own rounding, so it matches in every dtype."""
    return airfuse.rms_norm(hidden_states, self.weight, self.variance_epsilon)[0]


def gemma_rms_norm_forward(self, x):
    """``x * rstd * (1 + weight)`` in float32, rounded once to x's dtype, epsilon in ``eps`` (Gemma 1-3)."""
    return airfuse.rms_norm(x, 1.0 + self.weight.float(), self.eps)[0]


def _rope_rotary_part(x, cos, sin, mode="half"):
    """RoPE on the first ``cos.shape[-1]`` features, the rest passed through (Phi-3's and GLM-4's
    partial rotary)."""
    rotary_dim = cos.shape[-1]
    if rotary_dim == x.shape[-1]:
        return airfuse.rope(x, cos, sin, mode)
    rotated = airfuse.rope(x[..., :rotary_dim], cos, sin, mode)
    return torch.cat([rotated, x[..., rotary_dim:]], dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Hugging Face's ``apply_rotary_pos_emb`` (rotate-half layout) through ``airfuse.rope``."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return _rope_rotary_part(q, cos, sin), _rope_rotary_part(k, cos, sin)


def apply_interleaved_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """The GLM-style ``apply_rotary_pos_emb`` (GLM-4, Ernie 4.5, Helium): adjacent pairs rotated,
    each frequency of the first half of ``cos``/``sin`` used for one pair, through
    ``airfuse.rope(mode="interleave")``; computed in float32 and rounded once."""
    half = cos.shape[-1] // 2
    cos = cos.unsqueeze(unsqueeze_dim)[..., :half].repeat_interleave(2, dim=-1)
    sin = sin.unsqueeze(unsqueeze_dim)[..., :half].repeat_interleave(2, dim=-1)
    return _rope_rotary_part(q, cos, sin, "interleave"), _rope_rotary_part(k, cos, sin, "interleave")


def experts_swiglu_gate(self, gate_up_out):
    """transformers' MoE experts' ``_apply_gate``: ``silu(gate) * up`` of the two halves of the
    concatenated gate/up projection, per routed token (Mixtral, Qwen2/3-MoE, ...)."""
    return airfuse.swiglu(gate_up_out, -1)


def silu_gated_mlp_forward(self, x):
    """``down(silu(gate(x)) * up(x))`` with separate gate/up projections (Llama, Mistral, Qwen2/3)."""
    return self.down_proj(airfuse.silu_mul(self.gate_proj(x), self.up_proj(x)))


def silu_merged_mlp_forward(self, hidden_states):
    """``down(silu(gate) * up)`` where gate and up are the halves of one projection (Phi-3)."""
    return self.down_proj(airfuse.swiglu(self.gate_up_proj(hidden_states), -1))


def tanh_gelu_forward(self, x):
    """The tanh approximation of GELU (GPT-2's ``gelu_new``, Gemma's ``gelu_pytorch_tanh``)."""
    return airfuse.gelu(x, "tanh")
