"""The vendor-API twin (twin/vendor_api/README.md) against the home-made twin (twin/README.md).

The same kernel sources run on both: compiled against CANN's real Ascend C headers (CPU-debug
branch) over airfuse's model of the AI core, and against the home-made headers. Outputs must be
bitwise equal and the GM bytes each launch moves equal. Where `make vendor-build` found no CANN
open-source tree the tests skip with its reason (fail under AIRFUSE_REQUIRE_CANN_OPEN=1).
"""
import ctypes
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

from airfuse import twin
from vendor_scenarios import ALL, launches

# The kernels the vendor-API twin builds (twin/vendor_api/build.cmake VENDOR_TWIN_KERNELS): add,
# rms_norm, add_rms_norm, the activations, rope and rms_norm_grad, each for the 910B (its dav_c220
# builds) and the 310P (its dav_m200 builds), which has no bfloat16.
B2, P3 = "Ascend910B2", "Ascend310P3"


def _on_chips(combos):
    """(chip, *combo) for each chip and each of `combos` (a dtype or a tuple of them) it takes."""
    combos = [c if isinstance(c, tuple) else (c,) for c in combos]
    return [(chip, *c) for chip in (B2, P3) for c in combos if chip != P3 or torch.bfloat16 not in c]


ADD_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Element counts: under one 32 B block, one core's partial tile, a single tile a core,
# several cores with an unaligned tail.
ADD_SIZES = [5, 17, 1000, 4096 * 3 + 7, 100_003]


def _inputs(n: int, dtype, seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * 4
    # Values that test rounding and saturation on the way back from float32: NaN, infinities,
    # half's largest finite, a sum above it, and subnormals.
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 65504.0, 60000.0, 1e-7, -3e-8, 0.0])
    x[: min(n, special.numel())] = special[: min(n, special.numel())]
    return x.to(dtype)


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()])


def _same_launch(home, vendor):
    for a, b in zip(home.outputs, vendor.outputs, strict=True):
        assert torch.equal(_bits(a), _bits(b)), f"outputs differ at {(_bits(a) != _bits(b)).nonzero()[:8].tolist()}"
    assert vendor.block_dim == home.block_dim
    # GM bytes of the copies and of the scalar unit's loads and stores (the 310P kernels move a
    # range shorter than a 32 B block that way: kernels/gm_copy.h).
    assert (vendor.bytes_read, vendor.bytes_written) == (home.bytes_read, home.bytes_written)


def _on_vendor(vendor_api_twin, run):
    with vendor_api_twin():
        return run()


@pytest.mark.parametrize("chip,dtype", _on_chips(ADD_DTYPES), ids=str)
@pytest.mark.parametrize("n", ADD_SIZES)
@pytest.mark.parametrize("block_dim", [0, 3])
def test_add_is_bitwise_equal_on_both_twins(vendor_api_twin, chip, dtype, n, block_dim):
    x, y = _inputs(n, dtype, 1), _inputs(n, dtype, 2).flip(0)
    home = twin.add(x, y, chip=chip, block_dim=block_dim)
    vendor = _on_vendor(vendor_api_twin, lambda: twin.add(x, y, chip=chip, block_dim=block_dim))
    _same_launch(home, vendor)


# rms_norm's dtype combinations (x, gamma) and shapes reaching its three forward strategies
# (op_host/tiling/rms_norm.h): resident steps of rows (up to 4 x 8192 for half, 8 x 4096 for
# float), resident chunks of one row (4 x 8192 float, 2 x 12000 half/bf16), split rows (1 x 65536).
RMS_NORM_COMBOS = [(torch.float32, torch.float32), (torch.float16, torch.float16), (torch.float16, torch.float32),
                   (torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32)]
RMS_NORM_SHAPES = [(1, 1), (3, 7), (2, 4097), (8, 4096), (4, 8192), (2, 12000), (1, 65536)]


@pytest.mark.parametrize("chip,x_dtype,gamma_dtype", _on_chips(RMS_NORM_COMBOS), ids=str)
@pytest.mark.parametrize("shape", RMS_NORM_SHAPES, ids=str)
def test_rms_norm_is_bitwise_equal_on_both_twins(vendor_api_twin, chip, x_dtype, gamma_dtype, shape):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(shape, generator=g) * 3).to(x_dtype)
    gamma = torch.randn(shape[-1], generator=g).to(gamma_dtype)
    home = twin.rms_norm(x, gamma, 1e-6, chip=chip)
    vendor = _on_vendor(vendor_api_twin, lambda: twin.rms_norm(x, gamma, 1e-6, chip=chip))
    _same_launch(home, vendor)


@pytest.mark.parametrize("chip,x_dtype,gamma_dtype", _on_chips(RMS_NORM_COMBOS), ids=str)
@pytest.mark.parametrize("shape", [(3, 7), (8, 4096), (2, 12000), (1, 65536)], ids=str)
def test_add_rms_norm_is_bitwise_equal_on_both_twins(vendor_api_twin, chip, x_dtype, gamma_dtype, shape):
    g = torch.Generator().manual_seed(5)
    x1, x2 = ((torch.randn(shape, generator=g) * 2).to(x_dtype) for _ in range(2))
    gamma = torch.randn(shape[-1], generator=g).to(gamma_dtype)
    home = twin.add_rms_norm(x1, x2, gamma, 1e-6, chip=chip)
    vendor = _on_vendor(vendor_api_twin, lambda: twin.add_rms_norm(x1, x2, gamma, 1e-6, chip=chip))
    _same_launch(home, vendor)


# The activation kernels (kernels/act_kernel.h), each launcher with its inputs for [rows, cols]
# (swiglu's x holds both halves, so 2 * cols).
ACTIVATIONS = {
    "silu_mul": lambda t, r, c, chip: twin.silu_mul(t(r, c), t(r, c), chip=chip),
    "silu_mul_backward": lambda t, r, c, chip: twin.silu_mul_backward(t(r, c), t(r, c), t(r, c), chip=chip),
    "swiglu": lambda t, r, c, chip: twin.swiglu(t(r, 2 * c), chip=chip),
    "swiglu_backward": lambda t, r, c, chip: twin.swiglu_backward(t(r, c), t(r, 2 * c), chip=chip),
    "gelu_tanh": lambda t, r, c, chip: twin.gelu(t(r, c), "tanh", chip=chip),
    "gelu_none": lambda t, r, c, chip: twin.gelu(t(r, c), "none", chip=chip),
    "gelu_backward_tanh": lambda t, r, c, chip: twin.gelu_backward(t(r, c), t(r, c), "tanh", chip=chip),
    "gelu_backward_none": lambda t, r, c, chip: twin.gelu_backward(t(r, c), t(r, c), "none", chip=chip),
}


@pytest.mark.parametrize("chip,dtype", _on_chips(ADD_DTYPES), ids=str)
@pytest.mark.parametrize("shape", [(3, 5), (4, 1000), (2, 20000)], ids=str)
@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activations_are_bitwise_equal_on_both_twins(vendor_api_twin, op, chip, dtype, shape):
    def inputs():
        g = torch.Generator().manual_seed(7)
        return lambda r, c: (torch.randn(r, c, generator=g) * 3).to(dtype)

    home = ACTIVATIONS[op](inputs(), *shape, chip)
    vendor = _on_vendor(vendor_api_twin, lambda: ACTIVATIONS[op](inputs(), *shape, chip))
    _same_launch(home, vendor)


# rope's (x shape, cos/sin shape): tables per position, per batch and position, two broadcast
# groups, decode, and odd shapes (tests/kernels/test_twin_rope.py has the layouts).
ROPE_SHAPES = [((2, 8, 16, 128), (1, 1, 16, 128)), ((2, 16, 8, 64), (2, 16, 1, 64)), ((2, 16, 8, 128), (1, 16, 1, 128)),
               ((1, 32, 1, 128), (1, 1, 1, 128)), ((3, 6), (3, 6)), ((7, 1, 3, 34), (1, 1, 3, 34))]
# On 310P (no DataCopyPad) the rope tiling takes rows of whole 32 B blocks only, in every dtype.
ROPE_ON_CHIPS = [(chip, x_dt, t_dt, x_shape, t_shape) for chip, x_dt, t_dt in _on_chips(RMS_NORM_COMBOS) for x_shape, t_shape in ROPE_SHAPES
                 if chip == B2 or all(x_shape[-1] * dt.itemsize % 32 == 0 for dt in (x_dt, t_dt))]


@pytest.mark.parametrize("chip,x_dtype,table_dtype,x_shape,table_shape", ROPE_ON_CHIPS, ids=str)
@pytest.mark.parametrize("mode", ["half", "interleave"])
@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_rope_is_bitwise_equal_on_both_twins(vendor_api_twin, chip, x_dtype, table_dtype, x_shape, table_shape, mode, backward):
    g = torch.Generator().manual_seed(9)
    x = torch.randn(x_shape, generator=g).to(x_dtype)
    cos, sin = (torch.randn(table_shape, generator=g).to(table_dtype) for _ in range(2))
    run = twin.rope_backward if backward else twin.rope
    home = run(x, cos, sin, mode, chip=chip)
    vendor = _on_vendor(vendor_api_twin, lambda: run(x, cos, sin, mode, chip=chip))
    _same_launch(home, vendor)


# rms_norm_grad's (x, gamma) combinations, and (shape, block_dim) reaching its strategies: on one
# core resident steps of rows (3 x 7, 64 x 512, 8 x 4096) and split rows (4 x 8192, 1 x 65536); on
# several cores, which meet at SyncAll (blocks as coroutines, src/blocks.cpp), the rows' paths
# (2 x 4097 on 2, 512 x 128 on 32, 48 x 1024 on 16) and slices of columns (136 x 1600: the
# tiling's 25 cores).
RMS_NORM_GRAD_COMBOS = [(torch.float32, torch.float32), (torch.float16, torch.float16), (torch.float16, torch.float32),
                        (torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32)]
RMS_NORM_GRAD_LAUNCHES = [((3, 7), 1), ((64, 512), 1), ((8, 4096), 1), ((4, 8192), 1), ((1, 65536), 1),
                          ((2, 4097), 2), ((512, 128), 32), ((48, 1024), 16), ((136, 1600), 0)]


# The 310P has no hardware SyncAll: its launches take the tiling's block_dim (one core, or the
# columns' slices).
RMS_NORM_GRAD_ON_CHIPS = [(chip, *dtypes, shape, block_dim if chip == B2 else 0)
                          for chip, *dtypes in _on_chips(RMS_NORM_GRAD_COMBOS) for shape, block_dim in RMS_NORM_GRAD_LAUNCHES]


@pytest.mark.parametrize("chip,x_dtype,gamma_dtype,shape,block_dim", RMS_NORM_GRAD_ON_CHIPS, ids=str)
def test_rms_norm_grad_is_bitwise_equal_on_both_twins(vendor_api_twin, chip, x_dtype, gamma_dtype, shape, block_dim):
    g = torch.Generator().manual_seed(11)
    dy, x = (torch.randn(shape, generator=g).to(x_dtype) for _ in range(2))
    rstd = torch.rand((*shape[:-1], 1), generator=g) + 0.5
    gamma = torch.randn(shape[-1], generator=g).to(gamma_dtype)
    home = twin.rms_norm_backward(dy, x, rstd, gamma, chip=chip, block_dim=block_dim)
    vendor = _on_vendor(vendor_api_twin, lambda: twin.rms_norm_backward(dy, x, rstd, gamma, chip=chip, block_dim=block_dim))
    _same_launch(home, vendor)


def test_rms_norm_grad_launches_reach_every_strategy():
    keys = {twin.tiling("rms_norm_grad", twin.DEFAULT_CHIP, r, c, twin.GE_DTYPE[x], twin.GE_DTYPE[g], bd).tiling_key
            for x, g in RMS_NORM_GRAD_COMBOS for (r, c), bd in RMS_NORM_GRAD_LAUNCHES}
    assert len(keys) == 3, keys


def test_rms_norm_strategies_are_all_reached():
    keys = {twin.tiling("rms_norm", twin.DEFAULT_CHIP, r, c, twin.GE_DTYPE[x], twin.GE_DTYPE[g], 1e-6, 0).tiling_key
            for x, g in RMS_NORM_COMBOS for r, c in RMS_NORM_SHAPES}
    assert keys == {1, 2, 3}


def test_scalar_gm_accesses_are_counted(vendor_api_twin):
    """Five float32 elements on 310P (under one 32 B block) move by scalar GM loads and stores only
    (kernels/gm_copy.h): both twins count them (src/scalar_access.cpp)."""
    x = torch.arange(5, dtype=torch.float32)
    home = twin.add(x, x, chip=P3)
    with vendor_api_twin():
        vendor = twin.add(x, x, chip=P3)
    assert (home.bytes_read, home.bytes_written) == (vendor.bytes_read, vendor.bytes_written) == (40, 20)
    assert torch.equal(vendor.outputs[0], 2 * x)


def test_vendor_api_twin_refuses_what_it_cannot_do(vendor_api_twin):
    x = torch.ones(64)
    with vendor_api_twin():
        with pytest.raises(twin.TwinError, match="unknown chip 'Ascend910'"):
            twin.add(x, x, chip="Ascend910")


def test_a_chip_runs_its_own_build_only(vendor_api_twin):
    """Each chip's build is compiled in its branch of CANN's headers: the launcher refuses to run
    one on another chip (airfuse.twin picks the chip's own by name, kernel_builds.vendor_twin_name)."""
    x = torch.ones(64)
    tile = twin.tiling("add", B2, x.numel(), twin.GE_DTYPE[x.dtype], 0)
    with vendor_api_twin():
        lib = twin.library()
        for build, chip in (("airfuse_add__float32", P3), ("airfuse_add__float32__ascend310p", B2)):
            args = (ctypes.c_void_p * 4)(x.data_ptr(), x.data_ptr(), torch.empty_like(x).data_ptr(), ctypes.addressof(tile.data))
            sizes = (ctypes.c_uint64 * 4)(256, 256, 256, ctypes.sizeof(tile.data))
            names = (ctypes.c_char_p * 4)(b"x", b"y", b"z", b"tiling")
            err = ctypes.create_string_buffer(1024)
            read, written = ctypes.c_uint64(), ctypes.c_uint64()
            rc = lib.twin_launch(ctypes.cast(getattr(lib, build), ctypes.c_void_p), build.encode(), chip.encode(), tile.block_dim, 4, args,
                                 sizes, names, 0, ctypes.byref(read), ctypes.byref(written), err, len(err))
            assert rc == 1
            assert re.fullmatch(rf"{build} is the vendor-API twin's \w+ build; a launch on {chip} runs its \w+ build", err.value.decode())


# The C++ library's own template instances (std::, __gnu_cxx::, their typeinfo, guards and local
# statics), which are the same in every chip's objects.
_STANDARD_LIBRARY = re.compile(r"^_Z[ZGVT]*[ISV]?(N[KVR]*)?(St|Sa|Sb|Ss|Si|So|Sd|9__gnu_cxx)|^DW\.ref\.")


def test_no_kernel_code_is_shared_across_chips(vendor_api_twin):
    """Each chip's builds are compiled in its own branch of CANN's headers, whose inline functions
    (and airfuse's kernel templates over them) have one name and a body per chip; a weak definition
    both chips' objects hold would be folded into one by the linker, and one chip would run the
    other's code (build.cmake VENDOR_TWIN_NAMESPACE_<chip>)."""
    weak = {}
    for obj in sorted((twin.VENDOR_API_LIB.parent / "kernels").glob("*.o")):
        chip = "ascend310p" if obj.stem.endswith("__ascend310p") else "ascend910b"
        out = subprocess.run(["nm", "--defined-only", str(obj)], check=True, capture_output=True, text=True).stdout
        weak.setdefault(chip, set()).update(f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "WVu")
    assert set(weak) == {"ascend910b", "ascend310p"}, sorted(weak)
    shared = sorted(s for s in weak["ascend910b"] & weak["ascend310p"] if not _STANDARD_LIBRARY.match(s))
    assert not shared, f"{len(shared)} definitions in both chips' objects, e.g. {shared[:5]}"


# The sync-mutation test's scenarios (vendor_scenarios.py), each launch on both twins.
@pytest.mark.parametrize("kind,scenario", ALL, ids=lambda v: str(v))
def test_sync_mutation_scenarios_are_bitwise_equal_on_both_twins(vendor_api_twin, kind, scenario):
    for name, launch in launches(kind, scenario):
        home = launch()
        vendor = _on_vendor(vendor_api_twin, launch)
        try:
            _same_launch(home, vendor)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("rows, message", [(48 * 4, r"the twin could not run the launch: could not map the stack of block \d+ of 48"),
                                           (64 * 256, r"std::bad_alloc")], ids=["block-stacks", "memory"])
def test_out_of_memory_is_a_twin_error_not_an_abort(vendor_api_twin, rows, message):
    """As the home-made twin (tests/kernels/test_twin_launcher.py): with the address space capped
    64 MB above what the process uses, the blocks' stacks or the model's state run out; the launch
    fails with a TwinError and the process goes on."""
    script = textwrap.dedent(
        f"""
        import resource, torch
        from airfuse import twin
        x = torch.randn({rows}, 64)
        twin.add(x, x)  # warm: library loaded, one launch done
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (64 << 20), resource.RLIM_INFINITY))
        try:
            twin.add(x, x, block_dim=48)
        except twin.TwinError as error:
            print("TwinError:", error)
        print("alive")
        """
    )
    env = {**os.environ, "AIRFUSE_TWIN": "vendor-api"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search("TwinError: " + message, result.stdout), result.stdout
    assert result.stdout.rstrip().endswith("alive")
