"""Fake (meta) implementation of add_rms_norm: the eager checks, symbolic sizes only."""

import torch

from airfuse.ops.add_rms_norm import ADD_RMS_NORM, check_add_rms_norm


@torch.library.register_fake(ADD_RMS_NORM.qualname)
def add_rms_norm_fake(x1, x2, gamma, epsilon=1e-6):
    combo = check_add_rms_norm(x1, x2, gamma, epsilon)
    y = x1.new_empty(x1.shape, dtype=combo["y"])
    rstd = x1.new_empty((*x1.shape[:-1], 1), dtype=combo["rstd"])
    return y, rstd, x1.new_empty(x1.shape, dtype=combo["x"])
