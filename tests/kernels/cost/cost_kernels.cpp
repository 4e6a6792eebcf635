// Small kernels whose modelled time can be worked out by hand (tests/kernels/test_twin_cost.py).
// Parameters: x (GM, kTiles * kTile floats per block, read and written), workspace, tiling.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr uint32_t kTile = 2048;  // 8 KB of float
constexpr uint32_t kTiles = 8;

// Loads `tiles` tiles, doubles them, stores them back, through queues of `buffers` buffers: with
// two, tile i + 1 loads while tile i is computed and stored.
void Stream(GM_ADDR x, uint32_t buffers, uint32_t tiles) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> in;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(in, buffers, kTile * sizeof(float));
    pipe.InitBuffer(out, buffers, kTile * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * kTile * kTiles, kTile * kTiles);
    for (uint32_t i = 0; i < tiles; ++i) {
        LocalTensor<float> a = in.AllocTensor<float>();
        DataCopy(a, g[i * kTile], kTile);
        in.EnQue(a);
        a = in.DeQue<float>();
        LocalTensor<float> b = out.AllocTensor<float>();
        Muls(b, a, 2.0f, kTile);
        in.FreeTensor(a);
        out.EnQue(b);
        b = out.DeQue<float>();
        DataCopy(g[i * kTile], b, kTile);
        out.FreeTensor(b);
    }
}
}  // namespace

extern "C" __global__ __aicore__ void cost_serial(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { Stream(x, 1, kTiles); }
extern "C" __global__ __aicore__ void cost_double_buffered(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { Stream(x, 2, kTiles); }

// Block i streams i + 1 tiles: the launch lasts as long as its last block.
extern "C" __global__ __aicore__ void cost_uneven(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    Stream(x, 2, uint32_t(GetBlockIdx()) % kTiles + 1);
}

// One tile in, scaled, out, ordered by explicit flags: the vector pipe idles at its WaitFlag
// until the load has landed, MTE3 until the vector result has.
extern "C" __global__ __aicore__ void cost_wait_flag(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;   // DataCopy loads only into VECIN
    TBuf<TPosition::VECOUT> out;  // and stores only from VECOUT
    pipe.InitBuffer(buf, kTile * sizeof(float));
    pipe.InitBuffer(out, kTile * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kTile * kTiles);
    LocalTensor<float> t = buf.Get<float>(), o = out.Get<float>();
    DataCopy(t, g, kTile);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Muls(o, t, 2.0f, kTile);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(g, o, kTile);
}

// The same tile loaded twice: the second load is a re-read, served by L2.
extern "C" __global__ __aicore__ void cost_reread(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, kTile * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kTile * kTiles);
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, g, kTile);
    PipeBarrier<PIPE_MTE2>();
    DataCopy(t, g, kTile);
}

// Block i does i rounds of vector work, then all meet in SyncAll, then each loads one tile:
// every block ends after the slowest block's work.
extern "C" __global__ __aicore__ void cost_sync_all(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, kTile * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    for (int64_t i = 0; i < GetBlockIdx(); ++i) {
        Duplicate(t, 0.0f, kTile);
        PipeBarrier<PIPE_V>();
    }
    SyncAll();
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * kTile, kTile);
    DataCopy(t, g, kTile);
}

// Both WholeReduceSum kernels below: x[0..512) loaded into `in` (VECIN: DataCopy loads only
// there), o[0..16) zeroed, reduce(o, in) on the vector unit, then o[0..16) (VECOUT: DataCopy
// stores only from there) stored back to x[512..].
template <class F> __aicore__ inline void ReduceIntoZeroed(GM_ADDR x, const F& reduce) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    TBuf<TPosition::VECOUT> out;
    pipe.InitBuffer(buf, 512 * sizeof(float));
    pipe.InitBuffer(out, 512 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 1024);
    LocalTensor<float> t = buf.Get<float>(), o = out.Get<float>();
    DataCopy(t, g, 512);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Duplicate(o, 0.0f, 16);
    PipeBarrier<PIPE_V>();
    reduce(o, t);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(g[512], o, 16);
}

// WholeReduceSum's documented semantics (tests/kernels/test_twin_cost.py): the sums of two calls
// at 512... Rows of 64 at a 128-float stride, results 2 apart: out[0, 2, 4, 6]; then 20-element
// repeats whose blocks are 2 blocks apart, repeats 8 blocks apart: out[8], out[9] = x[0..8) +
// x[16..24) + x[32..36), the same from x[64].
extern "C" __global__ __aicore__ void cost_whole_reduce_sum(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    ReduceIntoZeroed(x, [](const LocalTensor<float>& o, const LocalTensor<float>& t) {
        WholeReduceSum(o, t, 64, 4, 2, 1, 16);
        WholeReduceSum(o[8], t, 20, 2, 1, 2, 8);
    });
}

// WholeReduceSum with repeatTime 0 (tests/kernels/test_twin_cost.py): a call of no repeats over
// the zeroed sums, which must leave them zero.
extern "C" __global__ __aicore__ void cost_whole_reduce_sum_no_repeats(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    ReduceIntoZeroed(x, [](const LocalTensor<float>& o, const LocalTensor<float>& t) { WholeReduceSum(o, t, 64, 0, 1, 1, 8); });
}

// Sqrt, Brcb and the level-0 Mul as documented (tests/kernels/test_twin_cost.py): x holds 512
// floats in; out at 512: Sqrt of x[0..16); at 640: Brcb of x[0..16) (16 blocks of 8 copies); at
// 768: 4 repeats of Mul, mask 20, of x[256 + 64r ..] by the block of Brcb's output r (block
// stride 0, repeat stride 1), the rest of each 64-float row left at 0; at 576: 2 repeats of Div,
// mask 12, of x[256 + 16r ..] by Brcb's block r (Div.md's level-0 form: repeat strides 2 and 1).
extern "C" __global__ __aicore__ void cost_brcb_mul(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;   // x[0..512) (DataCopy loads only into VECIN)
    TBuf<TPosition::VECOUT> out;  // the results, o[k] going to x[512 + k] (DataCopy stores only from VECOUT)
    pipe.InitBuffer(buf, 512 * sizeof(float));
    pipe.InitBuffer(out, 512 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, 1024);
    LocalTensor<float> t = buf.Get<float>(), o = out.Get<float>();
    DataCopy(t, g, 512);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    Duplicate(o, 0.0f, 512);
    PipeBarrier<PIPE_V>();
    Sqrt(o, t, 16);
    Brcb(o[128], t, 2, BrcbRepeatParams(1, 8));
    PipeBarrier<PIPE_V>();
    Mul(o[256], t[256], o[128], 20, 4, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
    Div(o[64], t[256], o[128], 12, 2, BinaryRepeatParams(1, 1, 0, 2, 2, 1));
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(g[512], o, 512);
}
