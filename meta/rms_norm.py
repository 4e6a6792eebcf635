"""Fake (meta) implementations of rms_norm and rms_norm_backward.

They run the same input checks as the CPU kernels, so bad input fails while Dynamo traces, and
they only use symbolic sizes (no int() on a size), so dynamic shapes never specialize.
"""

import torch

from airfuse.ops.rms_norm import RMS_NORM, RMS_NORM_BACKWARD, check_rms_norm, check_rms_norm_backward


@torch.library.register_fake(RMS_NORM.qualname)
def rms_norm_fake(x, gamma, epsilon=1e-6):
    combo = check_rms_norm(x, gamma, epsilon)
    y = x.new_empty(x.shape, dtype=combo["y"])
    rstd = x.new_empty((*x.shape[:-1], 1), dtype=combo["rstd"])
    return y, rstd


@torch.library.register_fake(RMS_NORM_BACKWARD.qualname)
def rms_norm_backward_fake(dy, x, rstd, gamma):
    combo = check_rms_norm_backward(dy, x, rstd, gamma)
    return x.new_empty(x.shape, dtype=combo["dx"]), gamma.new_empty(gamma.shape, dtype=combo["dgamma"])
