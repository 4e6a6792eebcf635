// What the strategy classes of AirfuseRmsNorm and AirfuseAddRmsNorm share (fwd_resident.h,
// fwd_resident_chunks.h, fwd_split.h; the entries kernels/rms_norm.cpp and add_rms_norm.cpp pick
// one by tiling key): y = x * rstd * gamma with rstd = 1 / sqrt(mean(x^2) + epsilon) over the last
// dim, all math in float32; with kResidual, x = x1 + x2 first (added in float32, rounded once to
// the row dtype, written out as x; y and rstd use that rounded x). Rows are split over cores
// (kernels/common.h MyRows); copies go through kernels/gm_copy.h (310P has no DataCopyPad).
// rstd is exact to float32: Sqrt and a divide, never the approximate Rsqrt.
#pragma once
#include "../gm_copy.h"
#include "../row_sums.h"

namespace airfuse_kernel {

// The rows, the GM tensors, the input and output queues and rstd's way out. `Tiling` is the
// strategy's tiling struct: each has the fields InitBase reads.
template <typename T, typename G, bool kResidual> class RmsNormFwdBase {
protected:
    // x2 and xOut are used only with kResidual (x is then x1). Queues of bufferNum buffers of
    // tileBytes for x, y (and x2, x); rstd leaves rstdRows values at a time (310P: through a stage).
    template <typename Tiling>
    __aicore__ inline void InitBase(GM_ADDR x, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR xOut, const Tiling& t,
                                    uint32_t tileBytes, uint32_t rstdRows) {
        numCols_ = t.numCols;
        epsilon_ = t.epsilon;
        avgFactor_ = t.avgFactor;
        rows_ = MyRows(t.rowsPerCore, t.rowsRemainder, t.rowCores);
        bool aligned = t.alignedCopy != 0;
        mover_ = Mover{aligned, aligned && t.numCols < kBlock<T>, kBlock<T>};
        uint64_t d = t.numCols;
        // Reads may run past this core's rows (whole blocks of short rows), never past x's end.
        xGm_.SetGlobalBuffer((__gm__ T*)x + rows_.start * d, (t.numRows - rows_.start) * d);
        yGm_.SetGlobalBuffer((__gm__ T*)y + rows_.start * d, rows_.count * d);
        rstdGm_.SetGlobalBuffer((__gm__ float*)rstd + rows_.start, rows_.count);
        gammaGm_.SetGlobalBuffer((__gm__ G*)gamma, d);
        pipe_.InitBuffer(xQue_, t.bufferNum, tileBytes);
        pipe_.InitBuffer(yQue_, t.bufferNum, tileBytes);
        if constexpr (kResidual) {
            x2Gm_.SetGlobalBuffer((__gm__ T*)x2 + rows_.start * d, (t.numRows - rows_.start) * d);
            xOutGm_.SetGlobalBuffer((__gm__ T*)xOut + rows_.start * d, rows_.count * d);
            pipe_.InitBuffer(x2Que_, t.bufferNum, tileBytes);
            pipe_.InitBuffer(xOutQue_, t.bufferNum, tileBytes);
        }
        if (aligned) {
            pipe_.InitBuffer(rstdStage_, t.rstdStageBytes);
        } else {
            pipe_.InitBuffer(rstdQue_, t.bufferNum, rstdRows * sizeof(float));
        }
    }

    // Starts and ends rstd's stream on 310P (its values leave in whole blocks, kernels/gm_copy.h).
    __aicore__ inline void BeginRstd() {
        if (mover_.aligned) rstdOut_.Init(rstdGm_, rstdStage_.Get<float>());
    }
    __aicore__ inline void EndRstd() {
        if (mover_.aligned) rstdOut_.Finish();
    }

    __aicore__ inline float Rstd(float sumSquares) const { return 1.0f / sqrt(sumSquares * avgFactor_ + epsilon_); }

    // Issues gamma's columns first .. first + count (0: all) into dst, in its dtype; returns its
    // MTE2 -> V flag, which WaitIn waits for just before gamma is first needed.
    __aicore__ inline TEventID LoadGammaInto(const LocalTensor<G>& dst, uint32_t first = 0, uint32_t count = 0) {
        mover_.In(dst[first], gammaGm_, first, count ? count : numCols_);
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }

    __aicore__ inline void WaitIn(TEventID id) {
        WaitFlag<HardEvent::MTE2_V>(id);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(id);
    }

    // sum = x1 + x2 in float32 (x1 as float into `a`, x2 as float into `b`), rounded once to T (the
    // residual stream's dtype); float rows are added directly.
    __aicore__ inline void AddRounded(const LocalTensor<T>& sum, const LocalTensor<T>& x1, const LocalTensor<T>& x2, uint32_t n,
                                      const LocalTensor<float>& a, const LocalTensor<float>& b) {
        if constexpr (kIsFloat<T>) {
            Add(sum, x1, x2, n);
        } else {
            Cast(a, x1, RoundMode::CAST_NONE, n);
            Cast(b, x2, RoundMode::CAST_NONE, n);
            PipeBarrier<PIPE_V>();
            Add(a, a, b, n);
            PipeBarrier<PIPE_V>();
            FromFloat(sum, a, n);
        }
        PipeBarrier<PIPE_V>();  // the sum is read next, and a, b overwritten
    }

    // Issues the copy of `count` elements from gm[offset] into a buffer of `que` and waits for it.
    __aicore__ inline LocalTensor<T> CopyInChunk(TQue<QuePosition::VECIN, 1>& que, const GlobalTensor<T>& gm, uint64_t offset, uint32_t count) {
        LocalTensor<T> x = que.AllocTensor<T>();
        mover_.In(x, gm, offset, count);
        que.EnQue(x);
        return que.DeQue<T>();
    }

    // `count` elements of `rows` (a buffer of `que`, computed by the vector unit) to gm[offset]; the buffer is freed.
    __aicore__ inline void ChunkOut(TQue<QuePosition::VECOUT, 1>& que, LocalTensor<T>& rows, const GlobalTensor<T>& gm, uint64_t offset,
                                    uint32_t count) {
        que.EnQue(rows);
        rows = que.DeQue<T>();
        mover_.Out(gm, rows, offset, count);
        que.FreeTensor(rows);
    }

    // One row's rstd, computed on the scalar unit, to GM.
    __aicore__ inline void PutRstd(float rv, uint32_t row) {
        if (mover_.aligned) {
            rstdOut_.Put(rv);
            return;
        }
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        // AllocTensor orders the buffer's last store (MTE3) before V only; the scalar write needs its own MTE3 -> S.
        int32_t eventMTE3S = GetTPipePtr()->FetchEventID(HardEvent::MTE3_S);
        SetFlag<HardEvent::MTE3_S>(eventMTE3S);
        WaitFlag<HardEvent::MTE3_S>(eventMTE3S);
        r.SetValue(0, rv);
        CopyOutRstd(r, row, 1);
    }

    // rstd values in `r` (a buffer of rstdQue_) to GM (910B; on 310P they leave through rstdOut_);
    // written by the scalar unit they need an S -> MTE3 order, the queue ordering V's only.
    __aicore__ inline void CopyOutRstd(LocalTensor<float>& r, uint32_t first, uint32_t count, bool scalarWritten = true) {
        if (scalarWritten) {
            int32_t eventSMTE3 = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
            SetFlag<HardEvent::S_MTE3>(eventSMTE3);
            WaitFlag<HardEvent::S_MTE3>(eventSMTE3);
        }
        rstdQue_.EnQue(r);
        r = rstdQue_.DeQue<float>();
        mover_.Out(rstdGm_, r, first, count);
        rstdQue_.FreeTensor(r);
    }

    uint32_t numCols_ = 0;
    float epsilon_ = 0.0f, avgFactor_ = 0.0f;
    RowRange rows_;
    Mover mover_{};
    GmStream<float> rstdOut_;
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> x2Que_;
    TQue<QuePosition::VECOUT, 1> xOutQue_;
    TQue<QuePosition::VECOUT, 1> yQue_;
    TQue<QuePosition::VECOUT, 1> rstdQue_;
    TBuf<TPosition::VECOUT> rstdStage_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> x2Gm_;
    GlobalTensor<T> xOutGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<float> rstdGm_;
    GlobalTensor<G> gammaGm_;
};

}  // namespace airfuse_kernel
