// The RMSNorm forward's split strategy (tiling key kRmsNormSplitKey): rows too long for UB. A core
// takes its rows one at a time, each in column chunks of colsPerChunk through double-buffered
// queues, in two passes: pass 1 sums x^2 chunk by chunk (the residual form also adds x1 and x2 and
// stores x), pass 2 reads x again (the residual form the x it stored) with gamma's chunk and scales.
#pragma once
#include "fwd_base.h"
#include "fwd_chunks_tiling.h"

namespace airfuse_kernel {

template <typename T, typename G, bool kResidual> class RmsNormFwdSplit : public RmsNormFwdBase<T, G, kResidual> {
    using Base = RmsNormFwdBase<T, G, kResidual>;
    using Base::gammaGm_, Base::mover_, Base::numCols_, Base::pipe_, Base::rows_, Base::x2Gm_, Base::x2Que_, Base::xGm_, Base::xOutGm_,
        Base::xOutQue_, Base::xQue_, Base::yGm_, Base::yQue_;

public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR xOut,
                                const AirfuseRmsNormChunksTilingData& t) {
        t_ = t;
        this->InitBase(x, x2, gamma, y, rstd, xOut, t, t.rowStride * sizeof(T), 1);
        pipe_.InitBuffer(work_, t.floatCols * sizeof(float));
        if constexpr (kResidual && !kIsFloat<T>) pipe_.InitBuffer(work2_, t.floatCols * sizeof(float));  // x2's chunk as float
        pipe_.InitBuffer(gQue_, t.bufferNum, t.floatCols * sizeof(G));
        pipe_.InitBuffer(gammaF_, t.floatCols * sizeof(float));
        pipe_.InitBuffer(red_, t.redBytes);
    }

    __aicore__ inline void Process() {
        if (rows_.count == 0) return;
        this->BeginRstd();
        for (uint32_t i = 0; i < rows_.count; ++i) ProcessRow(i);
        this->EndRstd();
    }

private:
    __aicore__ inline void ProcessRow(uint32_t row) {
        uint32_t d = numCols_, c = t_.colsPerChunk;
        uint64_t base = uint64_t(row) * d;
        float total = 0.0f;
        for (uint32_t first = 0; first < d; first += c) {
            uint32_t n = d - first < c ? d - first : c;
            LocalTensor<T> x = this->CopyInChunk(xQue_, xGm_, base + first, n);
            if constexpr (kResidual) {
                LocalTensor<T> x2 = this->CopyInChunk(x2Que_, x2Gm_, base + first, n);
                LocalTensor<T> sum = xOutQue_.template AllocTensor<T>();
                LocalTensor<float> b;
                if constexpr (!kIsFloat<T>) b = work2_.Get<float>();
                this->AddRounded(sum, x, x2, mover_.Span(n), work_.Get<float>(), b);
                x2Que_.FreeTensor(x2);
                total += SumSquares(sum, n);
                this->ChunkOut(xOutQue_, sum, xOutGm_, base + first, n);
            } else {
                total += SumSquares(x, n);
            }
            xQue_.FreeTensor(x);
        }
        if constexpr (kResidual) {
            // Pass 2 loads the x this core just stored.
            int32_t eventMTE3MTE2 = GetTPipePtr()->FetchEventID(HardEvent::MTE3_MTE2);
            SetFlag<HardEvent::MTE3_MTE2>(eventMTE3MTE2);
            WaitFlag<HardEvent::MTE3_MTE2>(eventMTE3MTE2);
        }
        const GlobalTensor<T>& normed = kResidual ? xOutGm_ : xGm_;
        float rv = this->Rstd(total);
        for (uint32_t first = 0; first < d; first += c) {
            uint32_t n = d - first < c ? d - first : c;
            LocalTensor<T> x = this->CopyInChunk(xQue_, normed, base + first, n);
            LocalTensor<G> gq = gQue_.AllocTensor<G>();
            mover_.In(gq, gammaGm_, first, n);
            gQue_.EnQue(gq);
            gq = gQue_.DeQue<G>();
            LocalTensor<float> g = AsFloat(gq, gammaF_.Get<float>(), mover_.Span(n));
            LocalTensor<T> y = yQue_.template AllocTensor<T>();
            Scale(x, y, g, rv, mover_.Span(n));
            xQue_.FreeTensor(x);
            gQue_.FreeTensor(gq);
            this->ChunkOut(yQue_, y, yGm_, base + first, n);
        }
        this->PutRstd(rv, row);
    }

    // Sum of x^2 over n elements held in the mover's layout (its repeated window head zeroed).
    __aicore__ inline float SumSquares(const LocalTensor<T>& x, uint32_t n) {
        uint32_t span = mover_.Span(n);
        LocalTensor<float> w = work_.Get<float>();
        LocalTensor<float> xf = AsFloat(x, w, span);
        Mul(w, xf, xf, span);
        PipeBarrier<PIPE_V>();
        mover_.ZeroRepeat(w, n);
        LocalTensor<float> dst = red_.Get<float>(8);
        ReduceSum(dst, w, red_.GetWithOffset<float>(t_.reduceTmpBytes / sizeof(float), 32), span);
        return ReadScalar(dst);
    }

    __aicore__ inline void Scale(const LocalTensor<T>& x, const LocalTensor<T>& y, const LocalTensor<float>& g, float rv, uint32_t n) {
        LocalTensor<float> w = work_.Get<float>();
        LocalTensor<float> xf = AsFloat(x, w, n);
        LocalTensor<float> out = w;
        if constexpr (kIsFloat<T>) out = y;
        Muls(out, xf, rv, n);
        PipeBarrier<PIPE_V>();
        Mul(out, out, g, n);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(y, out, n);
        }
        PipeBarrier<PIPE_V>();  // the next chunk's first vector op overwrites work_
    }

    AirfuseRmsNormChunksTilingData t_;
    TQue<QuePosition::VECIN, 1> gQue_;
    TBuf<TPosition::VECCALC> work_;
    TBuf<TPosition::VECCALC> work2_;
    // GM loads land in VECIN (or VECOUT, DataCopyPad only): the copy docs' data paths (twin/README.md).
    TBuf<TPosition::VECIN> gammaF_;
    TBuf<TPosition::VECCALC> red_;
};

}  // namespace airfuse_kernel
