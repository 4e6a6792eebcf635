// AirfuseRmsNormGrad, split rows (tiling key kRmsNormGradSplitKey): rows longer than UB allows a
// step of, in column chunks, two passes a row (the row's sum, then dx); dgamma terms summed in a
// float32 row of UB (910B splitAcc), or in the core's workspace row, or by columns after the rows.
#pragma once
#include "grad_rows.h"

namespace airfuse_kernel {

template <typename T, typename G> class RmsNormGradSplit : public RmsNormGradRows<T, G> {
    using Base = RmsNormGradRows<T, G>;
    using Base::a_, Base::acc_, Base::b_, Base::chunkF_, Base::dxGm_, Base::dxOut_, Base::dxQue_, Base::dyGm_, Base::gQue_,
          Base::gammaGm_, Base::gammaRow_, Base::inQue_, Base::mover_, Base::red_, Base::rowResident_, Base::rows_, Base::rstdQue_,
          Base::splitAcc_, Base::stage_, Base::t_, Base::wsGm_, Base::xGm_, Base::AddFromWorkspace, Base::ColumnMode,
          Base::GammaRowFloat, Base::InHalf, Base::LoadRstd, Base::LoadWorkspace, Base::ReduceDgamma, Base::StoreAcc;

public:
    __aicore__ inline void Process() {
        if (rows_.count > 0) {  // cores past usedCores only take part in the dgamma reduction
            if (mover_.natural) dxOut_.Init(dxGm_, stage_.template Get<T>());
            if (splitAcc_) LoadGammaRow();
            IssueChunk(0, 0);
            for (uint32_t i = 0; i < rows_.count; ++i) ProcessSplitRow(i);
            if (splitAcc_) StoreAcc();
            if (mover_.natural) dxOut_.Finish();
        }
        ReduceDgamma();
    }

private:
    // splitAcc: gamma whole into gammaRow_, in its dtype, before the first chunk's loads on MTE2
    // (the chunks' DeQue, MTE2 -> V, orders it before the vector work), then acc_ zeroed.
    __aicore__ inline void LoadGammaRow() {
        uint32_t d = t_.numCols;
        mover_.In(gammaRow_.template Get<G>(), gammaGm_, 0, d);
        Duplicate(acc_.template Get<float>(), 0.0f, RoundUpTo(d, kBlock<float>));
    }

    // A row longer than UB: pass 1 sums dy * x * gamma chunk by chunk, each chunk's sum on the
    // vector unit into its own block (the scalar unit waits for them once per row), and with
    // splitAcc adds the row's dgamma terms into acc_; pass 2 writes dx (and without splitAcc or the
    // column split adds the dgamma terms into this core's workspace row). With
    // two buffers the next chunk's loads (the next pass's or row's first) are issued before a
    // chunk is computed, so MTE2 runs ahead of V across the passes; row 0's first by Process.
    __aicore__ inline void ProcessSplitRow(uint32_t row) {
        uint32_t d = t_.numCols, c = t_.colsPerChunk, chunks = CeilDivU(d, c);
        uint64_t base = uint64_t(row) * d;
        bool prefetch = t_.bufferNum > 1, more = row + 1 < rows_.count;
        // rstd first: the scalar unit's MTE2 -> S wait then covers no load issued for a later row or pass.
        LocalTensor<float> r = rstdQue_.template AllocTensor<float>();
        LoadRstd(r, row, 1);
        rstdQue_.EnQue(r);
        r = rstdQue_.template DeQue<float>();
        float rv = ReadScalarAt(r, 0);
        rstdQue_.FreeTensor(r);
        LocalTensor<float> sums = red_.template Get<float>();
        // rowResident: the row's x and dy arrived whole (IssueChunk); the chunks are slices of them.
        LocalTensor<T> whole;
        if (rowResident_) {
            whole = inQue_.template DeQue<T>();
            if (prefetch && more) IssueChunk(row + 1, 0);
        }
        for (uint32_t k = 0; k < chunks; ++k) {
            uint32_t c0 = k * c, n = d - c0 < c ? d - c0 : c, next = k + 1 < chunks ? k + 1 : 0;
            LocalTensor<G> gq;
            LocalTensor<T> in = rowResident_ ? whole[c0] : TakeChunk(gq);
            if (prefetch && !rowResident_) IssueChunk(row, next);
            ChunkSum(in, in[InHalf()], gq, c0, n, k, chunks, rv);
            if (rowResident_) continue;
            FreeChunk(in, gq);
            if (!prefetch) IssueChunk(row, next);
        }
        int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
        SetFlag<HardEvent::V_S>(eventVS);
        WaitFlag<HardEvent::V_S>(eventVS);
        float s = 0.0f;
        for (uint32_t k = 0; k < chunks; ++k) s += sums.GetValue(k * kSumStride);
        int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next row's sums overwrite what S read
        SetFlag<HardEvent::S_V>(eventSV);
        WaitFlag<HardEvent::S_V>(eventSV);
        float mean = s * rv * t_.avgFactor;
        uint64_t wsRow = uint64_t(GetBlockIdx()) * t_.wsStride;
        for (uint32_t k = 0; k < chunks; ++k) {
            uint32_t c0 = k * c, n = d - c0 < c ? d - c0 : c, span = mover_.Span(n);
            bool issue = !rowResident_ && (k + 1 < chunks || more);
            LocalTensor<G> gq;
            LocalTensor<T> in = rowResident_ ? whole[c0] : TakeChunk(gq);
            LocalTensor<T> x = in, dy = in[InHalf()];
            if (prefetch && issue) IssueChunk(k + 1 < chunks ? row : row + 1, k + 1 < chunks ? k + 1 : 0);
            LocalTensor<T> dxl = dxQue_.template AllocTensor<T>();
            if (!splitAcc_ && !ColumnMode()) AddToWorkspaceRow(x, dy, rv, row, wsRow + c0, n);
            Dx(x, dy, gq, c0, dxl, rv, rv * mean, span);
            if (!rowResident_) FreeChunk(in, gq);
            if (!prefetch && issue) IssueChunk(k + 1 < chunks ? row : row + 1, k + 1 < chunks ? k + 1 : 0);
            dxQue_.EnQue(dxl);
            dxl = dxQue_.template DeQue<T>();
            mover_.Out(dxGm_, dxl, base + c0, n);
            dxQue_.FreeTensor(dxl);
        }
        if (rowResident_) {
            inQue_.FreeTensor(whole);
            if (!prefetch && more) IssueChunk(row + 1, 0);
        }
    }

    // This row's dgamma terms for a chunk of n columns added into the core's workspace row at off,
    // computed in chunkF_ (stored: VECOUT; Dx casts the chunk's gamma there after the store).
    __aicore__ inline void AddToWorkspaceRow(const LocalTensor<T>& x, const LocalTensor<T>& dy, float rv, uint32_t row, uint64_t off, uint32_t n) {
        LocalTensor<float> a = chunkF_.template Get<float>();
        Product(a, x, dy, rv, mover_.Span(n));
        if (row > 0) AddFromWorkspace(a, a, off, n);
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        mover_.PaddedOut(wsGm_, a, off, n);
        int32_t eventMTE3V = GetTPipePtr()->FetchEventID(HardEvent::MTE3_V);
        SetFlag<HardEvent::MTE3_V>(eventMTE3V);
        WaitFlag<HardEvent::MTE3_V>(eventMTE3V);
        int32_t eventMTE3MTE2 = GetTPipePtr()->FetchEventID(HardEvent::MTE3_MTE2);
        SetFlag<HardEvent::MTE3_MTE2>(eventMTE3MTE2);  // redundant-sync: grad-workspace-row-store
        WaitFlag<HardEvent::MTE3_MTE2>(eventMTE3MTE2);
    }

    // Issues the loads of chunk k of this core's row `row`: x and dy (rowResident: the whole row),
    // and gamma's columns unless gamma is in UB whole (splitAcc).
    __aicore__ inline void IssueChunk(uint32_t row, uint32_t k) {
        uint32_t d = t_.numCols, c0 = k * t_.colsPerChunk, n = d - c0 < t_.colsPerChunk ? d - c0 : t_.colsPerChunk;
        if (rowResident_) n = d;
        uint64_t off = uint64_t(row) * d + c0;
        LocalTensor<T> in = inQue_.template AllocTensor<T>();
        mover_.In(in, xGm_, off, n);
        mover_.In(in[InHalf()], dyGm_, off, n);
        inQue_.EnQue(in);
        if (splitAcc_) return;
        LocalTensor<G> gq = gQue_.template AllocTensor<G>();
        mover_.In(gq, gammaGm_, c0, n);
        gQue_.EnQue(gq);
    }

    // The chunk issued first: x, then dy at InHalf(); gq its gamma columns (splitAcc: none, gamma is whole in UB).
    __aicore__ inline LocalTensor<T> TakeChunk(LocalTensor<G>& gq) {
        if (!splitAcc_) gq = gQue_.template DeQue<G>();
        return inQue_.template DeQue<T>();
    }

    __aicore__ inline void FreeChunk(LocalTensor<T>& in, LocalTensor<G>& gq) {
        inQue_.FreeTensor(in);
        if (!splitAcc_) gQue_.FreeTensor(gq);
    }

    __aicore__ inline float ReadScalarAt(const LocalTensor<float>& r, uint32_t i) {
        int32_t eventMTE2S = GetTPipePtr()->FetchEventID(HardEvent::MTE2_S);
        SetFlag<HardEvent::MTE2_S>(eventMTE2S);
        WaitFlag<HardEvent::MTE2_S>(eventMTE2S);
        return r.GetValue(i);
    }

    // a = dy * x * rstd (a split row's dgamma terms; its reader waits through V_S or V_MTE3).
    __aicore__ inline void Product(const LocalTensor<float>& a, const LocalTensor<T>& x, const LocalTensor<T>& dy, float rv, uint32_t n) {
        LocalTensor<float> b = b_.template Get<float>();
        LocalTensor<float> xf = AsFloat(x, b, n);
        Muls(b, xf, rv, n);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> dyf = AsFloat(dy, a, n);
        Mul(a, dyf, b, n);
    }

    // sum(dy * x * gamma) over chunk k's n elements at column c0 (the mover's layout) into red_'s
    // block k, its scratch after the row's chunks' blocks (op_host/tiling/rms_norm.h RmsNormGrad,
    // redBytes); with splitAcc the chunk's dgamma terms rstd * dy * x go into acc_ on the way (one
    // product for both: a_ keeps dy * x, b_ gets it times gamma).
    __aicore__ inline void ChunkSum(const LocalTensor<T>& x, const LocalTensor<T>& dy, const LocalTensor<G>& gq, uint32_t c0, uint32_t n, uint32_t k,
                                    uint32_t chunks, float rv) {
        uint32_t span = mover_.Span(n);
        if (k == 0) PipeBarrier<PIPE_V>();  // the previous row's dx work still reads a_, b_ and gamma's float buffer
        LocalTensor<float> a = a_.template Get<float>(), b = b_.template Get<float>(), dyf, xf, g;
        CastChunk(x, dy, gq, c0, span, xf, dyf, g);
        Mul(a, dyf, xf, span);
        PipeBarrier<PIPE_V>();
        if (splitAcc_) Axpy(acc_.template Get<float>()[c0], a, rv, span);
        Mul(b, a, g, span);
        PipeBarrier<PIPE_V>();
        mover_.ZeroRepeat(b, n);
        LocalTensor<float> scratch = red_.template GetWithOffset<float>(t_.redBytes / 4 - chunks * kSumStride, chunks * kSumStride * 4);
        RowSums(!mover_.aligned, red_.template Get<float>()[k * kSumStride], b, RoundUpTo(span, kBlock<float>), 1, span, scratch,
                t_.reduceTmpBytes / sizeof(float));
        // The next chunk overwrites a_, b_ and the scratch (after the last, S waits for V): kept so
        // the chunk loop does not lean on RowSums' insides.
        if (k + 1 < chunks) PipeBarrier<PIPE_V>();  // redundant-sync: chunk-sums-then-next-chunk
    }

    // A split chunk's dx at column c0 (rvMean = rstd * mean):
    //   dx = rstd * (dy * gamma - x * rvMean)
    __aicore__ inline void Dx(const LocalTensor<T>& x, const LocalTensor<T>& dy, const LocalTensor<G>& gq, uint32_t c0, const LocalTensor<T>& dx, float rv,
                              float rvMean, uint32_t n) {
        PipeBarrier<PIPE_V>();  // the previous chunk's last ops (or the workspace row's) still read a_, b_ and gamma's float buffer
        LocalTensor<float> a = a_.template Get<float>(), dyf, xf, g;
        CastChunk(x, dy, gq, c0, n, xf, dyf, g);
        Mul(a, dyf, g, n);  // in place when dyf is dy's cast
        PipeBarrier<PIPE_V>();
        Axpy(a, xf, -rvMean, n);
        PipeBarrier<PIPE_V>();
        ScaleIntoDx(dx, a, rv, n);
    }

    // dx = rv * src: straight into dx when T is float, else into a_ and then rounded to T.
    __aicore__ inline void ScaleIntoDx(const LocalTensor<T>& dx, const LocalTensor<float>& src, float rv, uint32_t n) {
        LocalTensor<float> a = a_.template Get<float>(), out = a;
        if constexpr (kIsFloat<T>) out = dx;
        Muls(out, src, rv, n);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(dx, a, n);
        }
    }

    // A chunk's x, dy and gamma (columns from c0) as float32 (xf, dyf, g): cast into b_, a_ and
    // gamma's float buffer, or the tiles themselves when already float, or gamma's slice of
    // gammaRow_ when it is held as float; one barrier after the casts. gq: the chunk's gamma unless
    // splitAcc keeps gamma whole (gammaRow_).
    __aicore__ inline void CastChunk(const LocalTensor<T>& x, const LocalTensor<T>& dy, const LocalTensor<G>& gq, uint32_t c0, uint32_t n,
                                     LocalTensor<float>& xf, LocalTensor<float>& dyf, LocalTensor<float>& g) {
        xf = x.template ReinterpretCast<float>();
        dyf = dy.template ReinterpretCast<float>();
        if constexpr (!kIsFloat<T>) {
            xf = b_.template Get<float>();
            dyf = a_.template Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, n);
            Cast(dyf, dy, RoundMode::CAST_NONE, n);
        }
        bool castGamma = false;
        if (GammaRowFloat()) {
            g = gammaRow_.template Get<float>()[c0];
        } else if constexpr (kIsFloat<G>) {
            g = gq;
        } else {
            g = chunkF_.template Get<float>();
            Cast(g, splitAcc_ ? gammaRow_.template Get<G>()[c0] : gq, RoundMode::CAST_NONE, n);
            castGamma = true;
        }
        if (!kIsFloat<T> || castGamma) PipeBarrier<PIPE_V>();
    }
};

}  // namespace airfuse_kernel
