"""Fake (meta) implementations of gelu and gelu_backward: same checks as the CPU kernels,
symbolic sizes only."""

import torch

from airfuse.ops.gelu import GELU, GELU_BACKWARD, check_gelu, check_gelu_backward


@torch.library.register_fake(GELU.qualname)
def gelu_fake(x, approximate="tanh"):
    combo = check_gelu(x, approximate)
    return x.new_empty(x.shape, dtype=combo["y"])


@torch.library.register_fake(GELU_BACKWARD.qualname)
def gelu_backward_fake(dy, x, approximate="tanh"):
    combo = check_gelu_backward(dy, x, approximate)
    return x.new_empty(x.shape, dtype=combo["dx"])
