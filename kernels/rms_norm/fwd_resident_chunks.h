// The RMSNorm forward's resident-chunks strategy (tiling key kRmsNormResidentChunksKey): rows whose
// tiles fit in UB but whose float32 work does not (half/bf16 at 16384). A core moves one row per
// step, its tiles (x, y; with kResidual x1, x2, x and y) whole in UB, so the row is read from GM
// once; only the float work goes by column chunks of colsPerChunk: pass 1 sums each chunk's squares
// into its own block of red_ (the residual form first adds the chunk into x's tile), the scalar
// unit adds them once per row; pass 2 casts and scales each chunk. gamma stays in UB in its dtype
// for the whole core, cast a chunk at a time. The next row loads while this one is computed: with
// two buffers per queue (AirfuseRmsNorm), or, the residual form's four tiles fitting once, as soon
// as pass 1 has consumed x1 and x2. On 310P rows of whole 32 B blocks only (the tiling's choice).
#pragma once
#include "fwd_base.h"
#include "fwd_chunks_tiling.h"

namespace airfuse_kernel {

template <typename T, typename G, bool kResidual> class RmsNormFwdResidentChunks : public RmsNormFwdBase<T, G, kResidual> {
    using Base = RmsNormFwdBase<T, G, kResidual>;
    using Base::mover_, Base::numCols_, Base::pipe_, Base::rows_, Base::x2Gm_, Base::x2Que_, Base::xGm_, Base::xOutGm_, Base::xOutQue_,
        Base::xQue_, Base::yGm_, Base::yQue_;

public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR xOut,
                                const AirfuseRmsNormChunksTilingData& t) {
        t_ = t;
        this->InitBase(x, x2, gamma, y, rstd, xOut, t, t.rowStride * sizeof(T), 1);
        pipe_.InitBuffer(work_, t.floatCols * sizeof(float));
        if constexpr (kResidual && !kIsFloat<T>) pipe_.InitBuffer(work2_, t.floatCols * sizeof(float));  // x2's chunk as float
        if constexpr (!kIsFloat<G>) pipe_.InitBuffer(gammaF_, t.floatCols * sizeof(float));
        pipe_.InitBuffer(gammaRow_, RoundUpTo(t.numCols, kBlock<G>) * sizeof(G));
        pipe_.InitBuffer(red_, t.redBytes);
    }

    __aicore__ inline void Process() {
        if (rows_.count == 0) return;
        this->BeginRstd();
        uint32_t d = numCols_, c = t_.colsPerChunk, chunks = CeilDivU(d, c);
        LocalTensor<G> gRow = gammaRow_.Get<G>();
        LocalTensor<float> w = work_.Get<float>(), sums = red_.Get<float>(), x2f;
        if constexpr (kResidual && !kIsFloat<T>) x2f = work2_.Get<float>();
        LocalTensor<float> scratch = red_.GetWithOffset<float>(t_.redBytes / 4 - chunks * kSumStride, chunks * kSumStride * 4);
        bool prefetch = t_.bufferNum > 1;
        LoadRow(0);
        // gamma after the first row, which it would otherwise delay; first needed by its pass 2.
        TEventID gammaIn = this->LoadGammaInto(gRow);
        for (uint32_t row = 0; row < rows_.count; ++row) {
            bool more = row + 1 < rows_.count;
            LocalTensor<T> x = xQue_.template DeQue<T>(), x2, sum;
            if constexpr (kResidual) {
                x2 = x2Que_.template DeQue<T>();
                sum = xOutQue_.template AllocTensor<T>();
            }
            if (prefetch && more) LoadRow(row + 1);
            const LocalTensor<T>& normed = kResidual ? sum : x;
            for (uint32_t k = 0; k < chunks; ++k) {
                uint32_t first = k * c, n = d - first < c ? d - first : c;
                if constexpr (kResidual) this->AddRounded(sum[first], x[first], x2[first], n, w, x2f);
                LocalTensor<float> xf = AsFloat(normed[first], w, n);
                Mul(w, xf, xf, n);
                PipeBarrier<PIPE_V>();
                RowSums(!mover_.aligned, sums[k * kSumStride], w, RoundUpTo(n, 8), 1, n, scratch, t_.reduceTmpBytes / sizeof(float));
                // The next chunk overwrites work_ and the scratch: kept so this loop does not lean on RowSums' insides.
                PipeBarrier<PIPE_V>();  // redundant-sync: chunk-sums-then-next-chunk
            }
            if constexpr (kResidual) {
                xQue_.FreeTensor(x);
                x2Que_.FreeTensor(x2);
                if (!prefetch && more) LoadRow(row + 1);
                xOutQue_.EnQue(sum);
                sum = xOutQue_.template DeQue<T>();
                mover_.Out(xOutGm_, sum, uint64_t(row) * d, d);
            }
            int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
            SetFlag<HardEvent::V_S>(eventVS);
            WaitFlag<HardEvent::V_S>(eventVS);
            float total = 0.0f;
            for (uint32_t k = 0; k < chunks; ++k) total += sums.GetValue(k * kSumStride);
            float rv = this->Rstd(total);
            int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next row's sums overwrite what S read
            SetFlag<HardEvent::S_V>(eventSV);
            WaitFlag<HardEvent::S_V>(eventSV);
            if (row == 0) this->WaitIn(gammaIn);
            LocalTensor<T> y = yQue_.template AllocTensor<T>();
            for (uint32_t first = 0; first < d; first += c) ScaleChunk(y, normed, gRow, first, d - first < c ? d - first : c, rv);
            if constexpr (!kResidual) {
                xQue_.FreeTensor(x);
                if (!prefetch && more) LoadRow(row + 1);
            }
            // First: its MTE3 -> S wait then covers the last row's stores, not this row's y.
            this->PutRstd(rv, row);
            if constexpr (kResidual) xOutQue_.FreeTensor(sum);
            this->ChunkOut(yQue_, y, yGm_, uint64_t(row) * d, d);
        }
        this->EndRstd();
    }

private:
    // y's columns first .. first + n = x's * rstd * gamma's, through float chunks (float rows and
    // gamma are read in place).
    __aicore__ inline void ScaleChunk(const LocalTensor<T>& y, const LocalTensor<T>& normed, const LocalTensor<G>& gRow, uint32_t first, uint32_t n,
                                      float rv) {
        LocalTensor<float> w = work_.Get<float>(), out = w, xf = w, g;
        if constexpr (kIsFloat<G>) {
            g = gRow[first];
        } else {
            g = gammaF_.Get<float>();
            Cast(g, gRow[first], RoundMode::CAST_NONE, n);
        }
        if constexpr (kIsFloat<T>) {
            out = y[first];
            xf = normed[first];
        } else {
            Cast(w, normed[first], RoundMode::CAST_NONE, n);
        }
        PipeBarrier<PIPE_V>();
        Muls(out, xf, rv, n);
        PipeBarrier<PIPE_V>();
        Mul(out, out, g, n);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(y[first], out, n);
        }
        PipeBarrier<PIPE_V>();  // the next chunk overwrites work_ and gamma's float chunk
    }

    // Issues row `row`'s loads (x, and x2 with kResidual), each a tile of its queue.
    __aicore__ inline void LoadRow(uint32_t row) {
        LocalTensor<T> x = xQue_.template AllocTensor<T>();
        mover_.In(x, xGm_, uint64_t(row) * numCols_, numCols_);
        xQue_.EnQue(x);
        if constexpr (kResidual) {
            LocalTensor<T> x2 = x2Que_.template AllocTensor<T>();
            mover_.In(x2, x2Gm_, uint64_t(row) * numCols_, numCols_);
            x2Que_.EnQue(x2);
        }
    }

    AirfuseRmsNormChunksTilingData t_;
    TBuf<TPosition::VECCALC> work_;
    TBuf<TPosition::VECCALC> work2_;
    TBuf<TPosition::VECCALC> gammaF_;
    // GM loads land in VECIN (or VECOUT, DataCopyPad only): the copy docs' data paths (twin/README.md).
    TBuf<TPosition::VECIN> gammaRow_;
    TBuf<TPosition::VECCALC> red_;
};

}  // namespace airfuse_kernel
