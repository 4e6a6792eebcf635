"""Run airfuse's Ascend C kernels on torch CPU tensors through the CPU twin.

The twin (``twin/``) is a g++ implementation of the Ascend C API subset the kernels in
``kernels/`` use; it enforces the hardware's rules (UB capacity, 32-byte rules, GM bounds,
queue discipline, no bf16 arithmetic) and counts GM bytes. ``make twin`` builds it into
``build/libairfuse_twin.so`` (a source checkout's build directory, ``airfuse.libraries``). Each launch takes its tiling from the shared op_host tiling core,
then runs every block index of block_dim; a broken rule raises :class:`TwinError`.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch

from . import libraries
from .kernel_builds import vendor_twin_name
from .ops import ALL_OPS

DEFAULT_LIB = libraries.build_dir() / "libairfuse_twin.so"
# The vendor-API twin (twin/vendor_api/README.md): the kernels compiled against CANN's real headers
# over airfuse's model of the AI core, built by `make vendor-build` where CANN's open-source tree is
# found. Same C entry points, the cost model's included (one copy of it in both). It holds each chip's builds,
# compiled in that chip's branch of the headers, under kernel_builds.vendor_twin_name.
VENDOR_API_LIB = libraries.vendor_build_dir() / "vendor_api_twin" / "libairfuse_vendor_twin.so"
# AIRFUSE_TWIN=vendor-api makes the vendor-API twin the one launches run on by default (a test file
# written for the home-made twin runs on it unchanged: twin/vendor_api/README.md).
_selected_lib = VENDOR_API_LIB if os.environ.get("AIRFUSE_TWIN") == "vendor-api" else DEFAULT_LIB
DEFAULT_CHIP = "Ascend910B2"
MAX_BLOCK_DIM = 65535  # the largest block_dim a launch takes (CANN's limit)

# ge::DataType codes, as op_host's tiling core takes them.
GE_DTYPE = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 27}
_ERR_LEN = 1024


class TwinError(RuntimeError):
    """A kernel broke a hardware rule on the twin, or the tiling refused the shape."""


@dataclass
class Cost:
    """The twin's modelled time of one launch (twin/README.md, "Cost model"): the launch ends
    with its slowest core; ``pipe_us`` is the time each pipe of the block that ends last spent
    working (not waiting)."""
    us: float
    slowest_block: int
    block_us: float
    pipe_us: dict


@dataclass
class Launch:
    outputs: tuple
    block_dim: int
    bytes_read: int
    bytes_written: int
    workspace_bytes: int
    cost: Cost


class Counts(NamedTuple):
    bytes_read: int
    bytes_written: int
    cost: Cost


def library() -> ctypes.CDLL:
    """The twin library launches run on: the home-made twin, or inside :func:`vendor_api_twin` the vendor-API twin."""
    return _load(_selected_lib)


def on_vendor_api_twin() -> bool:
    """Whether launches run on the vendor-API twin (``AIRFUSE_TWIN=vendor-api``, or inside :func:`vendor_api_twin`)."""
    return _selected_lib == VENDOR_API_LIB


@contextlib.contextmanager
def vendor_api_twin():
    """Launches (and tilings) inside run on the vendor-API twin instead of the home-made one."""
    global _selected_lib
    previous, _selected_lib = _selected_lib, VENDOR_API_LIB
    try:
        yield
    finally:
        _selected_lib = previous


@contextlib.contextmanager
def home_made_twin():
    """Launches (and tilings) inside run on the home-made twin, whichever twin is the default."""
    global _selected_lib
    previous, _selected_lib = _selected_lib, DEFAULT_LIB
    try:
        yield
    finally:
        _selected_lib = previous


def vendor_api_twin_built() -> bool:
    """Whether ``make vendor-build`` built the vendor-API twin here (CANN's open-source tree found;
    with an installed toolkit only it records why not in ``state.txt`` beside the library)."""
    return VENDOR_API_LIB.is_file() and not VENDOR_API_LIB.with_name("state.txt").is_file()


@functools.cache
def _load(path: Path) -> ctypes.CDLL:
    if not path.exists():
        build = "`make vendor-build` (with CANN's open-source tree)" if path == VENDOR_API_LIB else "`make twin`"
        raise TwinError(f"twin library {path} not found; build it with {build}")
    lib = ctypes.CDLL(str(path))
    u32, u64, i32, p = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_void_p
    lib.twin_launch.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, u32, ctypes.c_int, ctypes.POINTER(p),
                                ctypes.POINTER(u64), ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                ctypes.POINTER(u64), ctypes.POINTER(u64), ctypes.c_char_p, ctypes.c_int]
    tail = [p, ctypes.POINTER(u32), ctypes.POINTER(u64), ctypes.POINTER(u32), ctypes.POINTER(u64), ctypes.c_char_p, ctypes.c_int]
    lib.twin_tiling_rms_norm.argtypes = [ctypes.c_char_p, u64, u32, i32, i32, ctypes.c_float, u32, *tail]
    lib.twin_tiling_add_rms_norm.argtypes = [ctypes.c_char_p, u64, u32, i32, i32, ctypes.c_float, u32, *tail]
    lib.twin_tiling_rms_norm_grad.argtypes = [ctypes.c_char_p, u64, u32, i32, i32, u32, *tail]
    lib.twin_tiling_add.argtypes = [ctypes.c_char_p, u64, i32, u32, *tail]
    lib.twin_tiling_act.argtypes = [ctypes.c_char_p, ctypes.c_char_p, u64, u64, i32, u32, u32, *tail]
    lib.twin_tiling_rope.argtypes = [ctypes.c_char_p, ctypes.c_int, i32, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64), i32,
                                     i32, ctypes.c_char_p, u32, *tail]
    lib.twin_tiling_size.argtypes = [ctypes.c_char_p]
    lib.twin_tiling_size.restype = u32
    lib.twin_set_tiling_key.argtypes = [u64]
    lib.twin_sync_sites.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.twin_disable_sync_site.argtypes = [ctypes.c_char_p]
    if path == VENDOR_API_LIB:
        lib.twin_kernel_chip.argtypes = [ctypes.c_char_p]
        lib.twin_kernel_chip.restype = ctypes.c_char_p
    lib.twin_last_cost.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_int]
    cp = ctypes.POINTER(ctypes.c_char_p)
    lib.twin_cost_row.argtypes = [ctypes.c_int, cp, cp, ctypes.POINTER(ctypes.c_double), cp, ctypes.POINTER(ctypes.c_int), cp]
    return lib


@dataclass
class Tiling:
    data: ctypes.Array
    block_dim: int
    workspace_bytes: int  # the chip's system workspace, then the kernel's (as aclnnXxxGetWorkspaceSize)
    tiling_key: int = 0  # op_host's SetTilingKey: which of the kernel's TILING_KEY_IS branches runs


# The arguments of each twin_tiling_<kind> after the SoC name (twin/src/capi.cpp), named as the
# caller knows them: errors name the argument they refuse.
TILING_ARGUMENTS = {
    "rms_norm": ("rows", "cols", "x_dtype", "gamma_dtype", "epsilon", "block_dim"),
    "add_rms_norm": ("rows", "cols", "x_dtype", "gamma_dtype", "epsilon", "block_dim"),
    "rms_norm_grad": ("rows", "cols", "x_dtype", "gamma_dtype", "block_dim"),
    "add": ("elems", "dtype", "block_dim"),
    "act": ("op", "rows", "cols", "dtype", "approximate", "block_dim"),
    "rope": ("backward", "rank", "x_shape", "table_shape", "x_dtype", "table_dtype", "mode", "block_dim"),
}


def tiling(kind: str, chip: str, *args) -> Tiling:
    """The op_host tiling core's answer for op ``kind`` (rms_norm, rms_norm_grad, add_rms_norm, add, rope),
    given the arguments TILING_ARGUMENTS names."""
    lib = library()
    data = ctypes.create_string_buffer(lib.twin_tiling_size(kind.encode()))
    block_dim, workspace, size, key = ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint32(), ctypes.c_uint64()
    err = ctypes.create_string_buffer(_ERR_LEN)
    fn = getattr(lib, f"twin_tiling_{kind}")
    _check_fits(f"twin tiling {kind}", TILING_ARGUMENTS[kind], args, fn.argtypes[1 : 1 + len(args)])
    if fn(chip.encode(), *args, data, *map(ctypes.byref, (block_dim, workspace, size, key)), err, _ERR_LEN):
        raise TwinError(err.value.decode())
    return _tiling_of(data, size.value, block_dim.value, workspace.value, key.value)


def _tiling_of(data, size: int, block_dim: int, workspace: int, key: int) -> Tiling:
    """The tiling struct written (``size`` bytes of ``data``: an op with a struct per strategy writes its strategy's)."""
    written = ctypes.create_string_buffer(size)
    ctypes.memmove(written, data, size)
    return Tiling(written, block_dim, workspace, key)


_INT_RANGE = {ctypes.c_uint32: (0, 2**32 - 1), ctypes.c_uint64: (0, 2**64 - 1), ctypes.c_int32: (-(2**31), 2**31 - 1)}


def _check_fits(what: str, names, values, c_types):
    """ctypes wraps an int that does not fit its C type (2**32 + 5 becomes 5): refuse it instead."""
    for name, value, c_type in zip(names, values, c_types, strict=True):
        low, high = _INT_RANGE.get(c_type, (None, None))
        if low is not None and not (_is_integer(value) and low <= operator.index(value) <= high):
            raise TwinError(f"{what}: {name} is {value!r}, outside the {c_type.__name__} range {low}..{high}")


def _is_integer(value) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _dtype_suffix(*dtypes) -> str:
    return "_".join(str(d).removeprefix("torch.") for d in dtypes)


def launch(symbol: str, gm: list[tuple[str, torch.Tensor | None]], tile: Tiling, *, chip: str = DEFAULT_CHIP,
           count_only: bool = False, fn_lib: ctypes.CDLL | None = None) -> Counts:
    """Run kernel ``symbol`` over every block of ``tile.block_dim``; ``gm`` are its GM parameters
    in order (name, tensor or None) without the tiling, which is appended. Returns the GM bytes
    read and written and the modelled time."""
    lib = library()
    symbol = _entry_symbol(lib, symbol, chip)
    try:
        fn = ctypes.cast(getattr(fn_lib or lib, symbol), ctypes.c_void_p)
    except AttributeError:
        raise TwinError(f"the twin has no kernel {symbol}") from None
    if not 1 <= tile.block_dim <= MAX_BLOCK_DIM:
        raise TwinError(f"{symbol}: block_dim {tile.block_dim} outside 1..{MAX_BLOCK_DIM}")
    for name, t in gm:
        # The kernel reads numel() elements from data_ptr(): only a dense tensor holds them there.
        if t is not None and not t.is_contiguous():
            raise TwinError(f"{symbol}: GM argument {name} must be contiguous (shape {list(t.shape)}, strides {list(t.stride())})")
    names = [n for n, _ in gm] + ["tiling"]
    ptrs = [t.data_ptr() if t is not None and t.numel() else None for _, t in gm] + [ctypes.addressof(tile.data)]
    sizes = [t.numel() * t.element_size() if t is not None else 0 for _, t in gm] + [ctypes.sizeof(tile.data)]
    n = len(names)
    read, written = ctypes.c_uint64(), ctypes.c_uint64()
    err = ctypes.create_string_buffer(_ERR_LEN)
    lib.twin_set_tiling_key(tile.tiling_key)
    rc = lib.twin_launch(fn, symbol.encode(), chip.encode(), tile.block_dim, n, (ctypes.c_void_p * n)(*ptrs),
                         (ctypes.c_uint64 * n)(*sizes), (ctypes.c_char_p * n)(*[s.encode() for s in names]),
                         int(count_only), ctypes.byref(read), ctypes.byref(written), err, _ERR_LEN)
    if rc:
        raise TwinError(err.value.decode())
    return Counts(read.value, written.value, _last_cost(lib))


def _entry_symbol(lib: ctypes.CDLL, symbol: str, chip: str) -> str:
    """The entry symbol of build ``symbol`` for ``chip`` in ``lib``: the home-made twin runs one build
    for every chip; the vendor-API twin holds each chip's own, named by kernel_builds.vendor_twin_name
    after the compute unit the library gives the chip."""
    if not hasattr(lib, "twin_kernel_chip"):
        return symbol
    compute_unit = lib.twin_kernel_chip(chip.encode())
    if compute_unit is None:
        raise TwinError(f"{symbol}: unknown chip {chip!r}")
    return vendor_twin_name(symbol, compute_unit.decode())


class CostParameter(NamedTuple):
    chip: str  # a SoC name, or the family ("910B", "310P") whose SoCs share the figure
    name: str
    value: float
    unit: str
    assumed: bool  # no documented figure found: a guess, to be replaced by a measurement
    source: str


def cost_parameters() -> list[CostParameter]:
    """The cost model's parameter table (twin/src/cost.cpp), with the source of every number."""
    lib = library()
    rows = []
    chip, name, unit, source = (ctypes.c_char_p() for _ in range(4))
    value, assumed = ctypes.c_double(), ctypes.c_int()
    while lib.twin_cost_row(len(rows), *(ctypes.byref(v) for v in (chip, name, value, unit, assumed, source))):
        rows.append(CostParameter(chip.value.decode(), name.value.decode(), value.value, unit.value.decode(), bool(assumed.value),
                                  source.value.decode()))
    return rows


def _last_cost(lib) -> Cost:
    out = (ctypes.c_double * 7)()
    lib.twin_last_cost(out, 7)
    pipes = dict(zip(("S", "V", "MTE2", "MTE3"), out[3:7]))
    return Cost(out[0], int(out[1]), out[2], pipes)


def has_kernel(op_name: str) -> bool:
    """Whether op ``op_name`` runs on the twin, i.e. has a launcher here named after it (an op
    whose Ascend C kernel is not written yet has none)."""
    return op_name in ALL_OPS and callable(globals().get(op_name))


def sync_sites() -> list[str]:
    """The SetFlag and PipeBarrier call sites ("file:line") run since the last call."""
    lib = library()
    need = lib.twin_sync_sites(None, 0)
    out = ctypes.create_string_buffer(need + 1)
    lib.twin_sync_sites(out, need + 1)
    return out.value.decode().split()


@contextlib.contextmanager
def sync_site_removed(site: str):
    """Launches inside run as if the SetFlag (with its WaitFlag) or PipeBarrier at ``site``
    ("file:line", as :func:`sync_sites` names it) were deleted from the source."""
    lib = library()
    lib.twin_disable_sync_site(site.encode())
    try:
        yield
    finally:
        lib.twin_disable_sync_site(b"")


def _contiguous(op, tensors: dict):
    for name, t in tensors.items():
        torch._check(t.device.type == "cpu", lambda: f"{op.public_name}: {name} must be a CPU tensor for the twin")
    return {k: v.contiguous() for k, v in tensors.items()}


def _empty(shape, dtype):
    # Outputs are left uninitialised: count-only runs never touch them, so big shapes cost no memory.
    return torch.empty(shape, dtype=dtype)


def _workspace(nbytes: int):
    return torch.empty(nbytes, dtype=torch.uint8) if nbytes else None


def rms_norm(x, gamma, epsilon=1e-6, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.rms_norm import check_rms_norm

    op = ALL_OPS["rms_norm"]
    check_rms_norm(x, gamma, epsilon)
    combo = op.check_input_dtypes({"x": x, "gamma": gamma}, reference=False)
    t = _contiguous(op, {"x": x, "gamma": gamma})
    rows, cols = math.prod(x.shape[:-1]), x.shape[-1]
    tile = tiling("rms_norm", chip, rows, cols, GE_DTYPE[x.dtype], GE_DTYPE[gamma.dtype], epsilon, block_dim)
    y = _empty(x.shape, combo["y"])
    rstd = _empty((*x.shape[:-1], 1), combo["rstd"])
    ws = _workspace(tile.workspace_bytes)
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(x.dtype, gamma.dtype)}"
    gm = [("x", t["x"]), ("gamma", t["gamma"]), ("y", y), ("rstd", rstd), ("workspace", ws)]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch((y, rstd), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


def add_rms_norm(x1, x2, gamma, epsilon=1e-6, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.add_rms_norm import check_add_rms_norm

    op = ALL_OPS["add_rms_norm"]
    check_add_rms_norm(x1, x2, gamma, epsilon)
    combo = op.check_input_dtypes({"x1": x1, "x2": x2, "gamma": gamma}, reference=False)
    t = _contiguous(op, {"x1": x1, "x2": x2, "gamma": gamma})
    rows, cols = math.prod(x1.shape[:-1]), x1.shape[-1]
    tile = tiling("add_rms_norm", chip, rows, cols, GE_DTYPE[x1.dtype], GE_DTYPE[gamma.dtype], epsilon, block_dim)
    y, x = _empty(x1.shape, combo["y"]), _empty(x1.shape, combo["x"])
    rstd = _empty((*x1.shape[:-1], 1), combo["rstd"])
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(x1.dtype, gamma.dtype)}"
    gm = [("x1", t["x1"]), ("x2", t["x2"]), ("gamma", t["gamma"]), ("y", y), ("rstd", rstd), ("x", x),
          ("workspace", _workspace(tile.workspace_bytes))]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch((y, rstd, x), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


def rms_norm_backward(dy, x, rstd, gamma, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.rms_norm import check_rms_norm_backward

    op = ALL_OPS["rms_norm_backward"]
    check_rms_norm_backward(dy, x, rstd, gamma)
    combo = op.check_input_dtypes({"dy": dy, "x": x, "rstd": rstd, "gamma": gamma}, reference=False)
    t = _contiguous(op, {"dy": dy, "x": x, "rstd": rstd, "gamma": gamma})
    rows, cols = math.prod(x.shape[:-1]), x.shape[-1]
    tile = tiling("rms_norm_grad", chip, rows, cols, GE_DTYPE[x.dtype], GE_DTYPE[gamma.dtype], block_dim)
    dx = _empty(x.shape, combo["dx"])
    dgamma = _empty(gamma.shape, combo["dgamma"])
    ws = _workspace(tile.workspace_bytes)
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(x.dtype, gamma.dtype)}"
    gm = [("dy", t["dy"]), ("x", t["x"]), ("rstd", t["rstd"]), ("gamma", t["gamma"]), ("dx", dx), ("dgamma", dgamma),
          ("workspace", ws)]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch((dx, dgamma), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


def add(x, y, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.add import check_add

    op = ALL_OPS["add"]
    check_add(x, y)
    combo = op.check_input_dtypes({"x": x, "y": y}, reference=False)
    t = _contiguous(op, {"x": x, "y": y})
    tile = tiling("add", chip, x.numel(), GE_DTYPE[x.dtype], block_dim)
    z = _empty(x.shape, combo["z"])
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(x.dtype)}"
    gm = [("x", t["x"]), ("y", t["y"]), ("z", z), ("workspace", _workspace(tile.workspace_bytes))]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch((z,), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


# ---- the activation kernels (kernels/act_kernel.h): one [rows, cols] tiling for all six ----


def act_tiling(op, chip: str, rows: int, cols: int, dtype, approximate: int = 0, block_dim: int = 0) -> Tiling:
    """The tiling core's answer for activation op ``op`` (an OpDefinition) over ``rows`` x ``cols``."""
    lib = library()
    data = ctypes.create_string_buffer(lib.twin_tiling_size(b"act"))
    bd, workspace, size, key = ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint32(), ctypes.c_uint64()
    err = ctypes.create_string_buffer(_ERR_LEN)
    args = (op.ir_base_name.encode(), rows, cols, GE_DTYPE[dtype], approximate, block_dim)
    _check_fits(f"twin tiling {op.ir_base_name}", TILING_ARGUMENTS["act"], args, lib.twin_tiling_act.argtypes[1 : 1 + len(args)])
    if lib.twin_tiling_act(chip.encode(), *args, data, *map(ctypes.byref, (bd, workspace, size, key)), err, _ERR_LEN):
        raise TwinError(err.value.decode())
    return _tiling_of(data, size.value, bd.value, workspace.value, key.value)


def _run_act(op, inputs: dict, out_shapes: dict, rows: int, cols: int, approximate: int, chip, block_dim, count_only) -> Launch:
    combo = op.check_input_dtypes(inputs, reference=False)
    t = _contiguous(op, inputs)
    dtype = next(iter(inputs.values())).dtype
    tile = act_tiling(op, chip, rows, cols, dtype, approximate, block_dim)
    outs = {name: _empty(shape, combo[name]) for name, shape in out_shapes.items()}
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(dtype)}"
    gm = [*t.items(), *outs.items(), ("workspace", _workspace(tile.workspace_bytes))]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch(tuple(outs.values()), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


def _halves(x, dim: int) -> tuple[int, int]:
    """x as [outer, 2 * half] rows split at dim: (outer, half)."""
    dim = dim % x.dim()
    return math.prod(x.shape[:dim]), x.shape[dim] // 2 * math.prod(x.shape[dim + 1:])


def _approximate_code(approximate: str) -> int:
    from .ops.gelu import APPROXIMATIONS

    return APPROXIMATIONS.index(approximate)


def silu_mul(a, b, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.silu_mul import check_silu_mul

    check_silu_mul(a, b)
    return _run_act(ALL_OPS["silu_mul"], {"a": a, "b": b}, {"y": a.shape}, 1, a.numel(), 0, chip, block_dim, count_only)


def silu_mul_backward(dy, a, b, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.silu_mul import check_silu_mul_backward

    check_silu_mul_backward(dy, a, b)
    return _run_act(ALL_OPS["silu_mul_backward"], {"dy": dy, "a": a, "b": b}, {"da": a.shape, "db": a.shape}, 1, a.numel(), 0, chip,
                    block_dim, count_only)


def swiglu(x, dim=-1, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.swiglu import check_swiglu, halved_shape

    check_swiglu(x, dim)
    rows, cols = _halves(x, dim)
    return _run_act(ALL_OPS["swiglu"], {"x": x}, {"y": halved_shape(x, dim)}, rows, cols, 0, chip, block_dim, count_only)


def swiglu_backward(dy, x, dim=-1, *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.swiglu import check_swiglu_backward

    check_swiglu_backward(dy, x, dim)
    rows, cols = _halves(x, dim)
    return _run_act(ALL_OPS["swiglu_backward"], {"dy": dy, "x": x}, {"dx": x.shape}, rows, cols, 0, chip, block_dim, count_only)


def gelu(x, approximate="tanh", *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.gelu import check_gelu

    check_gelu(x, approximate)
    return _run_act(ALL_OPS["gelu"], {"x": x}, {"y": x.shape}, 1, x.numel(), _approximate_code(approximate), chip, block_dim, count_only)


def gelu_backward(dy, x, approximate="tanh", *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.gelu import check_gelu_backward

    check_gelu_backward(dy, x, approximate)
    return _run_act(ALL_OPS["gelu_backward"], {"dy": dy, "x": x}, {"dx": x.shape}, 1, x.numel(), _approximate_code(approximate), chip,
                    block_dim, count_only)


def _rope(op_name, check, x_name, x, cos, sin, mode, chip, block_dim, count_only) -> Launch:
    op = ALL_OPS[op_name]
    check(x, cos, sin, mode)
    combo = op.check_input_dtypes({x_name: x, "cos": cos, "sin": sin}, reference=False)
    t = _contiguous(op, {x_name: x, "cos": cos, "sin": sin})
    rank = x.dim()
    dims = (ctypes.c_int64 * rank)(*x.shape), (ctypes.c_int64 * rank)(*cos.shape)
    tile = tiling("rope", chip, int(op_name == "rope_backward"), rank, *dims, GE_DTYPE[x.dtype], GE_DTYPE[cos.dtype], mode.encode(),
                  block_dim)
    out_name = op.outputs[0].name
    out = _empty(x.shape, combo[out_name])
    symbol = f"{op.kernel_symbol}__{_dtype_suffix(x.dtype, cos.dtype)}"
    gm = [(x_name, t[x_name]), ("cos", t["cos"]), ("sin", t["sin"]), (out_name, out), ("workspace", _workspace(tile.workspace_bytes))]
    counts = launch(symbol, gm, tile, chip=chip, count_only=count_only)
    return Launch((out,), tile.block_dim, counts.bytes_read, counts.bytes_written, tile.workspace_bytes, counts.cost)


def rope(x, cos, sin, mode="half", *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.rope import check_rope

    return _rope("rope", check_rope, "x", x, cos, sin, mode, chip, block_dim, count_only)


def rope_backward(dy, cos, sin, mode="half", *, chip=DEFAULT_CHIP, block_dim=0, count_only=False) -> Launch:
    from .ops.rope import check_rope_backward

    return _rope("rope_backward", check_rope_backward, "dy", dy, cos, sin, mode, chip, block_dim, count_only)
