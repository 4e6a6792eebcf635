"""Fake (meta) implementations of rope and rope_backward: same checks as the CPU kernels,
symbolic sizes only."""

import torch

from airfuse.ops.rope import ROPE, ROPE_BACKWARD, check_rope, check_rope_backward


@torch.library.register_fake(ROPE.qualname)
def rope_fake(x, cos, sin, mode="half"):
    combo = check_rope(x, cos, sin, mode)
    return x.new_empty(x.shape, dtype=combo["y"])


@torch.library.register_fake(ROPE_BACKWARD.qualname)
def rope_backward_fake(dy, cos, sin, mode="half"):
    combo = check_rope_backward(dy, cos, sin, mode)
    return dy.new_empty(dy.shape, dtype=combo["dx"])
