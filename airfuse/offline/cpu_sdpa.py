"""SDPA on CPU tensors as ops TorchAir converts: the decompositions applied offline.

Dynamo traces ``F.scaled_dot_product_attention`` on CPU tensors to
``aten._scaled_dot_product_flash_attention_for_cpu`` and, in a training graph, its backward; TorchAir
has converters for neither (on an NPU host torch_npu routes SDPA to its own kernels instead).
torch decomposes the forward (``torch._decomp``) into the math attention, whose second output is
the attention probabilities, not the log-sum-exp the backward op receives. So the backward here
recomputes the probabilities from query, key and mask and uses neither ``out`` nor ``logsumexp``.
"""

import math

import torch
from torch._decomp import get_decompositions

aten = torch.ops.aten


def scaled_dot_product_flash_attention_for_cpu_backward(
    grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None, scale=None
):
    """Gradients of softmax(q k^T * scale + mask) v with respect to q, k and v; key/value may have
    fewer heads than query (grouped-query attention), as in the forward op."""
    torch._check(dropout_p == 0.0, lambda: f"SDPA backward offline: dropout_p must be 0, got {dropout_p}")
    groups = query.size(1) // key.size(1)
    k = key.repeat_interleave(groups, 1) if groups > 1 else key
    v = value.repeat_interleave(groups, 1) if groups > 1 else value
    scale = scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    scores = query @ k.transpose(-2, -1) * scale
    if is_causal:
        causal = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    probs = aten._safe_softmax(scores, -1)  # as the forward: rows masked everywhere are zeros, not NaN
    grad_value = probs.transpose(-2, -1) @ grad_out
    grad_probs = grad_out @ v.transpose(-2, -1)
    grad_scores = probs * (grad_probs - (grad_probs * probs).sum(-1, keepdim=True))
    grad_query = grad_scores @ k * scale
    grad_key = grad_scores.transpose(-2, -1) @ query * scale
    if groups > 1:
        grad_key = grad_key.unflatten(1, (key.size(1), groups)).sum(2)
        grad_value = grad_value.unflatten(1, (value.size(1), groups)).sum(2)
    return grad_query, grad_key, grad_value


def decompositions() -> dict:
    table = get_decompositions([aten._scaled_dot_product_flash_attention_for_cpu])
    table[aten._scaled_dot_product_flash_attention_for_cpu_backward.default] = scaled_dot_product_flash_attention_for_cpu_backward
    return table
