"""Fake (meta) implementations of swiglu and swiglu_backward: the eager checks, symbolic sizes only."""

import torch

from airfuse.ops.swiglu import SWIGLU, SWIGLU_BACKWARD, check_swiglu, check_swiglu_backward, halved_shape


@torch.library.register_fake(SWIGLU.qualname)
def swiglu_fake(x, dim=-1):
    combo = check_swiglu(x, dim)
    return x.new_empty(halved_shape(x, dim), dtype=combo["y"])


@torch.library.register_fake(SWIGLU_BACKWARD.qualname)
def swiglu_backward_fake(dy, x, dim=-1):
    combo = check_swiglu_backward(dy, x, dim)
    return x.new_empty(x.shape, dtype=combo["dx"])
