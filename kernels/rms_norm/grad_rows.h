// AirfuseRmsNormGrad over rows, the base of its two row strategies (grad_resident.h: a step's rows
// whole in UB; grad_split.h: a row in column chunks): rows over cores, and dgamma by one of
// - partial rows (910B, or one core): each core accumulates its rows' dgamma in float32 and leaves
//   it in the workspace; after the hardware SyncAll each core sums a slice of columns of all of
//   them (SpreadReduce), or core 0 sums them all when dgamma is too short to spread (FinalReduce);
// - columns (ColumnDgamma: 310P with several cores, and 910B split rows whose float32 dgamma row
//   does not fit in UB): after its rows' dx each core sums dgamma over every row for a slice of
//   columns, reading x and dy a second time, with no cross-core dependency.
// Init lays out UB as op_host/tiling/rms_norm_grad_rows.h counts it, for both strategies.
#pragma once
#include "grad_base.h"
#include "grad_rows_tiling.h"

namespace airfuse_kernel {

template <typename T, typename G> class RmsNormGradRows {
public:
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR workspace,
                                const AirfuseRmsNormGradRowsTilingData& t) {
        t_ = t;
        rows_ = MyRows(t.rowsPerCore, t.rowsRemainder, t.usedCores);
        bool aligned = t.alignedCopy != 0;
        mover_ = Mover{aligned, aligned && t.numCols < kBlock<T>, kBlock<T>};
        uint64_t d = t.numCols;
        resident_ = t.colsPerChunk == t.numCols;
        splitAcc_ = t.splitAcc != 0;
        rowResident_ = t.rowResident != 0;
        vecRows_ = t.rowVecBytes != 0;
        // Reads may run past this core's rows (whole blocks of short rows), never past the inputs' end.
        dyGm_.SetGlobalBuffer((__gm__ T*)dy + rows_.start * d, (t.numRows - rows_.start) * d);
        xGm_.SetGlobalBuffer((__gm__ T*)x + rows_.start * d, (t.numRows - rows_.start) * d);
        dxGm_.SetGlobalBuffer((__gm__ T*)dx + rows_.start * d, rows_.count * d);
        rstdGm_.SetGlobalBuffer((__gm__ float*)rstd + rows_.start, t.numRows - rows_.start);
        gammaGm_.SetGlobalBuffer((__gm__ G*)gamma, d);
        dgammaGm_.SetGlobalBuffer((__gm__ G*)dgamma, d);
        if (ColumnMode()) {
            xAll_.SetGlobalBuffer((__gm__ T*)x, t.numRows * d);
            dyAll_.SetGlobalBuffer((__gm__ T*)dy, t.numRows * d);
            rstdAll_.SetGlobalBuffer((__gm__ float*)rstd, t.numRows);
        } else {
            wsGm_.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace), uint64_t(t.usedCores) * t.wsStride);
        }
        uint32_t f = t.floatCols;
        uint32_t rowBytes = t.rowsPerLoop * t.rowStride * sizeof(T);
        pipe_.InitBuffer(inQue_, t.bufferNum, 2 * rowBytes);  // x, then dy at InHalf()
        pipe_.InitBuffer(rstdQue_, t.bufferNum, RstdFloats() * sizeof(float));
        pipe_.InitBuffer(dxQue_, t.bufferNum, rowResident_ ? RoundUpTo(t.colsPerChunk, kBlock<T>) * uint32_t(sizeof(T)) : rowBytes);
        // Resident: a_ and b_ hold a step's x and dy as float (half/bf16: the products then go in
        // the input buffer; float is used in place, the products in c_). Split: a_ and b_ one chunk each.
        uint32_t work = resident_ ? t.workCols : f;
        if (!resident_ || !kIsFloat<T>) {
            pipe_.InitBuffer(a_, work * sizeof(float));
            pipe_.InitBuffer(b_, work * sizeof(float));
        }
        if (resident_ && kIsFloat<T>) pipe_.InitBuffer(c_, work * sizeof(float));
        if (resident_) {
            pipe_.InitBuffer(gammaF_, f * sizeof(float));
        } else if (!GammaRowFloat()) {  // else a chunk's gamma is a slice of gammaRow_
            pipe_.InitBuffer(chunkF_, f * sizeof(float));
        }
        pipe_.InitBuffer(red_, t.redBytes);
        if (resident_ || splitAcc_) pipe_.InitBuffer(acc_, (resident_ ? f : RoundUpTo(d, kBlock<float>)) * sizeof(float));
        if (GammaRowFloat()) {
            pipe_.InitBuffer(gammaRow_, RoundUpTo(d, kBlock<float>) * sizeof(float));
        } else if (splitAcc_) {
            pipe_.InitBuffer(gammaRow_, RoundUpTo(d, kBlock<G>) * sizeof(G));
        } else if (!resident_) {
            pipe_.InitBuffer(gQue_, t.bufferNum, f * sizeof(G));
        }
        if (t.outStageBytes) pipe_.InitBuffer(stage_, t.outStageBytes);
        if (vecRows_) pipe_.InitBuffer(rowVec_, t.rowVecBytes);
    }

protected:
    // dgamma, after this core's rows (cores past usedCores take part only here).
    __aicore__ inline void ReduceDgamma() {
        if (ColumnMode()) {
            if (GetBlockIdx() < t_.colCores) ColumnDgamma();
            return;
        }
        if (t_.usedCores > 1) SyncAllCores();
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (Spread()) return SpreadReduce();
#endif
        if (GetBlockIdx() == 0) FinalReduce();
    }

    // This core's dgamma accumulation (acc_) to its workspace row, unless core 0 sums the rows itself.
    __aicore__ inline void StoreAcc() {
        if (GetBlockIdx() == 0 && !Spread()) return;
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        mover_.PaddedOut(wsGm_, acc_.Get<float>(), uint64_t(GetBlockIdx()) * t_.wsStride, t_.numCols);
    }

    // splitAcc with float gamma: a chunk's gamma is a slice of gammaRow_, no cast per chunk.
    __aicore__ inline bool GammaRowFloat() const { return splitAcc_ && kIsFloat<G>; }

    // Elements from the input buffer's x to its dy.
    __aicore__ inline uint32_t InHalf() const { return t_.rowsPerLoop * t_.rowStride; }

    // acc += the sum of n rows of `rows` (stride apart), by halving (a fixed order); leaves rows
    // clobbered and ends with a barrier.
    __aicore__ inline void AddRows(const LocalTensor<float>& acc, const LocalTensor<float>& rows, uint32_t n, uint32_t span, uint32_t stride) {
        RowHalving{acc, rows, rows, n, span, stride}.Drain();
    }

    __aicore__ inline bool ColumnMode() const { return t_.colCores > 0; }

    // rstd values each rstd buffer holds: a step's rows, or a column step's (op_host/tiling/rms_norm.h SplitColumns).
    __aicore__ inline uint32_t RstdHeld() const {
        return RoundUpTo(t_.rowsPerLoop > t_.colRows ? t_.rowsPerLoop : t_.colRows, kBlock<float>);
    }
    // Floats of each rstd buffer: those, then where rstd is a Gather's source the room CANN's check asks.
    __aicore__ inline uint32_t RstdFloats() const { return RstdHeld() + (t_.alignedCopy || ColumnMode() ? kRstdGatherSlack : 0); }

    // dgamma for this core's slice of colCols columns, summed over every row (no hardware SyncAll:
    // op_host/tiling/rms_norm.h SplitColumns): colRows rows of the slice's x and dy per strided
    // copy, the next step's loaded while one is computed, their product scaled per row by rstd and
    // added by halving into a float sum, cast, stored. The sum is in a dx buffer (VECOUT, stored
    // from: the tiling keeps a slice of dgamma within it) when float, else in gamma's float buffer
    // (the row pass is done with it) and cast into a dx buffer.
    // rstd is only read by vector ops here: no MTE2 -> S or S -> MTE2 wait.
    __aicore__ inline void ColumnDgamma() {
        uint32_t d = t_.numCols, c0 = uint32_t(GetBlockIdx()) * t_.colCols, n = d - c0 < t_.colCols ? d - c0 : t_.colCols;
        uint64_t rows = t_.numRows;
        LocalTensor<G> out = dxQue_.template AllocTensor<G>();
        LocalTensor<float> acc;
        if constexpr (kIsFloat<G>) {
            acc = out;
        } else {
            acc = resident_ ? gammaF_.Get<float>() : chunkF_.Get<float>();
        }
        PipeBarrier<PIPE_V>();  // split rows: the last chunk's dx still reads gamma and the float work buffers
        Duplicate(acc, 0.0f, n);
        bool prefetch = t_.bufferNum > 1;
        LoadColumns(0, c0, n);
        for (uint64_t first = 0; first < rows; first += t_.colRows) {
            uint32_t k = uint32_t(rows - first < t_.colRows ? rows - first : t_.colRows);
            LocalTensor<T> in = inQue_.DeQue<T>();
            LocalTensor<float> r = rstdQue_.DeQue<float>();
            bool more = first + t_.colRows < rows;
            if (prefetch && more) LoadColumns(first + t_.colRows, c0, n);
            // X = x * dy; then a 32 B block of rstd per row (B) by a Gather with byte offsets 4i
            // for row i's block, built where this step's inputs no longer are (no scalar read per
            // row); each row of X times its block.
            LocalTensor<float> X, A, B;
            LocalTensor<uint32_t> offsets;
            if constexpr (kIsFloat<T>) {
                X = in;
                A = in[InHalf()];
                B = resident_ ? c_.Get<float>() : a_.Get<float>();
                offsets = A.template ReinterpretCast<uint32_t>();
            } else {
                X = a_.Get<float>();
                A = b_.Get<float>();
                B = A;
                offsets = in.template ReinterpretCast<uint32_t>();
                Cast(X, in, RoundMode::CAST_NONE, k * n);
                Cast(A, in[InHalf()], RoundMode::CAST_NONE, k * n);
                PipeBarrier<PIPE_V>();
            }
            Mul(X, X, A, k * n);
            PipeBarrier<PIPE_V>();  // float: the offsets overwrite dy
            for (uint32_t i = 0; i < k; ++i) Duplicate(offsets[i * 8], i * uint32_t(sizeof(float)), 8);
            uint32_t loaded = RoundUpTo(k, kBlock<float>);
            Duplicate(r[loaded], 0.0f, RstdFloats() - loaded);  // the Gather reads its source whole
            PipeBarrier<PIPE_V>();
            Gather(B, r, offsets, 0, k * 8);
            PipeBarrier<PIPE_V>();
            MulRows(X, X, B, RowFactor::kRowBlock, k, n, n);
            PipeBarrier<PIPE_V>();
            AddRows(acc, X, k, n, n);
            inQue_.FreeTensor(in);
            rstdQue_.FreeTensor(r);
            if (!prefetch && more) LoadColumns(first + t_.colRows, c0, n);
        }
        if constexpr (!kIsFloat<G>) FromFloat(out, acc, n);
        dxQue_.EnQue(out);
        out = dxQue_.template DeQue<G>();
        DataCopy(dgammaGm_[c0], out, n);
        dxQue_.FreeTensor(out);
    }

    // Issues the loads of a column step: rows first.. of x and dy in columns [c0, c0 + n), and their rstd.
    __aicore__ inline void LoadColumns(uint64_t first, uint32_t c0, uint32_t n) {
        uint32_t d = t_.numCols, k = uint32_t(t_.numRows - first < t_.colRows ? t_.numRows - first : t_.colRows);
        DataCopyParams slice(uint16_t(k), uint16_t(n / kBlock<T>), uint16_t((d - n) / kBlock<T>), 0);
        LocalTensor<T> in = inQue_.AllocTensor<T>();
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        DataCopy(in, xAll_[first * d + c0], slice);
        DataCopy(in[InHalf()], dyAll_[first * d + c0], slice);
        LoadNatural(r, rstdAll_, first, k);
        inQue_.EnQue(in);
        rstdQue_.EnQue(r);
    }

    // The float buffer the final reduction loads partial rows into (and gamma is staged in): c_
    // (resident float) or a_.
    __aicore__ inline LocalTensor<float> Partials() { return resident_ && kIsFloat<T> ? c_.Get<float>() : a_.Get<float>(); }

    // Columns per piece of SpreadReduce: every core's partial row of them fits in Partials() (32 B-aligned).
    __aicore__ inline uint32_t PieceCols() const {
        return (resident_ ? t_.workCols : t_.floatCols) / t_.usedCores / kBlock<float> * kBlock<float>;
    }

    // dgamma's column sum spread over the cores, each taking a slice of columns of every partial
    // row (910B: several cores only with its SyncAll), when pieces fit in Partials(); else core 0
    // sums every row (FinalReduce).
    __aicore__ inline bool Spread() const { return !mover_.aligned && t_.usedCores > 1 && PieceCols() > 0; }

#if AIRFUSE_HAS_DATA_COPY_PAD

    // This core's slice of columns, in pieces: a piece's partial rows arrive in one strided copy,
    // rows kBlock-aligned one after another, and are summed by halving (a fixed order, so the
    // result does not depend on timing), cast, stored. With a_ and
    // b_ both there, the next piece loads into the other while one is summed (128 x 16384 bf16 on
    // 910B2: six pieces, each load ~660 cycles and its sum and store ~300, in series before).
    __aicore__ inline void SpreadReduce() {
        uint32_t cores = t_.usedCores, d = t_.numCols, block = uint32_t(GetBlockIdx());
        uint32_t slice = RoundUpTo((d + cores - 1) / cores, kBlock<float>), piece = PieceCols();
        if (block >= cores || block * slice >= d) return;
        uint32_t lo = block * slice, hi = lo + slice < d ? lo + slice : d;
        bool two = !(resident_ && kIsFloat<T>);  // else only Partials() (c_): a_ and b_ do not exist
        LocalTensor<float> bufs[2] = {Partials(), two ? b_.Get<float>() : Partials()};
        TEventID loaded[2] = {LoadPiece(bufs[0], lo, hi - lo < piece ? hi - lo : piece), 0};
        for (uint32_t c0 = lo, i = 0; c0 < hi; c0 += piece, ++i) {
            uint32_t n = hi - c0 < piece ? hi - c0 : piece, stride = RoundUpTo(n, kBlock<float>), next = c0 + piece;
            uint32_t nextN = hi - next < piece ? hi - next : piece;
            LocalTensor<float> rows = bufs[i % 2];
            if (two && next < hi) loaded[(i + 1) % 2] = LoadPiece(bufs[(i + 1) % 2], next, nextN);
            WaitFlag<HardEvent::MTE2_V>(loaded[i % 2]);
            GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(loaded[i % 2]);
            // The sum leaves from a buffer of dxQue_ (VECOUT; its n floats fit: the piece's rows,
            // cores >= 2 of them, fit in Partials(), the dx buffer's size in T): the last halving
            // (float dgamma) or the cast writes it.
            LocalTensor<G> out = dxQue_.template AllocTensor<G>();
            for (uint32_t count = cores; count > 1;) {
                uint32_t half = count / 2;
                LocalTensor<float> dst = rows;
                if constexpr (kIsFloat<G>) {
                    if (count == 2) dst = out;
                }
                Add(dst, rows, rows[(count - half) * stride], half * stride);
                PipeBarrier<PIPE_V>();
                count -= half;
            }
            if constexpr (!kIsFloat<G>) FromFloat(out, rows, n);
            dxQue_.EnQue(out);
            out = dxQue_.template DeQue<G>();
            PadOut(dgammaGm_, out, c0, 1, n);
            dxQue_.FreeTensor(out);
            if (!two && next < hi) loaded[0] = LoadPiece(bufs[0], next, nextN);
        }
    }

    // Issues the load of columns [c0, c0 + n) of every partial row into rows; returns its MTE2 -> V flag.
    __aicore__ inline TEventID LoadPiece(const LocalTensor<float>& rows, uint32_t c0, uint32_t n) {
        int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);  // the vector work of rows' last piece is done
        SetFlag<HardEvent::V_S>(eventVS);
        WaitFlag<HardEvent::V_S>(eventVS);
        DataCopyPad(rows, wsGm_[c0], DataCopyExtParams(uint16_t(t_.usedCores), n * sizeof(float), (t_.wsStride - n) * sizeof(float), 0, 0),
                    DataCopyPadExtParams<float>());
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }
#endif

    // Core 0: dgamma = its own accumulation + every other core's workspace row, chunk by chunk.
    // It leaves from VECOUT: acc_; for split rows without it, whose sum starts as core 0's row
    // loaded into a_, chunkF_ (the last add writes it; one core copies it there); cast, dxQue_'s.
    __aicore__ inline void FinalReduce() {
        uint32_t d = t_.numCols, c = t_.colsPerChunk;
        bool loaded = !resident_ && !splitAcc_;
        for (uint32_t c0 = 0; c0 < d; c0 += c) {
            uint32_t n = d - c0 < c ? d - c0 : c;
            LocalTensor<float> sum = loaded ? a_.Get<float>() : acc_.Get<float>()[c0];
            LocalTensor<float> total = loaded && kIsFloat<G> ? chunkF_.Get<float>() : sum;
            if (loaded) LoadWorkspace(sum, c0, n);
            for (uint32_t core = 1; core < t_.usedCores; ++core)
                AddFromWorkspace(core + 1 == t_.usedCores ? total : sum, sum, uint64_t(core) * t_.wsStride + c0, n);
            if (t_.usedCores == 1 && loaded && kIsFloat<G>) Muls(total, sum, 1.0f, mover_.Span(n));  // bit-exact (Adds of 0 would turn -0 into +0)
            LocalTensor<G> out;
            if constexpr (kIsFloat<G>) {
                out = total;
            } else {
                out = dxQue_.template AllocTensor<G>();
                FromFloat(out, sum, mover_.Span(n));
            }
            if (mover_.natural) {  // a row under 32 B: d < one block of x, so this is the only chunk
                GmStream<G> dgammaOut;
                dgammaOut.Init(dgammaGm_, stage_.Get<G>());
                dgammaOut.PutRows(out, 1, n, n);
                dgammaOut.Finish();
                FreeOut(out);
                return;
            }
            int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
            SetFlag<HardEvent::V_MTE3>(eventVMTE3);
            WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
            mover_.Out(dgammaGm_, out, c0, n);
            int32_t eventMTE3V = GetTPipePtr()->FetchEventID(HardEvent::MTE3_V);
            SetFlag<HardEvent::MTE3_V>(eventMTE3V);
            WaitFlag<HardEvent::MTE3_V>(eventMTE3V);
            FreeOut(out);
        }
    }

    // FinalReduce's cast dgamma back to dxQue_ (float dgamma is not from there).
    __aicore__ inline void FreeOut(LocalTensor<G>& out) {
        if constexpr (!kIsFloat<G>) dxQue_.FreeTensor(out);
    }

    __aicore__ inline void LoadRstd(const LocalTensor<float>& r, uint32_t first, uint32_t n) {
        if (mover_.aligned) {
            LoadNatural(r, rstdGm_, first, n);
        } else {
            mover_.In(r, rstdGm_, first, n);
        }
    }

    // V must be done with dst before MTE2 overwrites it. Not with V_MTE2: freed VECIN buffers hold one
    // V_MTE2 id each, up to all 8 (4 queues x 2 buffers). The scalar unit waiting for V holds back
    // the copy's issue just as well.
    __aicore__ inline void LoadWorkspace(const LocalTensor<float>& dst, uint64_t off, uint32_t n) {
        int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
        SetFlag<HardEvent::V_S>(eventVS);
        WaitFlag<HardEvent::V_S>(eventVS);
        mover_.PaddedIn(dst, wsGm_, off, n);
        int32_t eventMTE2V = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
        SetFlag<HardEvent::MTE2_V>(eventMTE2V);
        WaitFlag<HardEvent::MTE2_V>(eventMTE2V);
    }

    // dst = sum + the partial row at off, which goes through b_ (split) or Partials() (resident: sum is then acc_).
    __aicore__ inline void AddFromWorkspace(const LocalTensor<float>& dst, const LocalTensor<float>& sum, uint64_t off, uint32_t n) {
        LocalTensor<float> part = resident_ ? Partials() : b_.Get<float>();
        LoadWorkspace(part, off, n);
        Add(dst, sum, part, mover_.Span(n));
        PipeBarrier<PIPE_V>();
    }

    AirfuseRmsNormGradRowsTilingData t_;
    RowRange rows_;
    bool resident_ = true;
    bool splitAcc_ = false;     // split rows: dgamma terms summed in acc_ (op_host/tiling/rms_norm.h)
    bool rowResident_ = false;  // splitAcc rows whose x and dy tiles stay in UB whole: read once
    bool vecRows_ = false;      // a resident step's per-row scalars on the vector unit
    Mover mover_{};
    GmStream<T> dxOut_;
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> inQue_;
    TQue<QuePosition::VECIN, 1> rstdQue_;
    TQue<QuePosition::VECIN, 1> gQue_;
    // Buffers GM loads land in are VECIN, buffers DataCopy stores leave from are VECOUT (the copy
    // docs' data paths, twin/README.md): gamma and its stages (gammaF_, Partials()), the workspace
    // rows (a_, b_, c_) are loaded; acc_ and chunkF_ are stored, as are dxQue_'s buffers.
    TBuf<TPosition::VECIN> gammaRow_;  // splitAcc: gamma whole, in its dtype
    TQue<QuePosition::VECOUT, 1> dxQue_;
    TBuf<TPosition::VECIN> a_;
    TBuf<TPosition::VECIN> b_;
    TBuf<TPosition::VECIN> gammaF_;    // resident rows: gamma as float (float gamma loads straight in)
    TBuf<TPosition::VECOUT> chunkF_;   // split rows instead: a chunk's gamma as float, the workspace row's chunk, float dgamma
    TBuf<TPosition::VECIN> c_;
    TBuf<TPosition::VECOUT> acc_;
    TBuf<TPosition::VECCALC> red_;
    TBuf<TPosition::VECCALC> rowVec_;
    TBuf<TPosition::VECOUT> stage_;
    GlobalTensor<T> dyGm_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> dxGm_;
    GlobalTensor<float> rstdGm_;
    GlobalTensor<G> gammaGm_;
    GlobalTensor<G> dgammaGm_;
    GlobalTensor<float> wsGm_;
    GlobalTensor<T> xAll_;  // column mode: every row, for ColumnDgamma
    GlobalTensor<T> dyAll_;
    GlobalTensor<float> rstdAll_;
};

}  // namespace airfuse_kernel
