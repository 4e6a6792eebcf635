// Deliberately broken kernels: each breaks one hardware rule the twin must catch
// (tests/kernels/test_twin_checks.py). Parameters: x (GM, 256 floats), workspace, tiling.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr uint32_t kElems = 256;
}

// Copies 32 floats starting 8 floats before the end of x's 256.
extern "C" __global__ __aicore__ void broken_oob_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 32 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g[kElems - 8], 32);
    q.FreeTensor(t);
}

// Declares x as 512 floats although the buffer holds 256.
extern "C" __global__ __aicore__ void broken_gm_size(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 2 * kElems);
}

// 7 floats = 28 bytes: the NPU would silently drop them.
extern "C" __global__ __aicore__ void broken_unaligned_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 64 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g, 7);
    q.FreeTensor(t);
}

// Two 60 KB double-buffered queues: 240 KB of a 192 KB UB.
extern "C" __global__ __aicore__ void broken_ub_overalloc(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> in;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 2, 60 * 1024);
    pipe.InitBuffer(out, 2, 60 * 1024);
}

// EnQue twice on a depth-1 queue without DeQue.
extern "C" __global__ __aicore__ void broken_queue_depth(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    LocalTensor<float> b = q.AllocTensor<float>();
    q.EnQue(a);
    q.EnQue(b);
}

// DeQue'd tensor never freed: the buffer is still DEQUE at kernel end.
extern "C" __global__ __aicore__ void broken_queue_leak(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    q.EnQue(a);
    a = q.DeQue<float>();
}

// Allocates from a single-buffer queue twice: the NPU would hang.
extern "C" __global__ __aicore__ void broken_queue_exhausted(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    LocalTensor<float> b = q.AllocTensor<float>();
    q.FreeTensor(a);
    q.FreeTensor(b);
}

// Adds bf16 directly instead of casting to float.
extern "C" __global__ __aicore__ void broken_bf16_add(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<bfloat16_t> t = buf.Get<bfloat16_t>();
    Add(t, t, t, 64);
}

// A vector operand at x[3] of a float tensor: 12 bytes off the 32-byte grid.
extern "C" __global__ __aicore__ void broken_unaligned_vector(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> t = buf.Get<float>();
    Muls(t[3], t[3], 2.0f, 16);
}

// A second TPipe in one kernel.
extern "C" __global__ __aicore__ void broken_two_pipes(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe a;
    TPipe b;
}

// SetFlag without the matching WaitFlag.
extern "C" __global__ __aicore__ void broken_unwaited_flag(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    SetFlag<HardEvent::V_S>(0);
}

// Block 1 returns without reaching SyncAll while block 0 waits in it.
extern "C" __global__ __aicore__ void broken_sync_all(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
    if (GetBlockIdx() == 0) SyncAll();
}

// An aligned 8-float copy: correct, used to show DataCopyPad-free kernels run on every chip and
// that a correct kernel passes (the checks are not always failing).
extern "C" __global__ __aicore__ void correct_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    pipe.InitBuffer(out, 1, kElems * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g, kElems);
    q.EnQue(t);
    t = q.DeQue<float>();
    LocalTensor<float> o = out.AllocTensor<float>();
    Muls(o, t, 2.0f, kElems);
    q.FreeTensor(t);
    out.EnQue(o);
    o = out.DeQue<float>();
    DataCopy(g, o, kElems);
    out.FreeTensor(o);
}

// x as 8 rows of 32 floats: columns [8, 24) of rows 0..6 (a strided copy, 7 blocks of 2 x 32 B,
// skipping 2 x 32 B between them) land as one 7 x 16 block in UB; times 2, they go to x[0, 112).
extern "C" __global__ __aicore__ void strided_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(q, 1, 7 * 16 * sizeof(float));
    pipe.InitBuffer(out, 1, 7 * 16 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g[8], DataCopyParams(7, 2, 2, 0));
    q.EnQue(t);
    t = q.DeQue<float>();
    LocalTensor<float> o = out.AllocTensor<float>();
    Muls(o, t, 2.0f, 7 * 16);
    q.FreeTensor(t);
    out.EnQue(o);
    o = out.DeQue<float>();
    DataCopy(g, o, 7 * 16);
    out.FreeTensor(o);
}

// The same strided copy from column 24: its last block ends 8 floats past x's end.
extern "C" __global__ __aicore__ void broken_strided_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 8 * 16 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g[24], DataCopyParams(8, 2, 2, 0));
    q.FreeTensor(t);
}

// DataCopyPad where the chip has none (310P).
extern "C" __global__ __aicore__ void pad_copy(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 64);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopyPad(t, g, DataCopyExtParams(1, 7 * sizeof(float), 0, 0, 0), DataCopyPadExtParams<float>());
    q.FreeTensor(t);
}

// Nine buffers of one TPosition allocated at once: the hardware has 8 event ids for them.
extern "C" __global__ __aicore__ void broken_live_buffers(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 9, 32);
    LocalTensor<float> t[9];
    for (auto& e : t) e = q.AllocTensor<float>();
    for (auto& e : t) q.FreeTensor(e);
}

// float -> bf16 with CAST_NONE: not a legal mode for that pair on A2.
extern "C" __global__ __aicore__ void broken_bf16_cast_mode(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 512);
    Cast(buf.Get<bfloat16_t>(64), buf.GetWithOffset<float>(64, 256), RoundMode::CAST_NONE, 64);
}

// ReduceSum of 1024 floats with an 8-float sharedTmpBuffer (16 are documented as needed).
extern "C" __global__ __aicore__ void broken_reduce_tmp(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096 + 64);
    LocalTensor<float> src = buf.Get<float>(1024);
    ReduceSum(buf.GetWithOffset<float>(8, 4096), src, buf.GetWithOffset<float>(8, 4096 + 32), 1024);
}

// Legal: 8 live buffers in VECIN and 8 in VECOUT at once (the limit is per position), and two
// EnQue in a row on a depth-2 queue.
extern "C" __global__ __aicore__ void correct_queue_limits(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> in;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 8, 32);
    pipe.InitBuffer(out, 8, 32);
    LocalTensor<float> a[8], b[8];
    for (int i = 0; i < 8; ++i) {
        a[i] = in.AllocTensor<float>();
        b[i] = out.AllocTensor<float>();
    }
    in.EnQue(a[0]);
    in.EnQue(a[1]);
    a[0] = in.DeQue<float>();
    a[1] = in.DeQue<float>();
    for (int i = 0; i < 8; ++i) {
        in.FreeTensor(a[i]);
        out.FreeTensor(b[i]);
    }
}

// A scalar GM store one element past x's 256 floats (the 310P path stores tensors under 32 B this way).
extern "C" __global__ __aicore__ void broken_scalar_gm_store(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    g.SetValue(kElems, 1.0f);
}

namespace {
// Gathers 64 floats from a 64-float source with byte offsets 4 * (j + first) + skew.
void GatherWithOffsets(float first, float skew) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 256);
    LocalTensor<float> src = buf.Get<float>(64), dst = buf.GetWithOffset<float>(64, 256), f = buf.GetWithOffset<float>(64, 512);
    LocalTensor<int32_t> offsets = buf.GetWithOffset<int32_t>(64, 512);
    Duplicate(src, 1.0f, 64);
    CreateVecIndex(f, first, 64);
    PipeBarrier<PIPE_V>();
    Muls(f, f, 4.0f, 64);
    PipeBarrier<PIPE_V>();
    Adds(f, f, skew, 64);
    PipeBarrier<PIPE_V>();
    Cast(offsets, f, RoundMode::CAST_RINT, 64);
    PipeBarrier<PIPE_V>();
    Gather(dst, src, offsets.ReinterpretCast<uint32_t>(), 0, 64);
}
}  // namespace

// The last offset points one element past src (the hardware would read unrelated UB).
extern "C" __global__ __aicore__ void broken_gather_outside_src(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { GatherWithOffsets(1.0f, 0.0f); }

// Byte offsets must be multiples of the element size.
extern "C" __global__ __aicore__ void broken_gather_unaligned_offset(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { GatherWithOffsets(0.0f, 2.0f); }

// Gathers 128 floats from a 64-float source, every offset 0: CANN's CPU-debug check sizes the
// source as the span of 2 repeats, (2 + 7) blocks = 72 floats, and stops the kernel.
extern "C" __global__ __aicore__ void broken_gather_short_src(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256 + 2 * 512);
    LocalTensor<float> src = buf.Get<float>(64), dst = buf.GetWithOffset<float>(128, 256), f = buf.GetWithOffset<float>(128, 768);
    Duplicate(src, 1.0f, 64);
    Duplicate(f, 0.0f, 128);
    PipeBarrier<PIPE_V>();
    LocalTensor<int32_t> offsets = buf.GetWithOffset<int32_t>(128, 768);
    Cast(offsets, f, RoundMode::CAST_RINT, 128);
    PipeBarrier<PIPE_V>();
    Gather(dst, src, offsets.ReinterpretCast<uint32_t>(), 0, 128);
}

// float -> int32_t with a round mode the twin does not model.
extern "C" __global__ __aicore__ void broken_cast_mode_int32(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * 256);
    LocalTensor<float> f = buf.Get<float>(64);
    Duplicate(f, 1.5f, 64);
    PipeBarrier<PIPE_V>();
    Cast(buf.GetWithOffset<int32_t>(64, 256), f, RoundMode::CAST_ROUND, 64);
}

// ---- workspace and tiling ----

// 512 bytes through GetUserWorkspace when the tiling gave the kernel 256.
extern "C" __global__ __aicore__ void broken_workspace_overrun(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    GlobalTensor<float> w;
    w.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace), 128);
}

// The workspace pointer used as is: its first bytes are the system workspace.
extern "C" __global__ __aicore__ void broken_system_workspace(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    GlobalTensor<float> w;
    w.SetGlobalBuffer((__gm__ float*)workspace, 64);
}

struct BrokenTiling {
    uint32_t n;
};

// A standard C++ tiling struct read without REGISTER_TILING_DEFAULT.
extern "C" __global__ __aicore__ void broken_unregistered_tiling(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA_WITH_STRUCT(BrokenTiling, t, tiling);
}

// ---- the soft SyncAll (310P's only cross-core barrier) ----

// Blocks 0 and 1 meet in the soft SyncAll on x[0..16) as int32; block 1 stores x[64..128) before
// it, block 0 loads it after. Before the SyncAll each block works ~3000 cycles on the vector unit
// (the cost model's clock). Zeroing: kHost the launch's x holds zeros already; kEarly every block
// zeroes the region in the kernel first (SyncAll.md's kernel-side initialisation); kLate block 1
// does so only after its work, so its zeroing may land after block 0 counts.
enum SoftZeroing { kHost, kEarly, kLate };
template <SoftZeroing zeroing> void SoftSync(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECOUT> buf;  // stored from (DataCopy: VECOUT only)
    TBuf<TPosition::VECIN> work, in;
    pipe.InitBuffer(buf, 512);
    pipe.InitBuffer(work, 16384);
    pipe.InitBuffer(in, 256);  // block 0's load (DataCopy: VECIN only)
    GlobalTensor<int32_t> sync;
    sync.SetGlobalBuffer((__gm__ int32_t*)x, 16);
    GlobalTensor<float> data;
    data.SetGlobalBuffer((__gm__ float*)x + 64, 64);
    LocalTensor<float> t = buf.Get<float>(64);
    auto zero = [&] {
        LocalTensor<int32_t> zeros = buf.GetWithOffset<int32_t>(16, 256);
        Duplicate(zeros, 0, 16);
        int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMte3);
        WaitFlag<HardEvent::V_MTE3>(eventVMte3);
        DataCopy(sync, zeros, 16);
    };
    if (zeroing == kEarly || (zeroing == kLate && GetBlockIdx() == 0)) zero();
    for (int i = 0; i < 32; ++i) {
        Duplicate(work.Get<float>(), float(i), 4096);
        PipeBarrier<PIPE_V>();
    }
    if (zeroing == kLate && GetBlockIdx() == 1) zero();
    if (GetBlockIdx() == 1) {
        Duplicate(t, 1.0f, 64);
        int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMte3);
        WaitFlag<HardEvent::V_MTE3>(eventVMte3);
        DataCopy(data, t, 64);
    }
    SyncAll(sync, buf.GetWithOffset<int32_t>(64, 256), 2);
    if (GetBlockIdx() == 0) DataCopy(in.Get<float>(64), data, 64);
}
extern "C" __global__ __aicore__ void correct_soft_sync(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { SoftSync<kHost>(x); }
extern "C" __global__ __aicore__ void correct_soft_sync_zeroed_in_kernel(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { SoftSync<kEarly>(x); }
extern "C" __global__ __aicore__ void broken_soft_sync_zeroed_late(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { SoftSync<kLate>(x); }

// In place: MTE3 overwrites x[0..64) that this core's MTE2 may still be loading.
extern "C" __global__ __aicore__ void broken_missing_mte2_mte3(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> in;    // loaded into (DataCopy: VECIN only)
    TBuf<TPosition::VECOUT> out;  // stored from (DataCopy: VECOUT only)
    pipe.InitBuffer(in, 256);
    pipe.InitBuffer(out, 256);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> a = in.Get<float>(64);
    LocalTensor<float> b = out.Get<float>(64);
    Duplicate(b, 1.0f, 64);
    int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(eventVMte3);
    WaitFlag<HardEvent::V_MTE3>(eventVMte3);
    DataCopy(a, g, 64);
    DataCopy(g, b, 64);
}

// Exp of bf16 data: no Ascend product has bf16 vector arithmetic.
extern "C" __global__ __aicore__ void broken_bf16_exp(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<bfloat16_t> t = buf.Get<bfloat16_t>();
    Exp(t, t, 64);
}

// Mins with its operands at x[3]: off the 32-byte grid.
extern "C" __global__ __aicore__ void broken_unaligned_mins(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> t = buf.Get<float>();
    Mins(t[3], t[3], 0.0f, 16);
}

// MulAddDst (dst = src0 * src1 + dst): x holds src0, src1 and dst, 64 floats each; dst goes back to x's fourth 64.
extern "C" __global__ __aicore__ void correct_mul_add_dst(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    constexpr int32_t n = 64;
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, 3 * n * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 4 * n);
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, g, 3 * n);
    int32_t eventMte2V = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
    SetFlag<HardEvent::MTE2_V>(eventMte2V);
    WaitFlag<HardEvent::MTE2_V>(eventMte2V);
    MulAddDst(t[2 * n], t, t[n], n);
    int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(eventVMte3);
    WaitFlag<HardEvent::V_MTE3>(eventVMte3);
    DataCopyPad(g[3 * n], t[2 * n], DataCopyExtParams(1, n * sizeof(float), 0, 0, 0));  // dst was loaded (VECIN): DataCopy stores only from VECOUT
}

// The activation kernels' vector APIs on x[0:64): Exp, Abs, Max(x, -x), Min(x, -x), Maxs(x, 0.5), Mins(x, 0.5)
// into x[64:128), ..., x[384:448).
extern "C" __global__ __aicore__ void correct_vector_math(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    constexpr int32_t n = 64;
    TPipe pipe;
    TBuf<TPosition::VECIN> in;    // x[0:64) (DataCopy loads only into VECIN)
    TBuf<TPosition::VECOUT> buf;  // results, from t[n] (DataCopy stores only from VECOUT)
    pipe.InitBuffer(in, n * sizeof(float));
    pipe.InitBuffer(buf, 8 * n * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 7 * n);
    LocalTensor<float> t = buf.Get<float>(), s = in.Get<float>();
    DataCopy(s, g, n);
    int32_t eventMte2V = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
    SetFlag<HardEvent::MTE2_V>(eventMte2V);
    WaitFlag<HardEvent::MTE2_V>(eventMte2V);
    Muls(t[7 * n], s, -1.0f, n);
    Exp(t[n], s, n);
    Abs(t[2 * n], s, n);
    Maxs(t[5 * n], s, 0.5f, n);
    Mins(t[6 * n], s, 0.5f, n);
    PipeBarrier<PIPE_V>();
    Max(t[3 * n], s, t[7 * n], n);
    Min(t[4 * n], s, t[7 * n], n);
    int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(eventVMte3);
    WaitFlag<HardEvent::V_MTE3>(eventVMte3);
    DataCopy(g[n], t[n], 6 * n);
}

// MulAddDst's level-0 form, continuous mask 20 over 4 repeats, src1 at block stride 0 and repeat
// stride 1 (a block per repeat, as Brcb's output): x holds src0 (4 rows of 64 floats), src1 (4
// blocks of 8) and dst (4 rows of 64) at 0, 256 and 288; dst goes back to x from 544.
extern "C" __global__ __aicore__ void correct_mul_add_dst_strided(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, 544 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 800);
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, g, 544);
    int32_t eventMte2V = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
    SetFlag<HardEvent::MTE2_V>(eventMte2V);
    WaitFlag<HardEvent::MTE2_V>(eventMte2V);
    MulAddDst(t[288], t, t[256], 20, 4, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
    int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(eventVMte3);
    WaitFlag<HardEvent::V_MTE3>(eventVMte3);
    DataCopyPad(g[544], t[288], DataCopyExtParams(1, 256 * sizeof(float), 0, 0, 0));  // dst was loaded (VECIN): DataCopy stores only from VECOUT
}

// The data paths of the copy APIs (数据搬运/<doc>.md, "具体支持的数据通路"): one copy between x and
// a TBuf of position P (test_twin_checks.py::test_copy_paths_follow_their_docs).
enum class PathApi { kDataCopyIn, kDataCopyStridedIn, kDataCopyOut, kPadIn, kPadOut };
template <PathApi api, TPosition P> void CopyPath(GM_ADDR x) {
    TPipe pipe;
    TBuf<P> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = buf.template Get<float>();
    if constexpr (api == PathApi::kDataCopyIn) {
        DataCopy(t, g, 64);
    } else if constexpr (api == PathApi::kDataCopyStridedIn) {
        DataCopy(t, g, DataCopyParams(2, 1, 1, 0));
    } else if constexpr (api == PathApi::kPadIn) {
        DataCopyPad(t, g, DataCopyExtParams(1, 7 * sizeof(float), 0, 0, 0), DataCopyPadExtParams<float>());
    } else {
        Duplicate(t, 1.0f, 64);
        int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMte3);
        WaitFlag<HardEvent::V_MTE3>(eventVMte3);
        if constexpr (api == PathApi::kDataCopyOut) {
            DataCopy(g, t, 64);
        } else {
            DataCopyPad(g, t, DataCopyExtParams(1, 7 * sizeof(float), 0, 0, 0));
        }
    }
}
#define AIRFUSE_COPY_PATH(name, api)                                                                                                  \
    extern "C" __global__ __aicore__ void path_##name##_vecin(GM_ADDR x, GM_ADDR, GM_ADDR) { CopyPath<api, TPosition::VECIN>(x); }     \
    extern "C" __global__ __aicore__ void path_##name##_vecout(GM_ADDR x, GM_ADDR, GM_ADDR) { CopyPath<api, TPosition::VECOUT>(x); }   \
    extern "C" __global__ __aicore__ void path_##name##_veccalc(GM_ADDR x, GM_ADDR, GM_ADDR) { CopyPath<api, TPosition::VECCALC>(x); }
AIRFUSE_COPY_PATH(data_copy_in, PathApi::kDataCopyIn)
AIRFUSE_COPY_PATH(data_copy_strided_in, PathApi::kDataCopyStridedIn)
AIRFUSE_COPY_PATH(data_copy_out, PathApi::kDataCopyOut)
AIRFUSE_COPY_PATH(pad_in, PathApi::kPadIn)
AIRFUSE_COPY_PATH(pad_out, PathApi::kPadOut)

// What rms_norm_rows.h did before: gamma loaded with DataCopyPad into a TBuf<VECCALC> (the default
// position, which only the 950PR/950DT's DataCopyPad may load into).
extern "C" __global__ __aicore__ void broken_copy_into_veccalc(GM_ADDR x, GM_ADDR, GM_ADDR) { CopyPath<PathApi::kPadIn, TPosition::VECCALC>(x); }

// Brcb with dstBlkStride 0, which Brcb.md leaves undefined (its pseudo-code reads 0 as 1).
extern "C" __global__ __aicore__ void broken_brcb_zero_block_stride(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> t = buf.Get<float>();
    Brcb(t[64], t, 1, BrcbRepeatParams(0, 8));
}

// Brcb whose 8 source floats lie inside the 8 blocks it writes (Brcb.md: src and dst may not use
// the same memory), though the two start at different addresses.
extern "C" __global__ __aicore__ void broken_brcb_overlap(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> t = buf.Get<float>();
    Brcb(t, t[32], 1, BrcbRepeatParams(1, 8));
}
