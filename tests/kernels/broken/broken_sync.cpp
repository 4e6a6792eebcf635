// Deliberately broken kernels of synchronisation: each breaks one ordering rule of the pipes
// (twin/README.md "Pipes and events") that the twin must catch (tests/kernels/test_twin_checks.py),
// beside broken_kernels.cpp. Parameters: x (GM, 256 floats), workspace, tiling.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr uint32_t kElems = 256;
}

// A freed VECIN buffer holds V_MTE2 id 0 until its next AllocTensor; a literal id 0 sets it twice.
extern "C" __global__ __aicore__ void broken_reused_event_id(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g, kElems);
    q.EnQue(t);
    t = q.DeQue<float>();
    q.FreeTensor(t);
    SetFlag<HardEvent::V_MTE2>(0);
    WaitFlag<HardEvent::V_MTE2>(0);
}

// The user's WaitFlag consumes the freed buffer's flag; TPipe's destructor then waits forever.
extern "C" __global__ __aicore__ void broken_stolen_queue_flag(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    LocalTensor<float> t = q.AllocTensor<float>();
    q.FreeTensor(t);
    WaitFlag<HardEvent::V_MTE2>(0);
}

extern "C" __global__ __aicore__ void broken_wait_never_set(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    WaitFlag<HardEvent::MTE2_V>(GetTPipePtr()->FetchEventID(HardEvent::MTE2_V));
}

// Nine ids of one HardEvent held at once: the hardware has eight.
extern "C" __global__ __aicore__ void broken_too_many_event_ids(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    for (int i = 0; i < 9; ++i) pipe.AllocEventID<HardEvent::V_S>();
}

// ReleaseEventID of an id FetchEventID gave (ReleaseEventID.md: only ids AllocEventID returned).
extern "C" __global__ __aicore__ void broken_release_fetched_event_id(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TEventID id = pipe.FetchEventID<HardEvent::V_S>();
    SetFlag<HardEvent::V_S>(id);
    WaitFlag<HardEvent::V_S>(id);
    pipe.ReleaseEventID<HardEvent::V_S>(id);
}

// A vector op reads a tile MTE2 may still be loading.
extern "C" __global__ __aicore__ void broken_missing_mte2_v(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, kElems * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, g, kElems);
    Muls(t, t, 2.0f, kElems);
}

// MTE3 stores a tile the vector unit may still be writing (VECOUT: DataCopy stores only from
// there, and loads only into VECIN, so the tile is filled by the vector unit).
extern "C" __global__ __aicore__ void broken_missing_v_mte3(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    Duplicate(t, 1.0f, kElems);
    PipeBarrier<PIPE_V>();
    Muls(t, t, 2.0f, kElems);
    DataCopy(g, t, kElems);
    q.FreeTensor(t);
}

// The scalar unit reads a vector result without waiting for the vector pipe.
extern "C" __global__ __aicore__ void broken_missing_v_s(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> t = buf.Get<float>();
    Duplicate(t, 1.0f, 64);
    t.GetValue(0);
}

// Two dependent vector ops with no PipeBarrier<PIPE_V> between them.
extern "C" __global__ __aicore__ void broken_missing_vector_barrier(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 512);
    LocalTensor<float> a = buf.Get<float>(64);
    LocalTensor<float> b = buf.GetWithOffset<float>(64, 256);
    Duplicate(a, 1.0f, 64);
    PipeBarrier<PIPE_V>();
    Muls(b, a, 2.0f, 64);
    Muls(a, b, 2.0f, 64);
}

// MTE2 reads back GM this core's MTE3 may still be writing.
extern "C" __global__ __aicore__ void broken_missing_mte3_mte2(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECOUT> out;  // stored from (DataCopy: VECOUT only)
    TBuf<TPosition::VECIN> in;    // loaded into (DataCopy: VECIN only)
    pipe.InitBuffer(out, 256);
    pipe.InitBuffer(in, 256);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> a = out.Get<float>(64);
    Duplicate(a, 1.0f, 64);
    int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(eventVMte3);
    WaitFlag<HardEvent::V_MTE3>(eventVMte3);
    DataCopy(g, a, 64);
    DataCopy(in.Get<float>(64), g, 64);
}

// A vector op on a tensor whose buffer went back to the queue.
extern "C" __global__ __aicore__ void broken_use_after_free(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g, kElems);
    q.EnQue(t);
    t = q.DeQue<float>();
    q.FreeTensor(t);
    Muls(t, t, 2.0f, kElems);
}

// A freshly allocated buffer read before anything wrote it.
extern "C" __global__ __aicore__ void broken_unwritten_read(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, kElems * sizeof(float));
    LocalTensor<float> t = q.AllocTensor<float>();
    Muls(t, t, 2.0f, kElems);
    q.FreeTensor(t);
}

// Hardware SyncAll in an AIV_ONLY kernel: the scheduler that carries the flags is off.
extern "C" __global__ __aicore__ void broken_sync_all_kernel_type(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    SyncAll();
}

// Block 1 stores x[0..64) while block 0 loads it, with no SyncAll between (`synced`: with one).
template <bool synced> void CrossCore(GM_ADDR x) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
    TPipe pipe;
    TBuf<TPosition::VECOUT> out;  // block 1 stores from it (DataCopy: VECOUT only)
    TBuf<TPosition::VECIN> in;    // block 0 loads into it (DataCopy: VECIN only)
    pipe.InitBuffer(out, 256);
    pipe.InitBuffer(in, 256);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)x, kElems);
    LocalTensor<float> t = out.Get<float>(64);
    if (GetBlockIdx() == 1) {
        Duplicate(t, 1.0f, 64);
        int32_t eventVMte3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMte3);
        WaitFlag<HardEvent::V_MTE3>(eventVMte3);
        DataCopy(g, t, 64);
    }
    if (synced) SyncAll();
    if (GetBlockIdx() == 0) DataCopy(in.Get<float>(64), g, 64);
}
extern "C" __global__ __aicore__ void broken_cross_core_race(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { CrossCore<false>(x); }
extern "C" __global__ __aicore__ void correct_cross_core(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) { CrossCore<true>(x); }
