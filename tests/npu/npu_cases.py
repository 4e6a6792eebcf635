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

# One rounding step of the output dtype: the kernels and the CPU kernels both accumulate in float32.
TOL = {
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}

# Small, 3-D, and rows too long for the unified buffer (the kernels split them).
LONG_ROWS = (2, 65536)
SHAPES = [(3, 8), (2, 5, 130), LONG_ROWS]
# Except rope, which keeps a whole row in UB (head dims are a few hundred at most): op_host's
# tiling refuses longer rows, so phase 1 fails with its status instead of running.
WHOLE_ROW_OPS = {"rope", "rope_backward"}


def input_shape(op: OpDefinition, name: str, shape: tuple) -> tuple:
    """Input ``name``'s shape for a case of ``shape`` (the rows and last dim the op works on):
    per-row statistics and per-column weights; swiglu's x holds both halves along its default dim
    -1 (its dy is one half); rope rotates pairs, so its last dim is even, and its cos/sin broadcast
    over the first dim. The rest (add_rms_norm's x1 and x2 among them) take ``shape``."""
    if op.name.startswith("rope"):
        shape = (*shape[:-1], shape[-1] + shape[-1] % 2)
        if name in ("cos", "sin"):
            return (1, *shape[1:])
    if op.name.startswith("swiglu") and name == "x":
        return (*shape[:-1], 2 * shape[-1])
    return {"gamma": (shape[-1],), "rstd": (*shape[:-1], 1)}.get(name, shape)


def sample_inputs(op: OpDefinition, combo: dict, shape: tuple) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for p in op.inputs:
        t = torch.randn(input_shape(op, p.name, shape), generator=gen)
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
