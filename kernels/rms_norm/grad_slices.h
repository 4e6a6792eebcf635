// AirfuseRmsNormGrad, slices (910B, few rows a core; tiling key kRmsNormGradSlicesKey): each
// core takes a slice of columns of every row, so dgamma is whole on it and only the rows' sums
// meet across one SyncAll (4 bytes a row a core in the workspace).
#pragma once
#include "grad_base.h"
#include "grad_slices_tiling.h"

#if AIRFUSE_HAS_DATA_COPY_PAD
namespace airfuse_kernel {

template <typename T, typename G> class RmsNormGradSlices {
public:
    // op_host/tiling/rms_norm_grad_slices.h SliceColumns: this core's sliceCols columns of every row,
    // in steps of rowsPerLoop rows (x, dy, dx rowStride apart in UB); the last sliceHeld steps keep
    // their x and dy as float in UB across the SyncAll (held). UB as SliceBytes counts it.
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma, GM_ADDR workspace,
                                const AirfuseRmsNormGradSlicesTilingData& t) {
        t_ = t;
        uint64_t all = t_.numRows * t_.numCols;
        uint32_t r8 = t_.wsStride, k = t_.rowsPerLoop, cores = t_.usedCores, d = t_.numCols;
        sc0_ = uint32_t(GetBlockIdx()) * t_.sliceCols;
        sn_ = d - sc0_ < t_.sliceCols ? d - sc0_ : t_.sliceCols;
        sstride_ = RoundUpTo(sn_, kBlock<T>);  // rowStride, or less for a last core's shorter slice: its rows land that far apart
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
    __aicore__ inline void Process() {
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
        SyncAllCores();
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

private:
    // rowVec_ of slices: -rstd^2 / d, r8 floats; then a block per row of rstd and of dx's row factor
    // (all held: the factor's over rstd's, which only streamed steps read in pass 2).
    __aicore__ inline LocalTensor<float> SliceVec(uint32_t part) {
        uint32_t r8 = t_.wsStride;
        if (part == kFactorRows && SliceFirstHeld() == 0) part = kRstdRows;
        return rowVec_.GetWithOffset<float>(part == kSquare ? r8 : r8 * 8, (part == kSquare ? 0 : r8 + (part - kRstdRows) * r8 * 8) * uint32_t(sizeof(float)));
    }
    static constexpr uint32_t kSquare = 0, kRstdRows = 1, kFactorRows = 2;

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

    // Steps of slices: rowsPerLoop rows each, the last one what is left.
    __aicore__ inline uint32_t SliceSteps() const { return CeilDivU(uint32_t(t_.numRows), t_.rowsPerLoop); }
    // The first row of step i (i = SliceSteps(): the rows' end).
    __aicore__ inline uint32_t SliceStep(uint32_t i) const {
        uint32_t rows = uint32_t(t_.numRows), first = i * t_.rowsPerLoop;
        return first < rows ? first : rows;
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

    // Elements from the input buffer's x to its dy.
    __aicore__ inline uint32_t InHalf() const { return t_.rowsPerLoop * t_.rowStride; }

    AirfuseRmsNormGradSlicesTilingData t_;
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> inQue_;   // a step's x, then its dy at InHalf()
    TQue<QuePosition::VECOUT, 1> dxQue_;
    TBuf<TPosition::VECIN> a_;            // a streamed step's x and dy as float, or two held steps' products; all held: every core's parts
    TBuf<TPosition::VECCALC> red_;
    TBuf<TPosition::VECIN> gammaF_;       // the slice's gamma as float (float gamma loads straight in)
    TBuf<TPosition::VECIN> gammaRow_;     // half/bf16 gamma's stage, then dgamma's cast
    TBuf<TPosition::VECOUT> acc_;         // dgamma's float sum
    TBuf<TPosition::VECIN> c_;            // rstd, then (some steps streamed) every core's parts
    TBuf<TPosition::VECOUT> sums_;        // this core's part of every row's sum
    TBuf<TPosition::VECCALC> sliceAcc_;   // dgamma's terms, a step's rows
    TBuf<TPosition::VECCALC> rowVec_;
    TBuf<TPosition::VECCALC> held_;       // the held steps' x and dy as float
    uint32_t sc0_ = 0, sn_ = 0, sstride_ = 0;  // this core's first column, its columns, their UB stride
    GlobalTensor<T> dyGm_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> dxGm_;
    GlobalTensor<float> rstdGm_;
    GlobalTensor<G> gammaGm_;
    GlobalTensor<G> dgammaGm_;
    GlobalTensor<float> wsGm_;
};

}  // namespace airfuse_kernel
#endif
