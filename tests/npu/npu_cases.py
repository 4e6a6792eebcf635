"""Inputs for any op of the op definitions, and the comparison of its NPU and CPU results."""

import math
from pathlib import Path

import torch

from airfuse.opdef import OpDefinition
from airfuse.ops import ALL_OPS

# The ops airfuse's CANN package provides (an Ascend C kernel and an OpDef): only these have aclnn
# entry points, on a real NPU as in the emulated vendor library.
KERNELS = Path(__file__).resolve().parents[2] / "kernels"
PACKAGED_OPS = [op for op in ALL_OPS.values() if (KERNELS / f"{op.ir_base_name}.cpp").exists()]
UNPACKAGED_OPS = [op for op in ALL_OPS.values() if op not in PACKAGED_OPS]

# One rounding step of the output dtype: the kernels and the CPU kernels both accumulate in float32.
TOL = {
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}

# Small, 3-D, and rows too long for the unified buffer (the kernels split them).
SHAPES = [(3, 8), (2, 5, 130), (2, 65536)]


def input_shape(name: str, shape: tuple) -> tuple:
    """Shapes by IR input name: per-row statistics and per-column weights; the rest take ``shape``."""
    return {"gamma": (shape[-1],), "rstd": (*shape[:-1], 1)}.get(name, shape)


def sample_inputs(op: OpDefinition, combo: dict, shape: tuple) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for p in op.inputs:
        t = torch.randn(input_shape(p.name, shape), generator=gen)
        if p.name == "rstd":
            t = t.abs() + 0.5  # a reciprocal standard deviation is positive
        out.append(t.to(combo[p.name]))
    return out


def as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def assert_matches_cpu(npu_out, cpu_out, rows: int):
    for actual, expected in zip(as_tuple(npu_out), as_tuple(cpu_out), strict=True):
        assert actual.device.type == "npu"
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        tol = dict(TOL[expected.dtype])
        # A sum over rows (e.g. dgamma) rounds once per partial sum.
        if actual.dim() == 1 and rows > 1:
            tol["atol"] *= math.sqrt(rows)
        torch.testing.assert_close(actual.cpu(), expected, **tol)
