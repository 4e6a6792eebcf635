"""The twin stops a kernel that breaks a hardware rule, naming kernel, block, API and values.

Each broken kernel lives in tests/kernels/broken/ (broken_kernels.cpp, broken_sync.cpp for the pipes'
ordering, broken_views.cpp) and breaks one rule;
``correct_copy`` shows that a kernel keeping the rules passes the same launcher.
"""

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from airfuse import twin


@pytest.fixture(scope="module")
def broken():
    twin.library()
    return ctypes.CDLL(str(twin.DEFAULT_LIB.with_name("libairfuse_twin_broken.so")))


def run(broken, symbol, *, block_dim=1, chip=twin.DEFAULT_CHIP, x=None, workspace=None):
    x = torch.arange(256, dtype=torch.float32) if x is None else x
    tile = twin.Tiling(ctypes.create_string_buffer(8), block_dim, 0)
    return twin.launch(symbol, [("x", x), ("workspace", workspace)], tile, chip=chip, fn_lib=broken)


CASES = [
    ("broken_oob_copy", r"DataCopy\(GM->UB\): GM access of 32 elements overruns the GlobalTensor's 8"),
    ("broken_strided_copy", r"DataCopy\(GM->UB, DataCopyParams\): GM access of 240 elements overruns the GlobalTensor's 232"),
    ("broken_gm_size", r"GlobalTensor::SetGlobalBuffer: GM access of 2048 bytes at offset 0 of 'x' overruns its 1024 bytes"),
    ("broken_unaligned_copy", r"DataCopy\(GM->UB\): length 28 bytes is not a multiple of 32"),
    ("broken_ub_overalloc", r"TPipe::InitBuffer: UB over-allocated on Ascend910B2: 122880 bytes in use \+ 2 x 61440 requested > 196352"),
    ("broken_queue_depth", r"TQue::EnQue: 1 tensors already enqueued, queue depth is 1"),
    ("broken_queue_leak", r"kernel end: buffer 0 of a VECIN queue is DEQUE at kernel end"),
    ("broken_queue_exhausted", r"TQue::AllocTensor: no FREE buffer among 1 \(the NPU would hang\)"),
    ("broken_bf16_add", r"Add: bfloat16_t arithmetic is not supported"),
    ("broken_unaligned_vector", r"Muls: dst UB address 12 is not 32-byte aligned"),
    ("broken_bf16_exp", r"Exp: bfloat16_t arithmetic is not supported"),
    ("broken_unaligned_mins", r"Mins: dst UB address 12 is not 32-byte aligned"),
    ("broken_two_pipes", r"TPipe: TPipe has already been constructed"),
    ("broken_unwaited_flag", r"kernel end: HardEvent::V_S id 0 set by SetFlag at broken_kernels.cpp:\d+ is never waited on"),
    ("broken_live_buffers", r"TQue::AllocTensor: 8 buffers already allocated in this TPosition, the limit is 8"),
    ("broken_bf16_cast_mode", r"Cast: float -> bfloat16_t with round mode 0 is not supported on Ascend910B2"),
    ("broken_reduce_tmp", r"ReduceSum: sharedTmpBuffer tensor needs at least 64 bytes, it has 32"),
    ("broken_scalar_gm_store", r"GlobalTensor::SetValue: index 256 outside the GlobalTensor's 256 elements"),
    ("broken_gather_outside_src", r"Gather: srcOffset\[63\] = 256 bytes is outside src's 256 bytes"),
    ("broken_gather_unaligned_offset", r"Gather: srcOffset\[0\] = 2 bytes is not element-aligned"),
    ("broken_gather_short_src", r"Gather: src holds 64 elements where CANN's CPU-debug Gather check asks 72 for count 128"),
    ("broken_cast_mode_int32", r"Cast: float -> int32_t with round mode 4 is not supported on Ascend910B2"),
    ("broken_brcb_zero_block_stride", r"Brcb: dstBlkStride 0 is not supported \(Brcb.md: undefined behaviour\)"),
    ("broken_brcb_overlap", r"Brcb: src UB \[128, 160\) overlaps dst's span \[0, 256\): src and dst must not share memory \(Brcb.md\)"),
    # synchronisation (twin/README.md, "Pipes and events")
    ("broken_reused_event_id", r"SetFlag<HardEvent::V_MTE2>\(0\) at broken_sync.cpp:\d+: id 0 is still set by TQue::FreeTensor of InitBuffer #1 \(TQue<VECIN> "
                               r"buffer 0\) and not yet waited on: the second set is lost"),
    ("broken_stolen_queue_flag", r"~TPipe: WaitFlag<HardEvent::V_MTE2>\(0\) for InitBuffer #1 \(TQue<VECIN> buffer 0\): waits on id 0, "
                                 r"which is not set \(never set, or its set was consumed by another WaitFlag\): the NPU would wait forever"),
    ("broken_wait_never_set", r"WaitFlag<HardEvent::MTE2_V>\(0\) at broken_sync.cpp:\d+: waits on id 0, which is not set"),
    ("broken_too_many_event_ids", r"TPipe::AllocEventID: all 8 ids of HardEvent::V_S are in use"),
    ("broken_release_fetched_event_id", r"TPipe::ReleaseEventID: HardEvent::V_S id 0 is not held: ReleaseEventID takes an id "
                                        r"AllocEventID returned and not yet released"),
    ("broken_missing_mte2_v", r"Muls: \(V\) src UB \[0, 1024\) of InitBuffer #1 \(TBuf<VECIN>\) reads memory last written by "
                              r"DataCopy\(GM->UB\) \(MTE2\) with no ordering between them: missing MTE2 -> V ordering "
                              r"\(SetFlag/WaitFlag<HardEvent::MTE2_V>\)"),
    ("broken_missing_v_mte3", r"DataCopy\(UB->GM\): \(MTE3\) src UB \[0, 1024\) of InitBuffer #1 \(TQue<VECOUT> buffer 0\) reads memory "
                              r"last written by Muls \(V\) with no ordering between them: missing V -> MTE3 ordering"),
    ("broken_missing_v_s", r"LocalTensor::GetValue: \(S\) element UB \[0, 4\) of InitBuffer #1 \(TBuf<VECCALC>\) reads memory last "
                           r"written by Duplicate \(V\) with no ordering between them: missing V -> S ordering \(SetFlag/WaitFlag<HardEvent::V_S>\)"),
    ("broken_missing_vector_barrier", r"Muls: \(V\) src UB \[256, 512\) of InitBuffer #1 \(TBuf<VECCALC>\) reads memory last written "
                                      r"by Muls \(V\) with no ordering between them: missing PipeBarrier<PIPE_V>"),
    ("broken_missing_mte3_mte2", r"DataCopy\(GM->UB\): \(MTE2\) reads GM bytes \[0, 256\) of 'x' reads bytes this block wrote by "
                                 r"DataCopy\(UB->GM\) \(MTE3\) with no ordering between them: missing MTE3 -> MTE2 ordering"),
    ("broken_missing_mte2_mte3", r"DataCopy\(UB->GM\): \(MTE3\) writes GM bytes \[0, 256\) of 'x' overwrites bytes this block is still "
                                 r"reading by DataCopy\(GM->UB\) \(MTE2\) with no ordering between them: missing MTE2 -> MTE3 ordering"),
    ("broken_view_at_end", r"LocalTensor::operator\[\]: offset 256 is not inside the tensor's 256 elements"),
    ("broken_use_after_free", r"Muls: src tensor at UB 0 of InitBuffer #1 \(TQue<VECIN> buffer 0\) is used after TQue::FreeTensor released it"),
    ("broken_unwritten_read", r"Muls: \(V\) src UB \[0, 1024\) of InitBuffer #1 \(TQue<VECOUT> buffer 0\) reads memory never written "
                              r"since its AllocTensor"),
    ("broken_copy_into_veccalc", r"DataCopyPad\(GM->UB\): dst tensor is in TPosition VECCALC; on Ascend910B2 the doc "
                                 r"\(DataCopyPad（GMToUB非对齐数据搬运）.md\) lists only VECIN, VECOUT for this direction"),
    ("broken_sync_all_kernel_type", r"SyncAll: hardware SyncAll in a kernel of type KERNEL_TYPE_AIV_ONLY: only KERNEL_TYPE_MIX_AIV_1_0 "
                                    r"starts the scheduler"),
]


@pytest.mark.parametrize("symbol,message", CASES, ids=[c[0] for c in CASES])
def test_violation_is_reported(broken, symbol, message):
    with pytest.raises(twin.TwinError, match=f"^kernel {symbol}, block 0/1: {message}"):
        run(broken, symbol)


def test_sync_all_with_a_missing_block(broken):
    with pytest.raises(twin.TwinError, match=r"kernel broken_sync_all, block 0/2: SyncAll: another block returned without calling SyncAll"):
        run(broken, "broken_sync_all", block_dim=2)


SYSTEM_WORKSPACE = 16 * 1024 * 1024  # Ascend910B2's RESERVED_WORKSPACE


def test_workspace_overrun(broken):
    """The user workspace starts after the chip's system workspace and ends where the tiling said."""
    ws = torch.empty(SYSTEM_WORKSPACE + 256, dtype=torch.uint8)
    with pytest.raises(twin.TwinError, match=r"^kernel broken_workspace_overrun, block 0/1: GlobalTensor::SetGlobalBuffer: GM access of 512 "
                                             r"bytes at offset 0 of 'workspace' overruns its 256 bytes"):
        run(broken, "broken_workspace_overrun", workspace=ws)
    with pytest.raises(twin.TwinError, match=r"GetUserWorkspace: the workspace holds 256 bytes, less than the 16777216 bytes of "
                                             r"Ascend910B2's system workspace"):
        run(broken, "broken_workspace_overrun", workspace=torch.empty(256, dtype=torch.uint8))


def test_system_workspace_is_not_the_kernels(broken):
    ws = torch.empty(SYSTEM_WORKSPACE + 256, dtype=torch.uint8)
    with pytest.raises(twin.TwinError, match=r"^kernel broken_system_workspace, block 0/1: GlobalTensor::SetGlobalBuffer: GM access at offset 0 "
                                             r"of the workspace, inside the first 16777216 bytes: the system workspace"):
        run(broken, "broken_system_workspace", workspace=ws)


def test_tiling_struct_must_be_registered(broken):
    with pytest.raises(twin.TwinError, match=r"^kernel broken_unregistered_tiling, block 0/1: GET_TILING_DATA_WITH_STRUCT: the tiling struct "
                                             r"BrokenTiling was not registered with REGISTER_TILING_DEFAULT"):
        run(broken, "broken_unregistered_tiling")


def test_cross_core_race_on_gm(broken):
    """Block 1 stores what block 0 loads with no SyncAll between: caught whichever runs first."""
    with pytest.raises(twin.TwinError, match=r"^kernel broken_cross_core_race, block [01]/2: DataCopy\((GM->UB|UB->GM)\): \((MTE2|MTE3)\) "
                                             r"(reads|writes) GM bytes \[0, 256\) of 'x' (reads|overwrites) bytes block [01] "
                                             r"(wrote|read).* with no SyncAll between them: cross-core race"):
        run(broken, "broken_cross_core_race", block_dim=2)
    run(broken, "correct_cross_core", block_dim=2)


def test_soft_sync_all_needs_a_region_zeroed_before_the_launch(broken):
    """310P's soft SyncAll counts in GM: with the region zeroed beforehand, blocks exchange data
    across it; with stale counts it would pass early."""
    run(broken, "correct_soft_sync", block_dim=2, chip="Ascend310P3", x=torch.zeros(256))
    stale = torch.zeros(256)
    stale.view(torch.int32)[8] = 5
    with pytest.raises(twin.TwinError, match=r"^kernel correct_soft_sync, block 1/2: SyncAll\(gmWorkspace, ubWorkspace, usedCores\): this "
                                             r"block's count in gmWorkspace is 5 at its SyncAll #1, not 0: the region was not zeroed"):
        run(broken, "correct_soft_sync", block_dim=2, chip="Ascend310P3", x=stale)


def test_soft_sync_all_region_zeroed_in_the_kernel_early_enough(broken):
    """SyncAll.md's other way: every block zeroes the whole region in the kernel. Accepted when the
    cost model has every zeroing land the assumed start skew before the first block counts (here
    over stale counts); a block zeroing after its work is refused, naming both blocks and times."""
    stale = torch.zeros(256)
    stale.view(torch.int32)[0] = 7
    run(broken, "correct_soft_sync_zeroed_in_kernel", block_dim=2, chip="Ascend310P3", x=stale)
    skew = next(r.value for r in twin.cost_parameters() if r.chip == "310P" and r.name == "soft_sync_start_skew")
    with pytest.raises(twin.TwinError, match=r"^kernel broken_soft_sync_zeroed_late, block 0/2: SyncAll\(gmWorkspace, ubWorkspace, usedCores\): "
                                             rf"block 1's zeroing of the soft SyncAll's gmWorkspace lands at cycle \d+, block [01] counts its "
                                             rf"first SyncAll at cycle \d+: less than the assumed start skew of {skew:.0f} cycles"):
        run(broken, "broken_soft_sync_zeroed_late", block_dim=2, chip="Ascend310P3", x=torch.zeros(256))


def test_sync_all_needs_every_block_resident(broken):
    with pytest.raises(twin.TwinError, match=r"SyncAll: block_dim 49 exceeds the 48 vector cores"):
        run(broken, "broken_sync_all", block_dim=49)


def test_hardware_sync_all_does_not_exist_on_310p(broken):
    with pytest.raises(twin.TwinError, match=r"block 0/2: SyncAll: hardware SyncAll does not exist on Ascend310P3 \(CANN compiles it "
                                             r"to nothing there, so the blocks would race\)"):
        run(broken, "broken_sync_all", block_dim=2, chip="Ascend310P3")


# The data paths each copy API's doc lists, in logical positions (docs/zh/api/SIMD-API/基础API/
# Memory矢量计算/数据搬运/<doc>, "具体支持的数据通路为（以逻辑位置TPosition表示）"); the UB side's position
# comes from the TBuf (or TQue) the tensor was taken from. Every modelled chip alike (only the
# 950PR/950DT adds GM -> VECCALC for DataCopyPad); DataCopyPad only where it exists.
BOTH_CHIPS = ("Ascend910B2", "Ascend310P3")
COPY_PATHS = [
    ("data_copy_in", "DataCopy(GM->UB)", "dst", "DataCopy（GM与UB连续数据搬运）.md", ("VECIN",), BOTH_CHIPS),
    ("data_copy_strided_in", "DataCopy(GM->UB, DataCopyParams)", "dst", "DataCopy（GM与UB高维切分数据搬运）.md", ("VECIN",), BOTH_CHIPS),
    ("data_copy_out", "DataCopy(UB->GM)", "src", "DataCopy（GM与UB连续数据搬运）.md", ("VECOUT",), BOTH_CHIPS),
    ("pad_in", "DataCopyPad(GM->UB)", "dst", "DataCopyPad（GMToUB非对齐数据搬运）.md", ("VECIN", "VECOUT"), ("Ascend910B2",)),
    ("pad_out", "DataCopyPad(UB->GM)", "src", "DataCopyPad（UBToGM非对齐数据搬运）.md", ("VECIN", "VECOUT"), ("Ascend910B2",)),
]


@pytest.mark.parametrize("path,api,which,doc,allowed,chips", COPY_PATHS, ids=[p[0] for p in COPY_PATHS])
def test_copy_paths_follow_their_docs(broken, path, api, which, doc, allowed, chips):
    for chip in chips:
        for pos in ("VECIN", "VECOUT", "VECCALC"):
            symbol = f"path_{path}_{pos.lower()}"
            if pos in allowed:
                run(broken, symbol, chip=chip)
                continue
            message = (f"{re.escape(api)}: {which} tensor is in TPosition {pos}; on {chip} the doc \\({re.escape(doc)}\\) "
                       f"lists only {', '.join(allowed)} for this direction")
            with pytest.raises(twin.TwinError, match=f"^kernel {symbol}, block 0/1: {message}$"):
                run(broken, symbol, chip=chip)


def test_data_copy_pad_is_refused_on_310p(broken):
    with pytest.raises(twin.TwinError, match=r"DataCopyPad\(GM->UB\): DataCopyPad is not supported on Ascend310P3 \(CANN's headers declare it deprecated there"):
        run(broken, "pad_copy", chip="Ascend310P3")
    run(broken, "pad_copy")  # the same kernel is legal on 910B


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("source", ["rms_norm.cpp", "rms_norm_grad.cpp", "add.cpp", "add_rms_norm.cpp", "rope.cpp", "rope_grad.cpp", "silu_mul.cpp",
                                    "silu_mul_grad.cpp", "swiglu.cpp", "swiglu_grad.cpp", "gelu.cpp", "gelu_grad.cpp"])
@pytest.mark.parametrize("dtypes", [("half", "half"), ("float", "float"), ("half", "float")], ids="-".join)
def test_kernels_compile_for_310p_without_data_copy_pad(source, dtypes):
    """CANN builds the kernels for 310P with __CCE_AICORE__ 200, where DataCopyPad is a deprecated,
    unsupported API (compiled to nothing on the NPU; the twin's headers mark it the same way): the
    kernels must leave that path out at compile time."""
    cxx = shutil.which("c++") or shutil.which("g++")
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-Werror=deprecated-declarations", "-D__CCE_AICORE__=200", f"-DDTYPE_X={dtypes[0]}", f"-DDTYPE_A={dtypes[0]}", f"-DDTYPE_GAMMA={dtypes[1]}",
           f"-DDTYPE_X1={dtypes[0]}", f"-DDTYPE_DY={dtypes[0]}", f"-DDTYPE_COS={dtypes[1]}",
           f"-I{ROOT / 'twin/include'}", f"-I{ROOT / 'op_host/tiling'}", f"-I{ROOT / 'kernels'}", str(ROOT / "kernels" / source)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_310p_headers_keep_data_copy_pad_deprecated(tmp_path):
    """As CANN's 310P headers: DataCopyPad compiles there, with a deprecation warning that names it
    unsupported on the device; on 910B it is an ordinary API."""
    src = tmp_path / "pad.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   'void f(const LocalTensor<float>& ub, const GlobalTensor<float>& gm) {\n'
                   '    DataCopyPad(gm, ub, DataCopyExtParams(1, 4, 0, 0, 0));\n}\n')
    cmd = [shutil.which("c++") or shutil.which("g++"), "-std=c++17", "-fsyntax-only", f"-I{ROOT / 'twin/include'}",
           f"-I{ROOT / 'op_host/tiling'}", str(src)]
    assert subprocess.run(cmd + ["-Werror=deprecated-declarations"], capture_output=True).returncode == 0
    on_310p = subprocess.run(cmd + ["-D__CCE_AICORE__=200"], capture_output=True, text=True)
    assert on_310p.returncode == 0 and "DataCopyPad is an unsupported API on current device (310P)" in on_310p.stderr
    assert subprocess.run(cmd + ["-D__CCE_AICORE__=200", "-Werror=deprecated-declarations"], capture_output=True).returncode != 0


@pytest.mark.parametrize("chip", ["Ascend910B2", "Ascend310P3"])
def test_strided_copy_moves_only_its_blocks(broken, chip):
    """DataCopy with DataCopyParams (every chip): blocks of blockLen x 32 B, srcStride x 32 B apart in GM."""
    x = torch.arange(256, dtype=torch.float32)
    expect = x.clone()
    expect[:112] = x.view(8, 32)[:7, 8:24].reshape(-1) * 2
    read, written, _ = run(broken, "strided_copy", chip=chip, x=x)
    assert (read, written) == (7 * 64, 7 * 64)
    torch.testing.assert_close(x, expect)


@pytest.mark.parametrize("chip", ["Ascend910B2", "Ascend310P3"])
def test_correct_kernel_passes_and_counts_traffic(broken, chip):
    x = torch.arange(256, dtype=torch.float32)
    read, written, _ = run(broken, "correct_copy", chip=chip, x=x)
    assert (read, written) == (1024, 1024)
    torch.testing.assert_close(x, torch.arange(256, dtype=torch.float32) * 2)


def test_activation_vector_apis(broken):
    """Exp, Abs, Max, Min, Maxs, Mins as documented, NaN propagated (twin/README.md)."""
    v = torch.cat([torch.linspace(-100, 100, 61), torch.tensor([float("nan"), float("inf"), -float("inf")])])
    x = torch.cat([v, torch.zeros(6 * 64)])
    run(broken, "correct_vector_math", x=x)
    want = [torch.exp(v), v.abs(), torch.maximum(v, -v), torch.minimum(v, -v), torch.clamp_min(v, 0.5), torch.clamp_max(v, 0.5)]
    torch.testing.assert_close(x[64:].view(6, 64), torch.stack(want), equal_nan=True)


def test_mul_add_dst_follows_its_doc_and_is_a2_only(broken):
    """MulAddDst: dst = src0 * src1 + dst (MulAddDst.md), the product rounded to float32 first, as
    torch's; its product table lists A2/A3, not the 310P AI Core, where the twin refuses it."""
    gen = torch.Generator().manual_seed(4)
    a, b, d = (torch.randn(64, generator=gen) for _ in range(3))
    x = torch.cat([a, b, d, torch.zeros(64)])
    run(broken, "correct_mul_add_dst", x=x)
    torch.testing.assert_close(x[192:], a * b + d, rtol=0, atol=0)
    with pytest.raises(twin.TwinError, match="MulAddDst: not documented for Ascend310P3"):
        run(broken, "correct_mul_add_dst", x=torch.zeros(256), chip="Ascend310P3")


def test_strided_mul_add_dst_follows_its_doc(broken):
    """MulAddDst's level-0 form (MulAddDst.md): per masked element of each repeat dst = src0 * src1
    + dst at the operands' own block and repeat strides (src1 a block per repeat here), the rest
    of dst unchanged; A2/A3 only, as its count form."""
    gen = torch.Generator().manual_seed(5)
    a, f, d = torch.randn(4, 64, generator=gen), torch.randn(4, generator=gen), torch.randn(4, 64, generator=gen)
    x = torch.cat([a.flatten(), f.repeat_interleave(8), d.flatten(), torch.zeros(256)])
    run(broken, "correct_mul_add_dst_strided", x=x)
    want = d.clone()
    want[:, :20] = a[:, :20] * f[:, None] + d[:, :20]
    torch.testing.assert_close(x[544:].view(4, 64), want, rtol=0, atol=0)
    with pytest.raises(twin.TwinError, match="MulAddDst: not documented for Ascend310P3"):
        run(broken, "correct_mul_add_dst_strided", x=torch.zeros(800), chip="Ascend310P3")


def test_launch_after_violation_still_works(broken):
    """A violation raises in Python and leaves the process and the twin usable."""
    with pytest.raises(twin.TwinError):
        run(broken, "broken_oob_copy")
    run(broken, "correct_copy")


def test_queue_limits_are_per_position_and_depth(broken):
    run(broken, "correct_queue_limits")
