"""The home-made twin's deliberately broken kernels (tests/kernels/broken) on the vendor-API twin.

Built against CANN's real headers (twin/vendor_api/build.cmake), every broken kernel is either
stopped here, by airfuse's model of the AI core or by the vendor's own CPU-debug checks, or listed
in NOT_CAUGHT_YET with why the intrinsic level cannot see it yet. Both lists are checked both ways:
a kernel listed as caught must be stopped with the message given, and one listed as not caught must
still run, so the lists stay true as the model grows. (The home-made twin's own verdicts on the same
kernels are tests/kernels/test_twin_checks.py.)
"""
import ctypes
import re
from pathlib import Path

import pytest
import torch

from airfuse import twin

BROKEN_SOURCES = Path(__file__).resolve().parents[1] / "kernels" / "broken"
SYSTEM_WORKSPACE = 16 * 1024 * 1024  # Ascend910B2's RESERVED_WORKSPACE
VENDOR_STOPPED = "the vendor's CPU-debug check stopped the kernel"

# Stopped by the core model (the TwinError names the intrinsic), or by the vendor's CPU-debug
# check (VENDOR_STOPPED, with its own message on stdout where it prints one).
CAUGHT = {
    "broken_oob_copy": r"copy_gm_to_ubuf: src: 128 bytes at offset 992 of GM argument x overrun its 1024 bytes",
    "broken_strided_copy": r"copy_gm_to_ubuf: src: 960 bytes at offset 96 of GM argument x overrun its 1024 bytes",
    "broken_ub_overalloc": r"AscendCBufInit: InitBuffer: 122880 bytes at UB offset 122880 exceed the 196608-byte unified buffer",
    "broken_two_pipes": r"AscendCBufAbsAddr \(TPipe\): a second TPipe",
    "broken_queue_leak": r"kernel end: the TQue buffer at UB offset 0 is still dequeued",
    "broken_use_after_free": r"vmuls: dst: UB offset 0 lies in the TQue buffer at UB offset 0, which is free",
    "broken_unwritten_read": r"vmuls: src, UB block at offset 0, is read before anything wrote it since its AllocTensor",
    "broken_reused_event_id": r"set_flag: pipe 1 -> 4 event 0 is already set",
    "broken_wait_never_set": r"wait_flag: pipe 4 -> 1 event 0 was never set",
    "broken_unwaited_flag": r"kernel end: pipe 1 -> 0 event 0 is still set",
    "broken_stolen_queue_flag": r"wait_flag: pipe 1 -> 4 event 0 was never set",
    "broken_missing_mte2_v": r"vmuls: src, UB block at offset 0, \(pipe V\) reads \(RAW\) after copy_gm_to_ubuf",
    "broken_missing_v_mte3": r"copy_ubuf_to_gm: src, UB block at offset 0, \(pipe MTE3\) reads \(RAW\) after vmuls",
    "broken_missing_vector_barrier": r"vmuls: src, UB block at offset 256, \(pipe V\) reads \(RAW\) after vmuls",
    "broken_missing_mte3_mte2": r"copy_gm_to_ubuf: src, GM byte 0 of x, \(pipe MTE2\) reads \(RAW\) what this block's MTE3 instruction 1 stored",
    "broken_missing_mte2_mte3": r"copy_ubuf_to_gm: dst, GM byte 0 of x, \(pipe MTE3\) writes \(WAR\) what this block's MTE2 instruction 1 is still reading",
    # The scalar unit's load (src/scalar_access.cpp), in the vendor's GetValue.
    "broken_missing_v_s": r"scalar load in AscendC::LocalTensor::GetValue: element, UB block at offset 0, \(pipe S\) reads \(RAW\) after vector_dup "
                          r"\(pipe V, its instruction 1\) with nothing ordering them \(set_flag/wait_flag V -> S",
    "broken_cross_core_race": r"copy_ubuf_to_gm: dst, GM byte 0 of x, overwrites what block 0 read with no SyncAll between them: cross-core race",
    "broken_gather_outside_src": r"vgather: offset 256 bytes lies outside the 64-element source",
    "broken_gather_unaligned_offset": r"vgather: offset 2 is not element-aligned",
    "broken_gather_short_src": VENDOR_STOPPED,
    "broken_brcb_overlap": r"vbrcb: src UB \[128, 160\) overlaps dst's span \[0, 256\)",
    "broken_brcb_zero_block_stride": r"vbrcb: dst block stride 0 is not supported",
    "broken_copy_into_veccalc": r"copy_gm_to_ubuf_align_b32: dst is in TPosition VECCALC; DataCopyPad GM -> UB takes VECIN or VECOUT only",
    "broken_sync_all": r"the blocks would hang; block 0 waits at wait_flag_dev\(14\) \(its wait 1\) for block 1 \(ended after setting it 0 times\)",
    "broken_bf16_add": VENDOR_STOPPED,
    "broken_bf16_cast_mode": VENDOR_STOPPED,
    "broken_bf16_exp": VENDOR_STOPPED,
    "broken_live_buffers": VENDOR_STOPPED,
    "broken_too_many_event_ids": VENDOR_STOPPED,
    "broken_queue_depth": VENDOR_STOPPED,
    "broken_queue_exhausted": VENDOR_STOPPED,
    "broken_unaligned_copy": VENDOR_STOPPED,
    "broken_unaligned_mins": VENDOR_STOPPED,
    "broken_unaligned_vector": VENDOR_STOPPED,
    "broken_view_at_end": VENDOR_STOPPED,
}
# What the vendor's check prints before it stops the kernel, where it prints something.
VENDOR_MESSAGES = {
    "broken_bf16_add": "Failed to check dtype in Add",
    "broken_gather_short_src": "Failed to check srcOffsetLocal size in Gather when in normal mode, tensor size needs to be at least 288 bytes, "
                               "while current tensor size is only 256 bytes",
    "broken_live_buffers": "max buffer number in same queue position is 8",
    "broken_too_many_event_ids": "max buffer number in same queue position is 8",
    "broken_queue_depth": "exceed depth limits 1",
    "broken_queue_exhausted": "size is 2, which exceed limits 1",
    "broken_unaligned_copy": "count * sizeof(T) must be 32B align",
    "broken_unaligned_mins": "start address alignment in Mins",
    "broken_unaligned_vector": "start address alignment in Muls",
    "broken_view_at_end": "offset is 256, which can not be larger than data len 256",
}
# Broken kernels that run to their end here, and why the intrinsic level does not see it yet.
NOT_CAUGHT_YET = {
    "broken_scalar_gm_store": "the store lands past x, in no GM argument: a host access there cannot be told from the kernel's own "
                              "memory, and the GlobalTensor's size reaches no intrinsic (as broken_gm_size)",
    "broken_gm_size": "a GlobalTensor's declared size is not passed to any intrinsic (only copies are bounded, by the launch's buffers)",
    "broken_workspace_overrun": "as broken_gm_size: SetGlobalBuffer's size reaches no intrinsic",
    "broken_system_workspace": "the system workspace's bounds are the launcher's, not an intrinsic's",
    "broken_release_fetched_event_id": "ReleaseEventID is a bit clear (sbitset0) on TPipe's pool word, which the model cannot tell from other scalar bit operations",
    "broken_reduce_tmp": "dav_c220's count-form ReduceSum accumulates with vcadd and never touches the tmp buffer; its documented size is an API rule",
    "broken_sync_all_kernel_type": "KERNEL_TASK_TYPE_DEFAULT compiles to nothing in the CPU-debug headers: the kernel type is invisible",
    "broken_unregistered_tiling": "the CPU-debug GET_TILING_DATA_WITH_STRUCT copies the tiling whatever was registered",
}
# Stopped only because an intrinsic they reach is not modelled: no evidence either way.
UNMODELLED = {
    "broken_cast_mode_int32": "vconv_f322s32a",
    "broken_soft_sync_zeroed_late": "vector_dup",
}
BLOCK_DIMS = {"broken_sync_all": 2, "broken_cross_core_race": 2, "correct_cross_core": 2}


@pytest.fixture(scope="module")
def vendor_broken(vendor_api_twin):
    # The broken kernels need the vendor-API twin by its soname, found through the RUNPATH the build
    # recorded: a build copied from another checkout names that checkout's twin, a second copy that
    # knows nothing of this launch ("called outside a vendor-API twin launch"). Loaded first, the
    # twin airfuse launches on is the one they bind to.
    with twin.vendor_api_twin():
        twin.library()
    return ctypes.CDLL(str(twin.VENDOR_API_LIB.with_name("libairfuse_vendor_twin_broken.so")))


def run(lib, symbol, block_dim=None):
    x = torch.arange(256, dtype=torch.float32)
    workspace = torch.empty(SYSTEM_WORKSPACE + 256, dtype=torch.uint8) if "workspace" in symbol else None
    tile = twin.Tiling(ctypes.create_string_buffer(8), block_dim or BLOCK_DIMS.get(symbol, 1), 0)
    with twin.vendor_api_twin():
        return twin.launch(symbol, [("x", x), ("workspace", workspace)], tile, fn_lib=lib)


def test_every_broken_kernel_is_judged():
    symbols = {m for src in BROKEN_SOURCES.glob("*.cpp") for m in re.findall(r"void (broken_\w+)\(", src.read_text())}
    lists = [set(CAUGHT), set(NOT_CAUGHT_YET), set(UNMODELLED)]
    assert sum(map(len, lists)) == len(set().union(*lists)), "a kernel is in two lists"
    assert set().union(*lists) == symbols


@pytest.mark.parametrize("symbol", sorted(CAUGHT))
def test_broken_kernel_is_stopped(vendor_broken, capfd, symbol):
    with pytest.raises(twin.TwinError, match=f"^kernel {symbol}(, block \\d+/\\d+)?: .*{CAUGHT[symbol]}"):
        run(vendor_broken, symbol)
    if symbol in VENDOR_MESSAGES:
        assert VENDOR_MESSAGES[symbol] in capfd.readouterr().out


@pytest.mark.parametrize("symbol", sorted(NOT_CAUGHT_YET))
def test_not_caught_yet_still_runs(vendor_broken, symbol):
    run(vendor_broken, symbol)


@pytest.mark.parametrize("symbol", sorted(UNMODELLED))
def test_unmodelled_intrinsic_is_named(vendor_broken, symbol):
    with pytest.raises(twin.TwinError, match=f"{UNMODELLED[symbol]}: this intrinsic .* is not modelled"):
        run(vendor_broken, symbol)


# The copy data paths of tests/kernels/test_twin_checks.py COPY_PATHS on the 910B, as (path, the
# intrinsic its API reaches, the UB operand, the positions allowed), judged here by the TPosition of
# the UB side's InitBuffer.
COPY_PATHS = [("data_copy_in", "copy_gm_to_ubuf", "dst", ("VECIN",)), ("data_copy_strided_in", "copy_gm_to_ubuf", "dst", ("VECIN",)),
              ("data_copy_out", "copy_ubuf_to_gm", "src", ("VECOUT",)), ("pad_in", "copy_gm_to_ubuf_align_b32", "dst", ("VECIN", "VECOUT")),
              ("pad_out", "copy_ubuf_to_gm_align_b32", "src", ("VECIN", "VECOUT"))]


@pytest.mark.parametrize("path,intrinsic,operand,allowed", COPY_PATHS, ids=[p[0] for p in COPY_PATHS])
def test_copy_paths_are_the_home_made_twins(vendor_broken, path, intrinsic, operand, allowed):
    for pos in ("VECIN", "VECOUT", "VECCALC"):
        symbol = f"path_{path}_{pos.lower()}"
        if pos in allowed:
            run(vendor_broken, symbol)
            continue
        with pytest.raises(twin.TwinError, match=f"^kernel {symbol}, block 0/1: {intrinsic}: {operand} is in TPosition {pos}; .* takes "
                                                 f"{' or '.join(allowed)} only$"):
            run(vendor_broken, symbol)


@pytest.mark.parametrize("symbol", ["correct_copy", "correct_cross_core", "correct_mul_add_dst", "correct_queue_limits", "pad_copy"])
def test_correct_kernel_runs(vendor_broken, symbol):
    run(vendor_broken, symbol)


def test_sync_all_needs_every_block_resident(vendor_broken):
    with pytest.raises(twin.TwinError, match=r"^kernel broken_sync_all, block 0/49: ffts_cross_core_sync: 49 blocks on a chip of 48 vector "
                                             r"cores: blocks that are not resident cannot meet"):
        run(vendor_broken, "broken_sync_all", block_dim=49)
