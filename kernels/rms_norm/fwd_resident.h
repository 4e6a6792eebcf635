// The RMSNorm forward's resident strategy (tiling key kRmsNormResidentKey): a core moves its rows
// in steps of rowsPerLoop rows, each step whole in UB, through double-buffered queues (the next
// step loads while this one is computed). A step's rows go through each vector op together where
// the layout allows (all but 310P rows under 32 B, which are packed and go row by row): one Cast,
// Mul and row-sum pass for all of them, so the barriers and latencies between dependent ops are
// paid per step, not per row. The row sums meet the scalar unit once per step (one V -> S wait),
// which computes each row's rstd while the vector unit scales the rows before it.
#pragma once
#include "fwd_base.h"
#include "fwd_resident_tiling.h"
#include "fwd_rstd_vector.h"

namespace airfuse_kernel {

template <typename T, typename G, bool kResidual> class RmsNormFwdResident : public RmsNormFwdBase<T, G, kResidual> {
    using Base = RmsNormFwdBase<T, G, kResidual>;
    using Base::gammaGm_, Base::mover_, Base::numCols_, Base::pipe_, Base::rows_, Base::rstdOut_, Base::rstdQue_, Base::x2Gm_, Base::x2Que_,
        Base::xGm_, Base::xOutGm_, Base::xOutQue_, Base::xQue_, Base::yGm_, Base::yQue_;

public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR xOut,
                                const AirfuseRmsNormResidentTilingData& t) {
        t_ = t;
        uint32_t stepFloats = t.rowsPerLoop * t.rowStride;
        this->InitBase(x, x2, gamma, y, rstd, xOut, t, stepFloats * sizeof(T), t.rowsPerLoop);
        pipe_.InitBuffer(work_, stepFloats * sizeof(float));
        // Half/bf16: x2 as float (the residual add), then the squares, so x as float stays in work_ for the scaling.
        if constexpr (!kIsFloat<T>) pipe_.InitBuffer(work2_, stepFloats * sizeof(float));
        pipe_.InitBuffer(gammaF_, t.rowStride * sizeof(float));
        if constexpr (!kIsFloat<G>) pipe_.InitBuffer(gammaRow_, RoundUpTo(t.numCols, kBlock<G>) * sizeof(G));
        pipe_.InitBuffer(red_, t.redBytes);
        if (t.rstdVecBytes) rstdVec_.Init(pipe_, t.rstdVecBytes, t.rowsPerLoop, t.alignedCopy != 0, t.epsilon, t.avgFactor);
        if (t.outStageBytes) pipe_.InitBuffer(yStage_, t.outStageBytes);
        if (kResidual && t.outStageBytes) pipe_.InitBuffer(xStage_, t.outStageBytes);
    }

    __aicore__ inline void Process() {
        if (rows_.count == 0) return;
        this->BeginRstd();
        if (mover_.natural) yOut_.Init(yGm_, yStage_.Get<T>());
        if (kResidual && mover_.natural) xOut_.Init(xOutGm_, xStage_.Get<T>());
        uint32_t span = mover_.Span(numCols_), stride = t_.rowStride;
        bool prefetch = t_.bufferNum > 1, vecRstd = t_.rstdVecBytes != 0;
        if (vecRstd) rstdVec_.BuildTables();
        LocalTensor<float> g = gammaF_.Get<float>(), w = work_.Get<float>(), sq = w;
        if constexpr (!kIsFloat<T>) sq = work2_.Get<float>();
        LoadStep(0);
        TEventID gammaIn{};
        for (uint32_t done = 0, n = 0; done < rows_.count; done += n) {
            n = StepRows(done);
            // Ops over the step's rows at once cover n * stride elements (the padding between
            // rows too, never stored); 310P rows under 32 B are packed, so row by row.
            uint32_t together = mover_.natural ? 1 : n, width = mover_.natural ? span : (n - 1) * stride + span;
            bool more = done + n < rows_.count;
            LocalTensor<T> x = xQue_.template DeQue<T>(), x2, sum;
            if constexpr (kResidual) x2 = x2Que_.template DeQue<T>();
            // gamma is read once per core, after the first step's rows, which it would otherwise delay.
            if (done == 0) gammaIn = LoadGamma(g);
            if (prefetch && more) LoadStep(done + n);
            if constexpr (kResidual) {
                sum = xOutQue_.template AllocTensor<T>();
                for (uint32_t i = 0; i < n; i += together)
                    this->AddRounded(sum[i * stride], x[i * stride], x2[i * stride], width, w[i * stride], sq[i * stride]);
                // x leaves as soon as it is computed, its store beside the norm's vector work.
                RowsOutKeep(xOutQue_, sum, xOutGm_, xOut_, done, n);
            }
            const LocalTensor<T>& normed = kResidual ? sum : x;
            for (uint32_t i = 0; i < n; i += together) {
                LocalTensor<float> xf = AsFloat(normed[i * stride], w[i * stride], width);
                Mul(sq[i * stride], xf, xf, width);
            }
            PipeBarrier<PIPE_V>();
            // Before the scalar rstd's V -> S wait, which then also orders the last store of r's
            // buffer (the queue's MTE3 -> V) before the scalar unit writes it.
            LocalTensor<T> y = yQue_.template AllocTensor<T>();
            LocalTensor<float> r;
            if (!mover_.aligned) r = rstdQue_.template AllocTensor<float>();
            for (uint32_t i = 0; i < n; ++i) mover_.ZeroRepeat(sq[i * stride], numCols_);
            if (vecRstd) {
                ScaleStepOnVector(normed, y, r, sq, g, n, done, done == 0 ? &gammaIn : nullptr, !more);
            } else {
                ScaleStepOnScalar(normed, y, r, sq, g, n, done == 0 ? &gammaIn : nullptr);
            }
            xQue_.FreeTensor(x);
            if constexpr (kResidual) x2Que_.FreeTensor(x2);
            if (!prefetch && more) LoadStep(done + n);
            if constexpr (kResidual) xOutQue_.FreeTensor(sum);
            if (!mover_.aligned && !vecRstd) this->CopyOutRstd(r, done, n);
            RowsOutKeep(yQue_, y, yGm_, yOut_, done, n);
            yQue_.FreeTensor(y);
        }
        this->EndRstd();
        if (mover_.natural) yOut_.Finish();
        if (kResidual && mover_.natural) xOut_.Finish();
    }

private:
    // The step's rstd on the vector unit (fwd_rstd_vector.h) and y's rows scaled and cast, all rows
    // at once; rstd leaves as soon as computed (A2), beside the scaling. `gammaIn`: the first step
    // waits for gamma and casts it.
    __aicore__ inline void ScaleStepOnVector(const LocalTensor<T>& normed, const LocalTensor<T>& y, LocalTensor<float>& r, const LocalTensor<float>& sq,
                                             const LocalTensor<float>& g, uint32_t n, uint32_t done, const TEventID* gammaIn, bool last) {
        uint32_t span = mover_.Span(numCols_), stride = t_.rowStride, width = (n - 1) * stride + span;
        rstdVec_.LayEpsilon(n);
        RowSums(true, rstdVec_.Sums(), sq, stride, n, span, RowSumsScratch(), t_.reduceTmpBytes / sizeof(float), kCompactSums);
        PipeBarrier<PIPE_V>();  // RowSums read the squares and wrote the sums Compute reads
        if (gammaIn) GammaAsFloat(g, *gammaIn);  // Compute's first barrier follows
        rstdVec_.Compute(r, n, rstdOut_);
        if (!mover_.aligned) this->CopyOutRstd(r, done, n, false);
        // 310P: the launch's last rstd values leave now (whole blocks: nothing is moved), beside
        // the scaling, not queued on MTE3 behind y's last store.
        if (mover_.aligned && last && n % 8 == 0) rstdOut_.Finish();
        // x as float: half/bf16 in work_ (the squares went to work2_), float rows themselves.
        LocalTensor<float> xf = work_.Get<float>(), out = xf;
        if constexpr (kIsFloat<T>) {
            xf = normed;
            out = y;
        }
        rstdVec_.Scale(out, xf, g, n, span, stride);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(y, out, width);
        }
        PipeBarrier<PIPE_V>();  // the next step's first vector op overwrites work_
    }

    // The step's rstd on the scalar unit, one V -> S wait a step (ScaleRows), and y's rows scaled
    // and cast (310P rows under 32 B one by one, as they are packed).
    __aicore__ inline void ScaleStepOnScalar(const LocalTensor<T>& normed, const LocalTensor<T>& y, LocalTensor<float>& r, const LocalTensor<float>& sq,
                                             const LocalTensor<float>& g, uint32_t n, const TEventID* gammaIn) {
        uint32_t span = mover_.Span(numCols_), stride = t_.rowStride;
        uint32_t together = mover_.natural ? 1 : n, width = mover_.natural ? span : (n - 1) * stride + span;
        RowSums(!mover_.aligned, red_.Get<float>(), sq, stride, n, span, RowSumsScratch(), t_.reduceTmpBytes / sizeof(float));
        int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
        SetFlag<HardEvent::V_S>(eventVS);
        WaitFlag<HardEvent::V_S>(eventVS);
        if (gammaIn) GammaAsFloat(g, *gammaIn);  // a barrier follows before gamma's first Mul
        LocalTensor<float> w = work_.Get<float>();
        for (uint32_t i = 0; i < n; i += together) {
            // x as float: half/bf16 in work_ (the squares went to work2_), float rows themselves.
            LocalTensor<float> xf = w[i * stride], out = w[i * stride];
            if constexpr (kIsFloat<T>) {
                xf = normed[i * stride];
                out = y[i * stride];
            }
            ScaleRows(out, xf, g, r, i, together, span, stride);
            if constexpr (!kIsFloat<T>) {
                PipeBarrier<PIPE_V>();
                FromFloat(y[i * stride], out, width);
            }
        }
        PipeBarrier<PIPE_V>();  // the next step's first vector op overwrites work_
        int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next step's sums overwrite what S read
        SetFlag<HardEvent::S_V>(eventSV);
        WaitFlag<HardEvent::S_V>(eventSV);
    }

    // RowSums' scratch: red_ after a step's sums (a block per row, which the vector rstd leaves unused).
    __aicore__ inline LocalTensor<float> RowSumsScratch() { return red_.GetWithOffset<float>(t_.redBytes / 4 - SumsFloats(), SumsFloats() * 4); }

    // gamma into gammaF_ when float, else into its stage gammaRow_ (GammaAsFloat casts it).
    __aicore__ inline TEventID LoadGamma(const LocalTensor<float>& g) {
        if constexpr (kIsFloat<G>) {
            return this->LoadGammaInto(g);
        } else {
            return this->LoadGammaInto(gammaRow_.Get<G>());
        }
    }

    // Waits for gamma's load and casts it to float (half/bf16), the cast ordered by the caller's next barrier.
    __aicore__ inline void GammaAsFloat(const LocalTensor<float>& g, TEventID id) {
        this->WaitIn(id);
        if constexpr (!kIsFloat<G>) Cast(g, gammaRow_.Get<G>(), RoundMode::CAST_NONE, mover_.Span(numCols_));
    }

    // Rows first .. first + count of the step: out = xf * rstd * gamma (out and xf at row `first`,
    // rows `stride` floats apart), each row's rstd computed from its sum in red_ (after the caller's
    // V -> S wait) and kept for GM (rstdOut_'s stage on 310P, else r).
    __aicore__ inline void ScaleRows(const LocalTensor<float>& out, const LocalTensor<float>& xf, const LocalTensor<float>& g,
                                     LocalTensor<float>& r, uint32_t first, uint32_t count, uint32_t span, uint32_t stride) {
        for (uint32_t j = 0; j < count; ++j) {
            float rv = this->Rstd(red_.Get<float>().GetValue((first + j) * kSumStride));
            Muls(out[j * stride], xf[j * stride], rv, span);
            if (mover_.aligned) {
                rstdOut_.Put(rv);
            } else {
                r.SetValue(first + j, rv);
            }
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t j = 0; j < count; ++j) Mul(out[j * stride], out[j * stride], g, span);
    }

    // Rows of the step starting at this core's row `done`.
    __aicore__ inline uint32_t StepRows(uint32_t done) const {
        return rows_.count - done < t_.rowsPerLoop ? rows_.count - done : t_.rowsPerLoop;
    }

    // red_ holds every row's sum of squares (kSumStride apart), then RowSums' scratch.
    __aicore__ inline uint32_t SumsFloats() const { return t_.rowsPerLoop * kSumStride; }

    // Issues the loads of the step starting at this core's row `first` (x, and x2 with kResidual).
    __aicore__ inline void LoadStep(uint32_t first) {
        uint32_t n = StepRows(first);
        RowsIn(xQue_, xGm_, first, n);
        if constexpr (kResidual) RowsIn(x2Que_, x2Gm_, first, n);
    }

    __aicore__ inline void RowsIn(TQue<QuePosition::VECIN, 1>& que, const GlobalTensor<T>& gm, uint32_t first, uint32_t n) {
        LocalTensor<T> x = que.AllocTensor<T>();
        mover_.RowsIn(x, gm, uint64_t(first) * numCols_, n, numCols_, t_.rowStride);
        que.EnQue(x);
    }

    // Stores n rows computed into `rows` (a buffer of `que`, which the caller frees), through
    // `stream` on 310P when rows are under 32 B.
    __aicore__ inline void RowsOutKeep(TQue<QuePosition::VECOUT, 1>& que, LocalTensor<T>& rows, const GlobalTensor<T>& gm, GmStream<T>& stream,
                                       uint32_t first, uint32_t n) {
        que.EnQue(rows);
        rows = que.DeQue<T>();
        if (mover_.natural) {
            stream.PutRows(rows, n, numCols_, t_.rowStride);
        } else {
            mover_.RowsOut(gm, rows, uint64_t(first) * numCols_, n, numCols_, t_.rowStride);
        }
    }

    AirfuseRmsNormResidentTilingData t_;
    GmStream<T> yOut_;
    GmStream<T> xOut_;
    TBuf<TPosition::VECCALC> work_;
    TBuf<TPosition::VECCALC> work2_;
    // GM loads land in VECIN (or VECOUT, DataCopyPad only): the copy docs' data paths (twin/README.md).
    TBuf<TPosition::VECIN> gammaF_;
    TBuf<TPosition::VECIN> gammaRow_;
    TBuf<TPosition::VECCALC> red_;
    RstdOnVector rstdVec_;
    TBuf<TPosition::VECOUT> yStage_;
    TBuf<TPosition::VECOUT> xStage_;
};

}  // namespace airfuse_kernel
