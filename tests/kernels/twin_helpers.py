"""Shared helpers for the twin tests: tolerances per output dtype and input makers."""

import torch

import airfuse  # noqa: F401  (registers torch.ops.airfuse.*)

# One rounding step of the output dtype (the twin and the CPU kernels both compute in float32).
TOL = {
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}

RMS_NORM_COMBOS = [
    (torch.float32, torch.float32),
    (torch.float16, torch.float16),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.bfloat16),
    (torch.bfloat16, torch.float32),
]
SHAPES = [(1, 1), (3, 7), (2, 4097), (8, 4096), (4, 8192), (1, 65536)]


def close(actual, expected, *, scale=None):
    """assert_close with the output dtype's tolerance; ``scale`` widens atol for sums over rows."""
    tol = dict(TOL[expected.dtype])
    if scale is not None:
        tol["atol"] = tol["atol"] * max(1.0, scale)
    torch.testing.assert_close(actual, expected, **tol)


def generator():
    return torch.Generator().manual_seed(4)


def randn(shape, dtype, gen):
    return torch.randn(shape, generator=gen).to(dtype)
