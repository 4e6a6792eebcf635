// AirfuseRmsNormGrad: with xhat = x * rstd and dxhat = dy * gamma,
//   dx = rstd * (dxhat - xhat * mean(dxhat * xhat))   per row (last dim),
//   dgamma = sum over rows of dy * xhat               (float32, cast to gamma's dtype).
// A core moves rowsPerLoop rows per step and takes them through each vector op together (per-row
// scalars once per step: on A2 for steps of >= 10 rows on the vector unit, a Brcb block per row;
// else one MTE2 -> S wait for rstd, one V -> S wait for the row sums). dgamma, by one of:
// - partial rows (910B, or one core): each core accumulates its rows' dgamma in float32 (in UB
//   when a row fits, and for split rows when a float32 row fits beside their chunks, else in its
//   workspace row), leaves it in the workspace and after the hardware SyncAll each sums a slice of
//   columns (core 0 sums them all when dgamma is too short to spread);
// - columns (ColumnDgamma: 310P, which has no hardware SyncAll, and 910B split rows whose float32
//   dgamma row does not fit): each core sums dgamma over every row for a slice of columns, reading
//   x and dy a second time, no cross-core dependency; on 310P, when that does not apply, one core
//   does everything;
// - slices (ProcessSlices, 910B with few rows a core): each core takes a slice of columns of
//   every row, dgamma is whole on it, the rows' sums meet across one SyncAll.
// Copies: gm_copy.h, per chip (on 310P partial rows keep the windowed layout at a 32 B stride).
#include "gm_copy.h"
#include "rms_norm_grad_tiling.h"
#include "row_sums.h"

using namespace AscendC;
using namespace airfuse_kernel;

namespace {

// acc += the sum of `count` rows of `rows` (span floats, stride apart) by halving, in a fixed
// order, one level per Level() call: a caller puts each level beside its other vector work, so the
// levels share its barriers (every call after the first must follow a barrier). The first level
// writes `tmp` (rows itself, or a buffer of half the rows), the next ones halve tmp in place, the
// last adds tmp's first row to acc.
struct RowHalving {
    LocalTensor<float> acc, rows, tmp;
    uint32_t count, span, stride;
    bool first = true;

    // Issues the next level; false when none was left.
    __aicore__ inline bool Level() {
        if (count == 0) return false;
        LocalTensor<float> src = first ? rows : tmp;
        if (count == 1) {
            Add(acc, acc, src, span);
            count = 0;
            return true;
        }
        uint32_t half = count / 2;
        Add(tmp, src, src[(count - half) * stride], (half - 1) * stride + span);
        // The first level's odd row (the middle one: row i pairs with row count - half + i) goes
        // to acc, as tmp holds half the rows; later levels keep theirs in place.
        if (first && count % 2) Add(acc, acc, rows[half * stride], span);
        count = first ? half : count - half;
        first = false;
        return true;
    }

    // The levels left, each followed by a barrier.
    __aicore__ inline void Drain() {
        while (Level()) PipeBarrier<PIPE_V>();
    }
};

template <typename T, typename G> class RmsNormGradKernel {
public:
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR workspace,
                                const AirfuseRmsNormGradTilingData& t) {
        t_ = t;
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (t.sliceCols) return InitSlices(dy, x, rstd, gamma, dx, dgamma, workspace);
#endif
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
        pipe_.InitBuffer(rstdQue_, t.bufferNum, RstdHeld() * sizeof(float));
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
        } else if (splitAcc_ || (resident_ && t.gammaStageBytes)) {
            pipe_.InitBuffer(gammaRow_, RoundUpTo(d, kBlock<G>) * sizeof(G));
        } else if (!resident_) {
            pipe_.InitBuffer(gQue_, t.bufferNum, f * sizeof(G));
        }
        if (t.outStageBytes) pipe_.InitBuffer(stage_, t.outStageBytes);
        if (vecRows_) pipe_.InitBuffer(rowVec_, t.rowVecBytes);
    }

    __aicore__ inline void Process() {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (t_.sliceCols) return ProcessSlices();
#endif
        if (rows_.count > 0) {  // cores past usedCores only take part in SyncAll
            if (mover_.natural) dxOut_.Init(dxGm_, stage_.Get<T>());
            if (resident_) {
                ProcessResident();
            } else {
                if (splitAcc_) LoadGammaRow();
                IssueChunk(0, 0);
                for (uint32_t i = 0; i < rows_.count; ++i) ProcessSplitRow(i);
                if (splitAcc_) StoreAcc();
            }
            if (mover_.natural) dxOut_.Finish();
        }
        if (ColumnMode()) {
            if (GetBlockIdx() < t_.colCores) ColumnDgamma();
            return;
        }
        if (t_.usedCores > 1) SyncCores();
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (Spread()) return SpreadReduce();
#endif
        if (GetBlockIdx() == 0) FinalReduce();
    }

private:
#if AIRFUSE_HAS_DATA_COPY_PAD
    // Slices (op_host/tiling/rms_norm.h SliceColumns): this core's sliceCols columns of every row,
    // in steps of rowsPerLoop rows (x, dy, dx rowStride apart in UB); the last sliceHeld steps keep
    // their x and dy as float in UB across the SyncAll (held). UB as SliceBytes counts it.
    __aicore__ inline void InitSlices(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR workspace) {
        uint64_t all = t_.numRows * t_.numCols;
        uint32_t r8 = t_.wsStride, k = t_.rowsPerLoop, cores = t_.usedCores, d = t_.numCols;
        sc0_ = uint32_t(GetBlockIdx()) * t_.sliceCols;
        sn_ = d - sc0_ < t_.sliceCols ? d - sc0_ : t_.sliceCols;
        sstride_ = RoundUpTo(sn_, kBlock<T>);  // rowStride, or less for a last core's shorter slice: its rows land that far apart
        mover_ = Mover{false, false, kBlock<T>};
        dyGm_.SetGlobalBuffer((__gm__ T*)dy, all);
        xGm_.SetGlobalBuffer((__gm__ T*)x, all);
        dxGm_.SetGlobalBuffer((__gm__ T*)dx, all);
        rstdGm_.SetGlobalBuffer((__gm__ float*)rstd, t_.numRows);
        gammaGm_.SetGlobalBuffer((__gm__ G*)gamma, t_.numCols);
        dgammaGm_.SetGlobalBuffer((__gm__ G*)dgamma, t_.numCols);
        wsGm_.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace), uint64_t(cores) * r8);
        uint32_t tile = k * t_.rowStride * uint32_t(sizeof(T)), step = k * t_.rowStride * uint32_t(sizeof(float)), parts = cores * r8 * 4;
        bool allHeld = SliceFirstHeld() == 0;
        pipe_.InitBuffer(inQue_, 2, 2 * tile);  // x, then dy at InHalf()
        pipe_.InitBuffer(dxQue_, 2, tile);
        // A streamed step's x and dy as float, or two held steps' products to sum per row; all held:
        // every core's parts after pass 1.
        pipe_.InitBuffer(a_, allHeld && parts > 2 * step ? parts : 2 * step);
        pipe_.InitBuffer(red_, t_.redBytes);
        pipe_.InitBuffer(gammaF_, t_.rowStride * uint32_t(sizeof(float)));
        if constexpr (!kIsFloat<G>) pipe_.InitBuffer(gammaRow_, RoundUpTo(t_.sliceCols, kBlock<G>) * uint32_t(sizeof(G)));
        pipe_.InitBuffer(acc_, t_.rowStride * uint32_t(sizeof(float)));
        pipe_.InitBuffer(c_, r8 * (allHeld ? 1 : 1 + cores) * uint32_t(sizeof(float)));  // rstd, then every core's parts
        pipe_.InitBuffer(sums_, r8 * uint32_t(sizeof(float)));
        pipe_.InitBuffer(sliceAcc_, step);
        pipe_.InitBuffer(rowVec_, t_.rowVecBytes);
        pipe_.InitBuffer(held_, 2 * HeldRows() * t_.rowStride * uint32_t(sizeof(float)));
    }

    // rowVec_ of slices: -rstd^2 / d, r8 floats; then a block per row of rstd and of dx's row factor
    // (all held: the factor's over rstd's, which only streamed steps read in pass 2).
    __aicore__ inline LocalTensor<float> SliceVec(uint32_t part) {
        uint32_t r8 = t_.wsStride;
        if (part == kFactorRows && SliceFirstHeld() == 0) part = kRstdRows;
        return rowVec_.GetWithOffset<float>(part == kSquare ? r8 : r8 * 8, (part == kSquare ? 0 : r8 + (part - kRstdRows) * r8 * 8) * uint32_t(sizeof(float)));
    }
    static constexpr uint32_t kSquare = 0, kRstdRows = 1, kFactorRows = 2;

    // Per row i of the slice's columns j (rstd r, this core's part s' of the row's sum):
    //   pass 1: dgamma_j = sum_i r_i dy_ij x_ij (whole on this core); s'_i = sum_j gamma_j dy_ij x_ij,
    //           times r_i for held rows (they keep r dy), stored times -r_i^2 / d;
    //   SyncAll; f_i = the sum of every core's s'_i;
    //   pass 2: dx_ij = r_i (gamma_j dy_ij + x_ij f_i), held rows gamma_j (r dy)_ij + x_ij f_i.
    // dgamma's terms accumulate in a step's rows of float (sliceAcc_, one MulAddDst a step), summed
    // by halving in pass 2, a level a step once the row factors are made. Pass 2 takes the steps in
    // reverse: the held ones first, with no load and three vector passes each (gamma a step ahead,
    // the factor, the cast; six for a step read again); then the streamed ones, the first loaded
    // again (from L2) during pass 1's last step. Every core's parts arrive in groups (PartGroups).
    __aicore__ inline void ProcessSlices() {
        uint32_t r8 = t_.wsStride, k = t_.rowsPerLoop, c0 = sc0_, n = sn_, stride = sstride_;
        uint32_t rows = uint32_t(t_.numRows), steps = SliceSteps(), s0 = SliceFirstHeld(), span = k * t_.rowStride;
        LocalTensor<float> r = c_.Get<float>(), acc = acc_.Get<float>(), rowsAcc = sliceAcc_.Get<float>(), g = gammaF_.Get<float>();
        LocalTensor<float> sums = sums_.Get<float>(), work = a_.Get<float>();
        PadIn(r, rstdGm_, 0, 1, rows);
        TEventID rIn = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(rIn);
        LocalTensor<G> gStage;
        if constexpr (kIsFloat<G>) {
            gStage = g;
        } else {
            gStage = gammaRow_.Get<G>();
        }
        PadIn(gStage, gammaGm_, c0, 1, n);
        TEventID gIn = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(gIn);
        LoadSlice(0, c0, n);
        // Zeros past the rows: the stored sums' tail; the accumulations' start (rowsAcc whole: its
        // halving adds cover the padding between rows); the held products' whole blocks past a row
        // (their Mul reads the padding between rows).
        Duplicate(acc, 0.0f, n);
        Duplicate(rowsAcc, 0.0f, (k < rows ? k : rows) * stride);
        Duplicate(sums, 0.0f, r8);
        if (RoundUpTo(n, 8) < stride) Duplicate(work, 0.0f, 2 * span);
        WaitFlag<HardEvent::MTE2_V>(rIn);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(rIn);
        Brcb(SliceVec(kRstdRows), r, uint8_t(r8 / 8), BrcbRepeatParams(1, 8));
        Muls(SliceVec(kSquare), r, -t_.avgFactor, int32_t(rows));
        WaitFlag<HardEvent::MTE2_V>(gIn);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(gIn);
        if constexpr (!kIsFloat<G>) Cast(g, gammaRow_.Get<G>(), RoundMode::CAST_NONE, n);
        PipeBarrier<PIPE_V>();
        Mul(SliceVec(kSquare), SliceVec(kSquare), r, int32_t(rows));
        // Pass 1, streamed steps: D = dy x, then D gamma summed per row and D r into dgamma's terms.
        for (uint32_t i = 0; i < s0; ++i) {
            uint32_t first = SliceStep(i), m = SliceStep(i + 1) - first, width = (m - 1) * stride + n;
            LocalTensor<T> in = inQue_.DeQue<T>();
            LoadSlice(i + 1, c0, n);
            LocalTensor<float> X = SliceFloat(work, in, width), A = SliceFloat(work[span], in[InHalf()], width), D = work[span], E = work;
            PipeBarrier<PIPE_V>();
            Mul(D, A, X, width);  // half/bf16: in place over dy's cast
            PipeBarrier<PIPE_V>();
            MulRows(E, D, g, RowFactor::kSharedRow, m, n, stride);
            MulRows<true>(rowsAcc, D, SliceVec(kRstdRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
            PipeBarrier<PIPE_V>();
            RowSums(true, sums[first], E, stride, m, n, red_.Get<float>(), 0, kCompactSums);
            PipeBarrier<PIPE_V>();  // the next step's casts overwrite work
            inQue_.FreeTensor(in);
        }
        // Pass 1, held steps, software-pipelined in pairs of barrier windows: step i's casts beside
        // step i-1's products (E = x gamma r dy) and dgamma terms, then i's r dy and x gamma beside
        // i-1's row sums (E in two buffers).
        for (uint32_t i = s0; i <= steps; ++i) {
            if (i > s0) {
                uint32_t width = (SliceStep(i) - SliceStep(i - 1) - 1) * stride + n;
                MulAddDst(rowsAcc, HeldDy(i - 1), HeldX(i - 1), int32_t(width));
                Mul(HeldE(i - 1), HeldE(i - 1), HeldDy(i - 1), int32_t(width));
            }
            if (i < steps) {
                uint32_t width = (SliceStep(i + 1) - SliceStep(i) - 1) * stride + n;
                LocalTensor<T> in = inQue_.DeQue<T>();
                if (i + 1 < steps) {
                    LoadSlice(i + 1, c0, n);
                } else if (s0 > 0) {
                    LoadSlice(s0 - 1, c0, n);  // pass 2's first streamed step, from L2
                }
                ToFloat(HeldX(i), in, width);
                ToFloat(HeldDy(i), in[InHalf()], width);
                inQue_.FreeTensor(in);
            }
            PipeBarrier<PIPE_V>();
            if (i < steps) {
                uint32_t first = SliceStep(i), m = SliceStep(i + 1) - first;
                MulRows(HeldDy(i), HeldDy(i), SliceVec(kRstdRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
                MulRows(HeldE(i), HeldX(i), g, RowFactor::kSharedRow, m, n, stride);
            }
            if (i > s0) {
                uint32_t first = SliceStep(i - 1);
                RowSums(true, sums[first], HeldE(i - 1), stride, SliceStep(i) - first, n, red_.Get<float>(), 0, kCompactSums);
            }
            // Rows of several repeats are summed in planes added behind a barrier of RowSums' own
            // (row_sums.h WholeRowSums), which then also ends this window (the last one's:
            // StoreSliceSums').
            if (i < steps && (i == s0 || CeilDivU(n, kRepeatFloats) == 1)) PipeBarrier<PIPE_V>();
        }
        StoreSliceSums();
        SyncCores();
        PartGroups groups;
        LoadPartGroups(groups, s0 == 0 ? work : r[r8], steps);
        RowHalving dgamma{acc, rowsAcc, rowsAcc, k < rows ? k : rows, n, stride};
        bool stored = false;
        // Gamma on r dy a step ahead of its factor (in place: dx as float after the factor).
        MulRows(HeldDy(steps - 1), HeldDy(steps - 1), g, RowFactor::kSharedRow, rows - SliceStep(steps - 1), n, stride);
        for (uint32_t j = 0; j < steps; ++j) {
            uint32_t i = steps - 1 - j, first = SliceStep(i), m = SliceStep(i + 1) - first, width = (m - 1) * stride + n;
            if (i >= s0) {
                GroupFactors(groups, j);
                LocalTensor<T> dxl;
                if constexpr (kIsFloat<T>) {
                    dxl = dxQue_.AllocTensor<T>();
                    MulRows(dxl, HeldX(i), SliceVec(kFactorRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
                } else {
                    MulRows<true>(HeldDy(i), HeldX(i), SliceVec(kFactorRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
                }
                if (i > s0) MulRows(HeldDy(i - 1), HeldDy(i - 1), g, RowFactor::kSharedRow, first - SliceStep(i - 1), n, stride);
                stored = stored || (groups.Done(j) && DgammaStep(dgamma));
                PipeBarrier<PIPE_V>();
                if constexpr (kIsFloat<T>) {
                    Add(dxl, dxl, HeldDy(i), int32_t(width));
                } else {
                    dxl = dxQue_.AllocTensor<T>();
                    FromFloat(dxl, HeldDy(i), width);
                }
                StoreDx(dxl, first, m);
                continue;
            }
            LocalTensor<T> in = inQue_.DeQue<T>();
            if (i > 0) LoadSlice(i - 1, c0, n);
            LocalTensor<float> X = SliceFloat(work, in, width), A = SliceFloat(work[span], in[InHalf()], width), B = work[span];
            PipeBarrier<PIPE_V>();
            MulRows(B, A, g, RowFactor::kSharedRow, m, n, stride);
            PipeBarrier<PIPE_V>();
            GroupFactors(groups, j);
            MulRows<true>(B, X, SliceVec(kFactorRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
            stored = stored || (groups.Done(j) && DgammaStep(dgamma));
            PipeBarrier<PIPE_V>();
            LocalTensor<T> dxl = dxQue_.AllocTensor<T>();
            if constexpr (kIsFloat<T>) {
                MulRows(dxl, B, SliceVec(kRstdRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
            } else {
                MulRows(B, B, SliceVec(kRstdRows)[first * 8], RowFactor::kRowBlock, m, n, stride);
                PipeBarrier<PIPE_V>();
                FromFloat(dxl, B, width);
            }
            PipeBarrier<PIPE_V>();  // the next step's casts overwrite work
            inQue_.FreeTensor(in);
            StoreDx(dxl, first, m);
        }
        while (!stored) {
            PipeBarrier<PIPE_V>();
            stored = DgammaStep(dgamma);
        }
    }

    __aicore__ inline uint32_t SliceFirstHeld() const { return SliceSteps() - t_.sliceHeld; }
    __aicore__ inline uint32_t HeldRows() const { return uint32_t(t_.numRows) - SliceStep(SliceFirstHeld()); }
    // Held step i's float x, and its dy (r dy after pass 1, then gamma r dy, then dx as float).
    __aicore__ inline LocalTensor<float> HeldX(uint32_t i) { return held_.Get<float>()[(SliceStep(i) - SliceStep(SliceFirstHeld())) * sstride_]; }
    __aicore__ inline LocalTensor<float> HeldDy(uint32_t i) { return HeldX(i)[HeldRows() * sstride_]; }
    // Held step i's products summed per row (x gamma r dy), in one of two buffers.
    __aicore__ inline LocalTensor<float> HeldE(uint32_t i) { return a_.Get<float>()[i % 2 * t_.rowsPerLoop * t_.rowStride]; }

    // A tile as float into dst: the cast (half/bf16), else a copy.
    __aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<T>& tile, uint32_t width) {
        if constexpr (kIsFloat<T>) {
            Muls(dst, tile, 1.0f, int32_t(width));
        } else {
            Cast(dst, tile, RoundMode::CAST_NONE, width);
        }
    }

    // Step rows first.. (m of them) of dx, from dxl, to GM.
    __aicore__ inline void StoreDx(LocalTensor<T>& dxl, uint32_t first, uint32_t m) {
        dxQue_.EnQue(dxl);
        dxl = dxQue_.DeQue<T>();
        DataCopyPad(dxGm_[uint64_t(first) * t_.numCols + sc0_], dxl,
                    DataCopyExtParams(uint16_t(m), sn_ * uint32_t(sizeof(T)), 0, (t_.numCols - sn_) * uint32_t(sizeof(T)), 0));
        dxQue_.FreeTensor(dxl);
    }

    // The next level of dgamma's halving (after a barrier since the last); when none is left, the
    // slice's dgamma (no other core adds to it) is stored: true.
    __aicore__ inline bool DgammaStep(RowHalving& dgamma) {
        if (dgamma.Level()) return false;
        LocalTensor<G> out;
        if constexpr (kIsFloat<G>) {
            out = acc_.Get<G>();
        } else {
            out = gammaRow_.Get<G>();  // gamma's stage, read once at the start
            FromFloat(out, acc_.Get<float>(), sn_);
        }
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        PadOut(dgammaGm_, out, sc0_, 1, sn_);
        return true;
    }

    // Every core's parts arrive in groups of rows: those of pass 2's first step (its stores start
    // once they are summed), of its next three, the rest; each is summed just before its first
    // step, ~6 barriers on the vector unit's path (benchmarks/kernel_time.py, 910B bf16 128 x 4096,
    // groups from pass 2's steps 0, 1, 4: 2.99 us; 0, 1, 3: 3.00; 0, 3: 3.00; 0, 2: 3.03; one: 3.18).
    struct PartGroups {
        LocalTensor<float> parts[3];
        TEventID in[3];
        uint32_t step[4], first[4], count = 0, next = 0;
        // Every group's factors made before pass 2's step j: dgamma's halving may take the vector
        // unit's spare time from the step after.
        __aicore__ inline bool Done(uint32_t j) const { return next == count && j > step[count - 1]; }
    };

    // Issues the groups' loads: rows first[i].. of every core's parts into their own part of dst, a
    // core's rows (rounded up to 8) after another, for pass 2's steps step[i]...
    __aicore__ inline void LoadPartGroups(PartGroups& p, const LocalTensor<float>& dst, uint32_t steps) {
        const uint32_t starts[3] = {0, 1, 4};
        uint32_t at = 0;
        for (; p.count < 3 && starts[p.count] < steps; ++p.count) {
            p.step[p.count] = starts[p.count];
            p.first[p.count] = SliceStep(steps - starts[p.count]);
        }
        p.step[p.count] = steps;
        p.first[p.count] = 0;
        for (uint32_t i = 0; i < p.count; ++i) {
            uint32_t m = p.first[i] - p.first[i + 1];
            p.parts[i] = dst[at];
            DataCopyPad(p.parts[i], wsGm_[p.first[i + 1]], DataCopyExtParams(uint16_t(t_.usedCores), m * 4, (t_.wsStride - m) * 4, 0, 0),
                        DataCopyPadExtParams<float>());
            p.in[i] = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
            SetFlag<HardEvent::MTE2_V>(p.in[i]);
            at += t_.usedCores * RoundUpTo(m, 8);
        }
    }

    // At pass 2's step j: the row factors of the group that starts there.
    __aicore__ inline void GroupFactors(PartGroups& p, uint32_t j) {
        if (p.next == p.count || j != p.step[p.next]) return;
        uint32_t i = p.next++;
        RowFactors(p.parts[i], p.in[i], p.first[i + 1], p.first[i] - p.first[i + 1]);
    }

    // dx's row factors of rows first.. (m): their sums over the cores (halving, a fixed order: every
    // core gets the same sums; the parts come scaled by -rstd^2 / d), a block per row. Ends with a
    // barrier.
    __aicore__ inline void RowFactors(const LocalTensor<float>& parts, TEventID in, uint32_t first, uint32_t m) {
        uint32_t m8 = RoundUpTo(m, 8);
        WaitFlag<HardEvent::MTE2_V>(in);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(in);
        for (uint32_t count = t_.usedCores; count > 1;) {
            uint32_t half = count / 2;
            Add(parts, parts, parts[(count - half) * m8], half * m8);
            PipeBarrier<PIPE_V>();
            count -= half;
        }
        Brcb(SliceVec(kFactorRows)[first * 8], parts, uint8_t(m8 / 8), BrcbRepeatParams(1, 8));
        PipeBarrier<PIPE_V>();
    }

    // Steps of slices: rowsPerLoop rows, but the first one 8 (a whole block of the packed sums)
    // where they are >= 16, so the last is short too when the rows allow (128 rows in steps of 24:
    // 8 + 5 x 24): the last of pass 1 is computed after every load has landed, the first of pass 1
    // is the last of pass 2, whose store ends the launch (benchmarks/kernel_time.py, 910B2 bf16
    // 128 x 8192, steps of 24: 5.98 -> 5.73 us; 128 x 4096, steps of 32: 3.67 -> 3.66 us).
    __aicore__ inline uint32_t SliceFirstRows() const {
        uint32_t k = t_.rowsPerLoop;
        return k >= 16 && t_.numRows > k ? 8 : k;
    }
    __aicore__ inline uint32_t SliceSteps() const {
        uint32_t rows = uint32_t(t_.numRows), h = SliceFirstRows();
        return rows <= h ? 1 : 1 + CeilDivU(rows - h, t_.rowsPerLoop);
    }
    // The first row of step i (i = SliceSteps(): the rows' end).
    __aicore__ inline uint32_t SliceStep(uint32_t i) const {
        uint32_t rows = uint32_t(t_.numRows), h = SliceFirstRows(), steps = SliceSteps();
        if (i == 0) return 0;
        return i >= steps ? rows : h + (i - 1) * t_.rowsPerLoop;
    }

    // Issues the loads of step i of the slice's n columns from c0: x, then dy.
    __aicore__ inline void LoadSlice(uint32_t i, uint32_t c0, uint32_t n) {
        uint32_t d = t_.numCols, first = SliceStep(i), m = SliceStep(i + 1) - first;
        DataCopyExtParams rowsOf(uint16_t(m), n * uint32_t(sizeof(T)), (d - n) * uint32_t(sizeof(T)), 0, 0);
        LocalTensor<T> in = inQue_.AllocTensor<T>();
        DataCopyPad(in, xGm_[uint64_t(first) * d + c0], rowsOf, DataCopyPadExtParams<T>());
        DataCopyPad(in[InHalf()], dyGm_[uint64_t(first) * d + c0], rowsOf, DataCopyPadExtParams<T>());
        inQue_.EnQue(in);
    }

    // A streamed step's tile as float: the tile itself (float), else its cast into buf.
    __aicore__ inline LocalTensor<float> SliceFloat(const LocalTensor<float>& buf, const LocalTensor<T>& tile, uint32_t width) {
        if constexpr (kIsFloat<T>) {
            return tile;
        } else {
            Cast(buf, tile, RoundMode::CAST_NONE, width);
            return buf;
        }
    }

    // After pass 1: this core's partial row sums to the workspace, for every core after SyncAll.
    __aicore__ inline void StoreSliceSums() {
        PipeBarrier<PIPE_V>();
        Mul(sums_.Get<float>(), sums_.Get<float>(), SliceVec(kSquare), int32_t(t_.numRows));
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        PadOut(wsGm_, sums_.Get<float>(), uint64_t(GetBlockIdx()) * t_.wsStride, 1, t_.wsStride);
    }
#endif

    // Partial rows written before other cores read them. Only 910B takes this path with several
    // cores: 310P has no hardware SyncAll, and the tiling splits dgamma by columns there instead
    // (op_host/tiling/rms_norm.h RmsNormGrad says why not its software SyncAll).
    __aicore__ inline void SyncCores() {
#if !(defined(__CCE_AICORE__) && __CCE_AICORE__ == 200)
        SyncAll();
#endif
    }

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
        LocalTensor<float> g = gammaF_.Get<float>();
        LocalTensor<float> acc = acc_.Get<float>();
        LocalTensor<float> sums = red_.Get<float>();
        LocalTensor<float> scratch = red_.GetWithOffset<float>(t_.redBytes / 4 - rpl * kSumStride, rpl * kSumStride * 4);
        // 910B: gamma after the first step's loads, waited for just before its first use (its
        // transfer no longer delays the first step: 8 KB at 128 x 4096 bf16 on 910B2, ~440 cycles).
        bool lateGamma = !mover_.aligned && (kIsFloat<G> || t_.gammaStageBytes != 0);
        TEventID gammaIn = 0;
        if (lateGamma) {
            LoadStep(0);
            gammaIn = LoadGammaInto(GammaStage());
        } else {
            mover_.InAsFloat(g, Partials().template ReinterpretCast<G>(), gammaGm_, d);
        }
        if (vecRows_ && mover_.aligned) {
            BuildRowTables();
        } else if (vecRows_) {
            Duplicate(rowVec_.Get<float>(), 0.0f, int32_t(t_.rowVecBytes / sizeof(float)));
        }
        Duplicate(acc, 0.0f, span);
        // The first step's rstd copy overwrites rowVec_'s zeros (acc's first reader comes after the step's own barriers).
        PipeBarrier<PIPE_V>();
        bool prefetch = t_.bufferNum > 1;
        if (!lateGamma) LoadStep(0);
        for (uint32_t done = 0; done < rows_.count; done += rpl) {
            uint32_t n = rows_.count - done < rpl ? rows_.count - done : rpl;
            uint32_t width = (n - 1) * stride + span;
            LocalTensor<T> in = inQue_.DeQue<T>();
            LocalTensor<float> r = rstdQue_.DeQue<float>();
            if (!vecRows_) WaitMte2ForScalar();
            bool more = done + rpl < rows_.count;
            if (prefetch && more) LoadStep(done + rpl);
            LocalTensor<T> x = in, dy = in[InHalf()];
            LocalTensor<float> X, A, D;
            if constexpr (kIsFloat<T>) {
                X = x;
                A = dy;
                D = c_.Get<float>();
            } else {
                X = a_.Get<float>();
                A = b_.Get<float>();
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
            if (lateGamma && done == 0) GammaAsFloat(g, gammaIn);
            // dgamma's rows summed a level per phase of the dx work below (each level alone
            // cost a barrier: 910B2 4096 x 128 bf16, 7 a step), the first level out of D into dx's
            // buffer, free until dx is written, so that D takes the row sums' products meanwhile.
            LocalTensor<T> dxl = dxQue_.AllocTensor<T>();
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
            dxl = dxQue_.DeQue<T>();
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

    // Resident rows on 910B: gamma's load target, gammaF_ itself when float, else its stage gammaRow_.
    __aicore__ inline LocalTensor<G> GammaStage() {
        if constexpr (kIsFloat<G>) {
            return gammaF_.Get<G>();
        } else {
            return gammaRow_.Get<G>();
        }
    }

    // Issues gamma's load into dst, in its dtype; returns its MTE2 -> V flag.
    __aicore__ inline TEventID LoadGammaInto(const LocalTensor<G>& dst) {
        mover_.In(dst, gammaGm_, 0, t_.numCols);
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }

    // Waits for gamma's load and casts it to float (half/bf16); ends with a barrier.
    __aicore__ inline void GammaAsFloat(const LocalTensor<float>& g, TEventID id) {
        WaitFlag<HardEvent::MTE2_V>(id);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(id);
        if constexpr (!kIsFloat<G>) {
            Cast(g, gammaRow_.Get<G>(), RoundMode::CAST_NONE, mover_.Span(t_.numCols));
            PipeBarrier<PIPE_V>();
        }
    }

    // This core's dgamma accumulation (acc_) to its workspace row, unless core 0 sums the rows itself.
    __aicore__ inline void StoreAcc() {
        if (GetBlockIdx() == 0 && !Spread()) return;
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        mover_.PaddedOut(wsGm_, acc_.Get<float>(), uint64_t(GetBlockIdx()) * t_.wsStride, t_.numCols);
    }

    // splitAcc: gamma whole into gammaRow_ before the first chunk's loads on MTE2, then acc_ zeroed.
    // In its dtype: the chunks' DeQue (MTE2 -> V) orders it before the vector work; as float from
    // half/bf16: staged in a_ and b_ (VECIN: acc_ is stored, so VECOUT, which DataCopy cannot load
    // into), a buffer's worth at a time, in turn (a piece loads while the one before is cast), and
    // cast (the chunks' first vector work waits for the casts: ChunkSum's barrier).
    __aicore__ inline void LoadGammaRow() {
        uint32_t d = t_.numCols;
        if (GammaRowFloat() && !kIsFloat<G>) {
            // Pieces of whole blocks of gamma (floatCols is a multiple of 8 floats, so 32 B of G).
            uint32_t piece = t_.floatCols * uint32_t(sizeof(float) / sizeof(G));
            for (uint32_t c0 = 0, k = 0; c0 < d; c0 += piece, ++k) {
                if (k >= 2) {  // the cast two pieces back still reads this stage (not V_MTE2: see LoadWorkspace)
                    int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
                    SetFlag<HardEvent::V_S>(eventVS);
                    WaitFlag<HardEvent::V_S>(eventVS);
                }
                LocalTensor<G> stage = k % 2 ? b_.Get<G>() : a_.Get<G>();
                mover_.InAsFloat(gammaRow_.Get<float>()[c0], stage, gammaGm_[c0], d - c0 < piece ? d - c0 : piece);
            }
        } else {
            mover_.In(gammaRow_.Get<G>(), gammaGm_, 0, d);
        }
        Duplicate(acc_.Get<float>(), 0.0f, RoundUpTo(d, kBlock<float>));
    }

    // splitAcc with gamma held whole as float32 (float gamma, or the tiling's gammaFloat): a chunk's
    // gamma is a slice of gammaRow_, no cast per chunk.
    __aicore__ inline bool GammaRowFloat() const { return splitAcc_ && (kIsFloat<G> || t_.gammaFloat != 0); }

    // Elements from the input buffer's x to its dy.
    __aicore__ inline uint32_t InHalf() const { return t_.rowsPerLoop * t_.rowStride; }

    // vecRows_: a step's per-row scalars on the vector unit, no scalar read per row. rowVec_
    // holds, for n8 = rowsPerLoop rounded up to 8: rstd, -rstd^2 / d and the row sums, then their
    // factor (n8 floats each; A2: zeroed once, so Brcb's whole repeats read written memory past a
    // short step's rows), then a block per row of rstd and of rstd^2 * s / d (A2: negated, by Brcb; 310P:
    // by Gather, whose offset tables follow, n8 * 8 each) (op_host/tiling/rms_norm.h, rowVecBytes).
    static constexpr uint32_t kRstd = 0, kRstdAvg = 1, kMean = 2, kRstdBlocks = 3, kMeanBlocks = 4, kRstdOffsets = 5, kSumOffsets = 6;
    template <typename U = float> __aicore__ inline LocalTensor<U> RowVec(uint32_t part) {
        uint32_t n8 = RoundUpTo(t_.rowsPerLoop, 8), at = part < kRstdBlocks ? part * n8 : 3 * n8 + (part - kRstdBlocks) * n8 * 8;
        return rowVec_.GetWithOffset<U>(part < kRstdBlocks ? n8 : n8 * 8, at * uint32_t(sizeof(float)));
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
            if (loaded < RstdHeld()) {  // a short last step: Gather reads its source whole
                Duplicate(r[loaded], 0.0f, int32_t(RstdHeld() - loaded));
                PipeBarrier<PIPE_V>();
            }
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
            Gather(mean, red_.Get<float>(n * kSumStride), RowVec<uint32_t>(kSumOffsets), 0, n * 8);
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
        LocalTensor<T> in = inQue_.AllocTensor<T>();
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        mover_.RowsIn(in, xGm_, off, n, d, t_.rowStride);
        mover_.RowsIn(in[InHalf()], dyGm_, off, n, d, t_.rowStride);
        LoadRstd(r, first, n);
        inQue_.EnQue(in);
        rstdQue_.EnQue(r);
    }

    // acc += the sum of n rows of `rows` (stride apart), by halving (a fixed order); leaves rows
    // clobbered and ends with a barrier.
    __aicore__ inline void AddRows(const LocalTensor<float>& acc, const LocalTensor<float>& rows, uint32_t n, uint32_t span, uint32_t stride) {
        RowHalving{acc, rows, rows, n, span, stride}.Drain();
    }

    // rstd values loaded by MTE2 are read by the scalar unit.
    __aicore__ inline void WaitMte2ForScalar() {
        int32_t eventMTE2S = GetTPipePtr()->FetchEventID(HardEvent::MTE2_S);
        SetFlag<HardEvent::MTE2_S>(eventMTE2S);
        WaitFlag<HardEvent::MTE2_S>(eventMTE2S);
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
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        LoadRstd(r, row, 1);
        rstdQue_.EnQue(r);
        r = rstdQue_.DeQue<float>();
        float rv = ReadScalarAt(r, 0);
        rstdQue_.FreeTensor(r);
        LocalTensor<float> sums = red_.Get<float>();
        // rowResident: the row's x and dy arrived whole (IssueChunk); the chunks are slices of them.
        LocalTensor<T> whole;
        if (rowResident_) {
            whole = inQue_.DeQue<T>();
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
            LocalTensor<T> dxl = dxQue_.AllocTensor<T>();
            if (!splitAcc_ && !ColumnMode()) AddToWorkspaceRow(x, dy, rv, row, wsRow + c0, n);
            Dx(x, dy, gq, c0, dxl, rv, rv * mean, span);
            if (!rowResident_) FreeChunk(in, gq);
            if (!prefetch && issue) IssueChunk(k + 1 < chunks ? row : row + 1, k + 1 < chunks ? k + 1 : 0);
            dxQue_.EnQue(dxl);
            dxl = dxQue_.DeQue<T>();
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
        LocalTensor<float> a = chunkF_.Get<float>();
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

    __aicore__ inline bool ColumnMode() const { return t_.colCores > 0; }

    // Floats of each rstd buffer: a step's rows, or a column step's (op_host/tiling/rms_norm.h SplitColumns).
    __aicore__ inline uint32_t RstdHeld() const {
        return RoundUpTo(t_.rowsPerLoop > t_.colRows ? t_.rowsPerLoop : t_.colRows, kBlock<float>);
    }

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
            // X = x * dy; then rstd broadcast over each row's n columns (B) by a Gather with byte
            // offsets 4i for row i, built where this step's inputs no longer are (no scalar read
            // per row); X *= B.
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
            for (uint32_t i = 0; i < k; ++i) Duplicate(offsets[i * n], i * uint32_t(sizeof(float)), n);
            uint32_t loaded = RoundUpTo(k, kBlock<float>);
            if (loaded < RstdHeld()) Duplicate(r[loaded], 0.0f, RstdHeld() - loaded);  // Gather reads its source whole
            PipeBarrier<PIPE_V>();
            Gather(B, r, offsets, 0, k * n);
            PipeBarrier<PIPE_V>();
            Mul(X, X, B, k * n);
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

    // Issues the loads of chunk k of this core's row `row`: x and dy (rowResident: the whole row),
    // and gamma's columns unless gamma is in UB whole (splitAcc).
    __aicore__ inline void IssueChunk(uint32_t row, uint32_t k) {
        uint32_t d = t_.numCols, c0 = k * t_.colsPerChunk, n = d - c0 < t_.colsPerChunk ? d - c0 : t_.colsPerChunk;
        if (rowResident_) n = d;
        uint64_t off = uint64_t(row) * d + c0;
        LocalTensor<T> in = inQue_.AllocTensor<T>();
        mover_.In(in, xGm_, off, n);
        mover_.In(in[InHalf()], dyGm_, off, n);
        inQue_.EnQue(in);
        if (splitAcc_) return;
        LocalTensor<G> gq = gQue_.AllocTensor<G>();
        mover_.In(gq, gammaGm_, c0, n);
        gQue_.EnQue(gq);
    }

    // The chunk issued first: x, then dy at InHalf(); gq its gamma columns (splitAcc: none, gamma is whole in UB).
    __aicore__ inline LocalTensor<T> TakeChunk(LocalTensor<G>& gq) {
        if (!splitAcc_) gq = gQue_.DeQue<G>();
        return inQue_.DeQue<T>();
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
        LocalTensor<float> b = b_.Get<float>();
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
        LocalTensor<float> a = a_.Get<float>(), b = b_.Get<float>(), dyf, xf, g;
        CastChunk(x, dy, gq, c0, span, xf, dyf, g);
        Mul(a, dyf, xf, span);
        PipeBarrier<PIPE_V>();
        if (splitAcc_) Axpy(acc_.Get<float>()[c0], a, rv, span);
        Mul(b, a, g, span);
        PipeBarrier<PIPE_V>();
        mover_.ZeroRepeat(b, n);
        LocalTensor<float> scratch = red_.GetWithOffset<float>(t_.redBytes / 4 - chunks * kSumStride, chunks * kSumStride * 4);
        RowSums(!mover_.aligned, red_.Get<float>()[k * kSumStride], b, RoundUpTo(span, kBlock<float>), 1, span, scratch,
                t_.reduceTmpBytes / sizeof(float));
        if (k + 1 < chunks) PipeBarrier<PIPE_V>();  // the next chunk overwrites a_, b_ and the scratch (after the last, S waits for V)
    }

    // A split chunk's dx at column c0 (rvMean = rstd * mean):
    //   dx = rstd * (dy * gamma - x * rvMean)
    __aicore__ inline void Dx(const LocalTensor<T>& x, const LocalTensor<T>& dy, const LocalTensor<G>& gq, uint32_t c0, const LocalTensor<T>& dx, float rv,
                              float rvMean, uint32_t n) {
        PipeBarrier<PIPE_V>();  // the previous chunk's last ops (or the workspace row's) still read a_, b_ and gamma's float buffer
        LocalTensor<float> a = a_.Get<float>(), dyf, xf, g;
        CastChunk(x, dy, gq, c0, n, xf, dyf, g);
        Mul(a, dyf, g, n);  // in place when dyf is dy's cast
        PipeBarrier<PIPE_V>();
        Axpy(a, xf, -rvMean, n);
        PipeBarrier<PIPE_V>();
        ScaleIntoDx(dx, a, rv, n);
    }

    // dx = rv * src: straight into dx when T is float, else into a_ and then rounded to T.
    __aicore__ inline void ScaleIntoDx(const LocalTensor<T>& dx, const LocalTensor<float>& src, float rv, uint32_t n) {
        LocalTensor<float> a = a_.Get<float>(), out = a;
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
            xf = b_.Get<float>();
            dyf = a_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, n);
            Cast(dyf, dy, RoundMode::CAST_NONE, n);
        }
        bool castGamma = false;
        if (GammaRowFloat()) {
            g = gammaRow_.Get<float>()[c0];
        } else if constexpr (kIsFloat<G>) {
            g = gq;
        } else {
            g = chunkF_.Get<float>();
            Cast(g, splitAcc_ ? gammaRow_.Get<G>()[c0] : gq, RoundMode::CAST_NONE, n);
            castGamma = true;
        }
        if (!kIsFloat<T> || castGamma) PipeBarrier<PIPE_V>();
    }

    AirfuseRmsNormGradTilingData t_;
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
    TBuf<TPosition::VECOUT> sums_;  // slices: this core's part of every row's sum
    TBuf<TPosition::VECCALC> sliceAcc_;  // slices: dgamma's terms, a step's rows
    TBuf<TPosition::VECCALC> held_;      // slices: the held steps' x and dy as float
    uint32_t sc0_ = 0, sn_ = 0, sstride_ = 0;  // slices: this core's first column, its columns, their UB stride
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

}  // namespace

extern "C" __global__ __aicore__ void airfuse_rms_norm_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma,
                                                            GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_SYNC_ALL_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormGradTilingData, t, tiling);
    RmsNormGradKernel<DTYPE_X, DTYPE_GAMMA> op;
    op.Init(dy, x, rstd, gamma, dx, dgamma, workspace, t);
    op.Process();
}
