"""The offline SDPA backward decomposition against torch's autograd of F.scaled_dot_product_attention."""

import pytest
import torch
import torch.nn.functional as F

from airfuse.offline.cpu_sdpa import scaled_dot_product_flash_attention_for_cpu_backward


@pytest.mark.parametrize("kv_heads", [4, 2])
@pytest.mark.parametrize("mask", ["none", "causal", "bool", "float"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_backward_equals_autograd(kv_heads, mask, scale):
    q = torch.randn(2, 4, 5, 8, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, kv_heads, 7, 8, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, kv_heads, 7, 8, dtype=torch.float64, requires_grad=True)
    attn_mask = {"bool": torch.rand(5, 7) > 0.3, "float": torch.randn(2, 1, 5, 7, dtype=torch.float64)}.get(mask)
    if mask == "bool":
        attn_mask[:, 0] = True  # no row masked everywhere
    is_causal = mask == "causal"
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal=is_causal, scale=scale, enable_gqa=kv_heads != 4)
    grad_out = torch.randn_like(out)
    expected = torch.autograd.grad(out, (q, k, v), grad_out)
    actual = scaled_dot_product_flash_attention_for_cpu_backward(
        grad_out, q.detach(), k.detach(), v.detach(), out.detach(), None, 0.0, is_causal, attn_mask=attn_mask, scale=scale
    )
    for name, a, e in zip("qkv", actual, expected, strict=True):
        assert a.shape == e.shape, name
        torch.testing.assert_close(a, e, msg=lambda m, name=name: f"grad {name}: {m}")


def test_backward_refuses_dropout():
    q = torch.randn(1, 1, 2, 4)
    with pytest.raises(RuntimeError, match="dropout_p must be 0"):
        scaled_dot_product_flash_attention_for_cpu_backward(q, q, q, q, q, None, 0.1, False)
