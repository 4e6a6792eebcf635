"""Shared helpers for the twin tests: tolerances per output dtype, input makers and tiling fields."""

import functools
import re
import struct
from pathlib import Path

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


KERNELS = Path(__file__).resolve().parents[2] / "kernels"
# The header of each tiling kind (airfuse.twin.tiling's kinds, and act's): the struct its kernel reads.
TILING_HEADERS = {"rms_norm": "rms_norm/fwd_resident_tiling.h", "add_rms_norm": "rms_norm/fwd_resident_tiling.h",
                  "rms_norm_chunks": "rms_norm/fwd_chunks_tiling.h", "rms_norm_grad": "rms_norm/grad_rows_tiling.h",
                  "rms_norm_grad_slices": "rms_norm/grad_slices_tiling.h",
                  "add": "add_tiling.h", "act": "act_tiling.h", "rope": "rope_tiling.h"}
_FIELD = re.compile(r"^\s*(uint64_t|uint32_t|float)\s+(\w+)(?:\[(\w+)\])?;", re.M)
_FORMAT = {"uint64_t": "Q", "uint32_t": "I", "float": "f"}


@functools.cache
def tiling_layout(kind):
    """(fields, size) of kind's Airfuse*TilingData as C lays it out: fields maps each name to its
    byte offset and struct format (each field at a multiple of its size, the size a multiple of
    the largest). Read from the header, so tests name fields instead of counting bytes."""
    text = (KERNELS / TILING_HEADERS[kind]).read_text()
    constants = dict(re.findall(r"constexpr uint32_t (\w+) = (\d+);", text))
    body = re.search(r"struct Airfuse\w+TilingData \{(.*?)\n\};", text, re.S).group(1)
    fields, at, widest = {}, 0, 1
    for c_type, name, count in _FIELD.findall(body):
        size, n = struct.calcsize(_FORMAT[c_type]), int(constants.get(count, count or 1))
        at = -(-at // size) * size
        fields[name] = (at, f"<{n}{_FORMAT[c_type]}")
        at, widest = at + n * size, max(widest, size)
    return fields, -(-at // widest) * widest


# rms_norm_grad's tiling key for slices of columns (its tiling then writes the slices' struct).
GRAD_SLICES_KEY = int(re.search(r"kRmsNormGradSlicesKey = (\d+);", (KERNELS / TILING_HEADERS["rms_norm_grad_slices"]).read_text()).group(1))


# rms_norm's and add_rms_norm's tiling keys (twin_helpers reads them where the kernels define them).
_CHUNKS_TILING = (KERNELS / TILING_HEADERS["rms_norm_chunks"]).read_text()
NORM_RESIDENT_KEY = int(re.search(r"kRmsNormResidentKey = (\d+);", (KERNELS / TILING_HEADERS["rms_norm"]).read_text()).group(1))
NORM_RESIDENT_CHUNKS_KEY = int(re.search(r"kRmsNormResidentChunksKey = (\d+);", _CHUNKS_TILING).group(1))
NORM_SPLIT_KEY = int(re.search(r"kRmsNormSplitKey = (\d+);", _CHUNKS_TILING).group(1))


def norm_field(tile, name):
    """Field `name` of the tiling struct rms_norm's or add_rms_norm's tiling wrote (its key says which)."""
    return tiling_field(tile.data, "rms_norm" if tile.tiling_key == NORM_RESIDENT_KEY else "rms_norm_chunks", name)


def slices_field(tile, name):
    """Field `name` of rms_norm_grad's slices struct when its tiling took slices of columns, else 0."""
    return tiling_field(tile.data, "rms_norm_grad_slices", name) if tile.tiling_key == GRAD_SLICES_KEY else 0


def tiling_field(data, kind, name):
    """Field `name` of kind's tiling bytes (a twin.Tiling's data, or raw bytes): a number, or a tuple for an array."""
    at, fmt = tiling_layout(kind)[0][name]
    values = struct.unpack_from(fmt, getattr(data, "raw", data), at)
    return values[0] if len(values) == 1 else values
