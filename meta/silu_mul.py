"""Fake (meta) implementations of silu_mul and silu_mul_backward: the eager checks, symbolic sizes only."""

import torch

from airfuse.ops.silu_mul import SILU_MUL, SILU_MUL_BACKWARD, check_silu_mul, check_silu_mul_backward


@torch.library.register_fake(SILU_MUL.qualname)
def silu_mul_fake(a, b):
    combo = check_silu_mul(a, b)
    return a.new_empty(a.shape, dtype=combo["y"])


@torch.library.register_fake(SILU_MUL_BACKWARD.qualname)
def silu_mul_backward_fake(dy, a, b):
    combo = check_silu_mul_backward(dy, a, b)
    return a.new_empty(a.shape, dtype=combo["da"]), b.new_empty(b.shape, dtype=combo["db"])
