// AirfuseAdd: z = x + y elementwise (same shape and dtype), computed in float32.
// The flat tensor is split over cores in 128-element-aligned ranges, then tiled through
// double-buffered queues; the last tile of a core may be unaligned (gm_copy.h: DataCopyPad, or
// on 310P whole blocks plus the block ending at the tile's end, which lies in the same core).
#include "gm_copy.h"
#include "add_tiling.h"

using namespace AscendC;
using namespace airfuse_kernel;

namespace {

template <typename T> class AddKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AirfuseAddTilingData& t) {
        t_ = t;
        uint32_t b = uint32_t(GetBlockIdx());
        uint64_t start = uint64_t(b) * t.elemsPerCore;
        count_ = b + 1 < t.usedCores ? t.elemsPerCore : (b + 1 == t.usedCores ? t.totalElems - start : 0);
        if (count_ == 0) return;  // a forced block_dim may leave the last cores idle
        // A tensor under one 32 B block (one core) moves in its natural layout.
        mover_ = Mover{t.alignedCopy != 0, t.alignedCopy != 0 && t.totalElems < kBlock<T>, kBlock<T>};
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, count_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + start, count_);
        zGm_.SetGlobalBuffer((__gm__ T*)z + start, count_);
        pipe_.InitBuffer(xQue_, t.bufferNum, t.tileElems * sizeof(T));
        pipe_.InitBuffer(yQue_, t.bufferNum, t.tileElems * sizeof(T));
        pipe_.InitBuffer(zQue_, t.bufferNum, t.tileElems * sizeof(T));
        if constexpr (!kIsFloat<T>) {
            pipe_.InitBuffer(wx_, t.tileElems * sizeof(float));
            pipe_.InitBuffer(wy_, t.tileElems * sizeof(float));
        }
    }

    __aicore__ inline void Process() {
        for (uint64_t done = 0; done < count_; done += t_.tileElems) {
            uint32_t n = uint32_t(count_ - done < t_.tileElems ? count_ - done : t_.tileElems);
            CopyIn(done, n);
            Compute(mover_.Span(n));
            CopyOut(done, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
        // x is queued before y is loaded, so its flag fires when x lands: Compute casts x while y
        // is still on its way (a flag fires once all MTE2 work issued before it has landed).
        LocalTensor<T> x = xQue_.AllocTensor<T>();
        mover_.In(x, xGm_, off, n);
        xQue_.EnQue(x);
        LocalTensor<T> y = yQue_.AllocTensor<T>();
        mover_.In(y, yGm_, off, n);
        yQue_.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t n) {
        LocalTensor<T> x = xQue_.DeQue<T>();
        LocalTensor<T> z = zQue_.AllocTensor<T>();
        if constexpr (kIsFloat<T>) {
            LocalTensor<T> y = yQue_.DeQue<T>();
            Add(z, x, y, n);
            xQue_.FreeTensor(x);
            yQue_.FreeTensor(y);
        } else {
            // Each input is cast as soon as it has landed and its buffer freed for the next tile.
            LocalTensor<float> xf = wx_.Get<float>(), yf = wy_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, n);
            xQue_.FreeTensor(x);
            LocalTensor<T> y = yQue_.DeQue<T>();
            Cast(yf, y, RoundMode::CAST_NONE, n);
            yQue_.FreeTensor(y);
            PipeBarrier<PIPE_V>();
            Add(xf, xf, yf, n);
            PipeBarrier<PIPE_V>();
            FromFloat(z, xf, n);
        }
        zQue_.EnQue(z);  // before the barrier: the store need not wait for it
        if constexpr (!kIsFloat<T>) PipeBarrier<PIPE_V>();  // the next tile's Cast overwrites wx_
    }

    __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
        LocalTensor<T> z = zQue_.DeQue<T>();
        if (mover_.natural) {
            StoreScalar(zGm_, z, off, n);
        } else {
            mover_.Out(zGm_, z, off, n);
        }
        zQue_.FreeTensor(z);
    }

    AirfuseAddTilingData t_;
    uint64_t count_ = 0;
    Mover mover_{};
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> yQue_;
    TQue<QuePosition::VECOUT, 1> zQue_;
    TBuf<TPosition::VECCALC> wx_;
    TBuf<TPosition::VECCALC> wy_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<T> zGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void airfuse_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseAddTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseAddTilingData, t, tiling);
    AddKernel<DTYPE_X> op;
    op.Init(x, y, z, t);
    op.Process();
}
