// AirfuseRmsNormGrad, resident rows (tiling key kRmsNormGradResidentKey): a core moves rowsPerLoop
// rows per step and takes them through each vector op together; per-row scalars once per step (on
// the vector unit for steps of >= 10 rows: a block per row by Brcb on A2, by Gather on 310P; else
// one MTE2 -> S wait for rstd, one V -> S wait for the row sums); dgamma summed per core in UB.
#pragma once
#include "grad_rows.h"

namespace airfuse_kernel {

template <typename T, typename G> class RmsNormGradResident : public RmsNormGradRows<T, G> {
    using Base = RmsNormGradRows<T, G>;
    using Base::a_, Base::acc_, Base::b_, Base::c_, Base::dxGm_, Base::dxOut_, Base::dxQue_, Base::dyGm_, Base::gammaF_, Base::gammaGm_,
          Base::inQue_, Base::mover_, Base::red_, Base::rowVec_, Base::rows_, Base::rstdQue_, Base::stage_, Base::t_,
          Base::vecRows_, Base::xGm_, Base::ColumnMode, Base::InHalf, Base::LoadRstd, Base::Partials, Base::ReduceDgamma,
          Base::RstdFloats, Base::StoreAcc;

public:
    __aicore__ inline void Process() {
        if (rows_.count > 0) {  // cores past usedCores only take part in the dgamma reduction
            if (mover_.natural) dxOut_.Init(dxGm_, stage_.template Get<T>());
            ProcessResident();
            if (mover_.natural) dxOut_.Finish();
        }
        ReduceDgamma();
    }

private:
    // Per step of n rows (X = x, A = dy, D scratch, all float, n * rowStride elements):
    //   A *= rstd; D = A * X (dy * xhat), summed over the rows into acc (dgamma); A *= gamma
    //   (rstd * dxhat); D = A * X (dxhat * xhat), row sums s; dx = A - X * (rstd^2 * s / d).
    // rstd goes into dy first: dx's two terms then need one row factor, not three (one pass a
    // step fewer than xhat = x * rstd and dx = rstd * dxhat - xhat * (rstd * s / d)).
    // Ops over the step's rows at once cover the padding between rows too (never stored). With
    // two buffers per queue the next step's rows are loaded while this one is computed: its copies
    // are issued right after this step's scalar unit has seen its rstd.
    __aicore__ inline void ProcessResident() {
        uint32_t d = t_.numCols, span = mover_.Span(d), stride = t_.rowStride, rpl = t_.rowsPerLoop;
        LocalTensor<float> g = gammaF_.template Get<float>();
        LocalTensor<float> acc = acc_.template Get<float>();
        LocalTensor<float> sums = red_.template Get<float>();
        LocalTensor<float> scratch = red_.template GetWithOffset<float>(t_.redBytes / 4 - rpl * kSumStride, rpl * kSumStride * 4);
        // 910B, float gamma: loaded straight into gammaF_ after the first step's loads, waited for
        // just before its first use, so its transfer does not delay the first step. Half/bf16
        // gamma is cast on the way in (InAsFloat), before the first step.
        bool lateGamma = kIsFloat<G> && !mover_.aligned;
        TEventID gammaIn = 0;
        if (lateGamma) {
            LoadStep(0);
            gammaIn = LoadGammaInto(gammaF_.template Get<G>());
        } else {
            mover_.InAsFloat(g, Partials().template ReinterpretCast<G>(), gammaGm_, d);
        }
        if (vecRows_ && mover_.aligned) {
            BuildRowTables();
        } else if (vecRows_) {
            Duplicate(rowVec_.template Get<float>(), 0.0f, int32_t(t_.rowVecBytes / sizeof(float)));
        }
        Duplicate(acc, 0.0f, span);
        // The first step's rstd copy overwrites rowVec_'s zeros (acc's first reader comes after the step's own barriers).
        PipeBarrier<PIPE_V>();
        bool prefetch = t_.bufferNum > 1;
        if (!lateGamma) LoadStep(0);
        for (uint32_t done = 0; done < rows_.count; done += rpl) {
            uint32_t n = rows_.count - done < rpl ? rows_.count - done : rpl;
            uint32_t width = (n - 1) * stride + span;
            LocalTensor<T> in = inQue_.template DeQue<T>();
            LocalTensor<float> r = rstdQue_.template DeQue<float>();
            if (!vecRows_) WaitMte2ForScalar();
            bool more = done + rpl < rows_.count;
            if (prefetch && more) LoadStep(done + rpl);
            LocalTensor<T> x = in, dy = in[InHalf()];
            LocalTensor<float> X, A, D;
            if constexpr (kIsFloat<T>) {
                X = x;
                A = dy;
                D = c_.template Get<float>();
            } else {
                X = a_.template Get<float>();
                A = b_.template Get<float>();
                D = in.template ReinterpretCast<float>();  // x and dy are cast: their buffer holds n rows of float
                Cast(X, x, RoundMode::CAST_NONE, width);
                Cast(A, dy, RoundMode::CAST_NONE, width);
            }
            if (vecRows_) {
                RowScalarsIn(r, n);
                MulRows(A, A, RowVec(kRstdBlocks), RowFactor::kRowBlock, n, span, stride);
            } else {
                PipeBarrier<PIPE_V>();
                for (uint32_t i = 0; i < n; ++i) Muls(A[i * stride], A[i * stride], r.GetValue(i), span);
            }
            PipeBarrier<PIPE_V>();
            if (!ColumnMode()) {
                Mul(D, A, X, width);
                PipeBarrier<PIPE_V>();
            }
            if (lateGamma && done == 0) WaitGamma(gammaIn);
            // dgamma's rows summed a level per phase of the dx work below (each level alone
            // cost a barrier: 910B2 4096 x 128 bf16, 7 a step), the first level out of D into dx's
            // buffer, free until dx is written, so that D takes the row sums' products meanwhile.
            LocalTensor<T> dxl = dxQue_.template AllocTensor<T>();
            RowHalving dgamma{acc, D, dxl.template ReinterpretCast<float>(), ColumnMode() ? 0 : n, span, stride};
            if (vecRows_) {
                MulRows(A, A, g, RowFactor::kSharedRow, n, span, stride);
            } else {
                for (uint32_t i = 0; i < n; ++i) Mul(A[i * stride], A[i * stride], g, span);
            }
            DgammaLevel(dgamma, !more);
            PipeBarrier<PIPE_V>();
            Mul(D, A, X, width);
            DgammaLevel(dgamma, !more);
            PipeBarrier<PIPE_V>();
            for (uint32_t i = 0; i < n; ++i) mover_.ZeroRepeat(D[i * stride], d);
            // A2's vector row scalars take the sums packed (no compaction pass in RowScalarsOut).
            bool packed = vecRows_ && !mover_.aligned;
            RowSums(!mover_.aligned, packed ? RowVec(kMean) : sums, D, stride, n, span, scratch, t_.reduceTmpBytes / sizeof(float),
                    packed ? kCompactSums : kSumStride);
            DgammaLevel(dgamma, !more);
            // A2's vector row scalars give X's factor negated: half/bf16 dx in float is then one
            // MulAddDst into A (a pass and a barrier a step fewer than a Mul and a Sub), float dx
            // an Add into its output buffer.
            bool fused = packed && !kIsFloat<T>;
            if (vecRows_) {
                RowScalarsOut(n, dgamma, !more);
#if AIRFUSE_HAS_DATA_COPY_PAD
                if (fused) MulRows<true>(A, X, RowVec(kMeanBlocks), RowFactor::kRowBlock, n, span, stride);
#endif
                if (!fused) MulRows(X, X, RowVec(kMeanBlocks), RowFactor::kRowBlock, n, span, stride);
            } else {
                int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
                SetFlag<HardEvent::V_S>(eventVS);
                WaitFlag<HardEvent::V_S>(eventVS);
                for (uint32_t i = 0; i < n; ++i) {
                    float rv = r.GetValue(i);
                    Muls(X[i * stride], X[i * stride], rv * rv * sums.GetValue(i * kSumStride) * t_.avgFactor, span);
                }
                int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next step's sums overwrite what S read
                SetFlag<HardEvent::S_V>(eventSV);
                WaitFlag<HardEvent::S_V>(eventSV);
            }
            DgammaLevel(dgamma, !more);
            PipeBarrier<PIPE_V>();
            // The last step's dx (half/bf16, A2) is cast and stored in two parts, its last
            // castLater rows cast after the first part's store is issued: that store is the core's
            // last transfer before SyncAll.
            uint32_t castLater = !more && !kIsFloat<T> && !mover_.aligned && n > 1 ? n / 2 : 0;
            if (!kIsFloat<T> && !fused) {
                Sub(A, A, X, width);
                DgammaLevel(dgamma, !more);
                PipeBarrier<PIPE_V>();
            }
            while (DgammaLevel(dgamma, !more)) PipeBarrier<PIPE_V>();  // dx's buffer is written next
            if constexpr (kIsFloat<T>) {
                if (packed) {
                    Add(dxl, A, X, width);
                } else {
                    Sub(dxl, A, X, width);
                }
            } else {
                FromFloat(dxl, A, width - castLater * stride);
            }
            // The next step's casts overwrite a_ and b_ (c_): the queues' flags do not order them
            // after this step's vector work.
            PipeBarrier<PIPE_V>();
            inQue_.FreeTensor(in);
            rstdQue_.FreeTensor(r);
            if (!prefetch && more) LoadStep(done + rpl);
            dxQue_.EnQue(dxl);
            dxl = dxQue_.template DeQue<T>();
            uint64_t off = uint64_t(done) * d;
            if (mover_.natural) {
                dxOut_.PutRows(dxl, n, d, stride);
            } else {
                uint32_t first = n - castLater;
                mover_.RowsOut(dxGm_, dxl, off, first, d, stride);
                if (castLater) {
                    FromFloat(dxl[first * stride], A[first * stride], (castLater - 1) * stride + span);
                    int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
                    SetFlag<HardEvent::V_MTE3>(eventVMTE3);
                    WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
                    mover_.RowsOut(dxGm_, dxl[first * stride], off + uint64_t(first) * d, castLater, d, stride);
                }
            }
            dxQue_.FreeTensor(dxl);
        }
    }

    // Issues gamma's load into dst, in its dtype; returns its MTE2 -> V flag.
    __aicore__ inline TEventID LoadGammaInto(const LocalTensor<G>& dst) {
        mover_.In(dst, gammaGm_, 0, t_.numCols);
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }

    __aicore__ inline void WaitGamma(TEventID id) {
        WaitFlag<HardEvent::MTE2_V>(id);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(id);
    }

    // vecRows_: a step's per-row scalars on the vector unit, no scalar read per row. rowVec_
    // holds, for n8 = rowsPerLoop rounded up to 8: rstd, -rstd^2 / d and the row sums, then their
    // factor (n8 floats each; A2: zeroed once, so Brcb's whole repeats read written memory past a
    // short step's rows), then a block per row of rstd and of rstd^2 * s / d (A2: negated, by Brcb; 310P:
    // by Gather, whose offset tables follow, n8 * 8 each) (op_host/tiling/rms_norm.h, rowVecBytes).
    static constexpr uint32_t kRstd = 0, kRstdAvg = 1, kMean = 2, kRstdBlocks = 3, kMeanBlocks = 4, kRstdOffsets = 5, kSumOffsets = 6;
    template <typename U = float> __aicore__ inline LocalTensor<U> RowVec(uint32_t part) {
        uint32_t n8 = RoundUpTo(t_.rowsPerLoop, 8), at = part < kRstdBlocks ? part * n8 : 3 * n8 + (part - kRstdBlocks) * n8 * 8;
        return rowVec_.template GetWithOffset<U>(part < kRstdBlocks ? n8 : n8 * 8, at * uint32_t(sizeof(float)));
    }

    // 310P, once per core: the Gather offsets of element 8 i + k, 4 i (rstd[i], RowScalarsIn) and
    // 32 i (row i's sum, a block apart in red_, RowScalarsOut), built by doubling as float, then
    // cast (exact for these small integers), in the block parts (the steps overwrite them).
    __aicore__ inline void BuildRowTables() {
        uint32_t m = RoundUpTo(t_.rowsPerLoop, 8) * 8;
        LocalTensor<float> f = RowVec(kRstdBlocks), g = RowVec(kMeanBlocks);
        Duplicate(f, 0.0f, 8);
        PipeBarrier<PIPE_V>();
        for (uint32_t have = 8; have < m; have *= 2) {  // elements [have, 2 have) = [0, have) + have / 8 rows
            uint32_t more = m - have < have ? m - have : have;
            Adds(f[have], f, float(have / 8 * 4), int32_t(more));
            PipeBarrier<PIPE_V>();
        }
        Muls(g, f, 8.0f, int32_t(m));
        Cast(RowVec<int32_t>(kRstdOffsets), f, RoundMode::CAST_RINT, int32_t(m));
        PipeBarrier<PIPE_V>();
        Cast(RowVec<int32_t>(kSumOffsets), g, RoundMode::CAST_RINT, int32_t(m));
    }

    // Step start, with the casts: rstd copied out of its queue buffer (whose tail past n rows
    // nothing wrote), then broadcast a block per row; A2: -rstd^2 / d beside it. Ends with a barrier.
    __aicore__ inline void RowScalarsIn(const LocalTensor<float>& r, uint32_t n) {
        if (mover_.aligned) {  // 310P: rstd[i] gathered into row i's block
            uint32_t loaded = RoundUpTo(n, kBlock<float>);
            Duplicate(r[loaded], 0.0f, int32_t(RstdFloats() - loaded));  // the Gather reads its source whole
            PipeBarrier<PIPE_V>();
            Gather(RowVec(kRstdBlocks), r, RowVec<uint32_t>(kRstdOffsets), 0, n * 8);
            PipeBarrier<PIPE_V>();
            return;
        }
#if AIRFUSE_HAS_DATA_COPY_PAD
        Adds(RowVec(kRstd), r, 0.0f, int32_t(n));
        Mul(RowVec(kRstdAvg), r, r, int32_t(n));
        PipeBarrier<PIPE_V>();
        Brcb(RowVec(kRstdBlocks), RowVec(kRstd), uint8_t(CeilDivU(n, 8)), BrcbRepeatParams(1, 8));
        Muls(RowVec(kRstdAvg), RowVec(kRstdAvg), -t_.avgFactor, int32_t(n));  // negated: ProcessResident adds X times it
        PipeBarrier<PIPE_V>();
#endif
    }

    // A level of a step's dgamma sum (RowHalving); the last step's, once complete, is stored right
    // away, under the rest of the step (the row at 128 x 4096 on 910B2: 16 KB, ~885 cycles).
    // false when no level was left.
    __aicore__ inline bool DgammaLevel(RowHalving& dgamma, bool last) {
        if (!dgamma.Level()) return false;
        if (last && dgamma.count == 0) StoreAcc();
        return true;
    }

    // After RowSums: each row's sum s times rstd^2 / d (A2: negated), broadcast a block per row
    // (X's factor), a level of dgamma's sum beside each op. Ends with a barrier.
    __aicore__ inline void RowScalarsOut(uint32_t n, RowHalving& dgamma, bool last) {
        if (mover_.aligned) {  // 310P: row i's sum (a block apart in red_) gathered into its block, times rstd twice and 1 / d
            LocalTensor<float> mean = RowVec(kMeanBlocks);
            PipeBarrier<PIPE_V>();
            Gather(mean, red_.template Get<float>(n * kSumStride), RowVec<uint32_t>(kSumOffsets), 0, n * 8);
            DgammaLevel(dgamma, last);
            PipeBarrier<PIPE_V>();
            Mul(mean, mean, RowVec(kRstdBlocks), int32_t(n * 8));
            DgammaLevel(dgamma, last);
            PipeBarrier<PIPE_V>();
            Mul(mean, mean, RowVec(kRstdBlocks), int32_t(n * 8));
            DgammaLevel(dgamma, last);
            PipeBarrier<PIPE_V>();
            Muls(mean, mean, t_.avgFactor, int32_t(n * 8));
            DgammaLevel(dgamma, last);
            PipeBarrier<PIPE_V>();
            return;
        }
#if AIRFUSE_HAS_DATA_COPY_PAD
        LocalTensor<float> mean = RowVec(kMean);  // RowSums packed the sums there
        PipeBarrier<PIPE_V>();
        Mul(mean, mean, RowVec(kRstdAvg), int32_t(n));
        DgammaLevel(dgamma, last);
        PipeBarrier<PIPE_V>();
        Brcb(RowVec(kMeanBlocks), mean, uint8_t(CeilDivU(n, 8)), BrcbRepeatParams(1, 8));
        DgammaLevel(dgamma, last);
        PipeBarrier<PIPE_V>();
#endif
    }

    // Issues the loads of the step starting at row `first` of this core (x, dy and rstd).
    __aicore__ inline void LoadStep(uint32_t first) {
        uint32_t d = t_.numCols, n = rows_.count - first < t_.rowsPerLoop ? rows_.count - first : t_.rowsPerLoop;
        uint64_t off = uint64_t(first) * d;
        LocalTensor<T> in = inQue_.template AllocTensor<T>();
        LocalTensor<float> r = rstdQue_.template AllocTensor<float>();
        mover_.RowsIn(in, xGm_, off, n, d, t_.rowStride);
        mover_.RowsIn(in[InHalf()], dyGm_, off, n, d, t_.rowStride);
        LoadRstd(r, first, n);
        inQue_.EnQue(in);
        rstdQue_.EnQue(r);
    }

    // rstd values loaded by MTE2 are read by the scalar unit.
    __aicore__ inline void WaitMte2ForScalar() {
        int32_t eventMTE2S = GetTPipePtr()->FetchEventID(HardEvent::MTE2_S);
        SetFlag<HardEvent::MTE2_S>(eventMTE2S);
        WaitFlag<HardEvent::MTE2_S>(eventMTE2S);
    }
};

}  // namespace airfuse_kernel
