// The row machinery of AirfuseRmsNorm and AirfuseAddRmsNorm: y = x * rstd * gamma with
// rstd = 1 / sqrt(mean(x^2) + epsilon) over the last dim; with kResidual, x = x1 + x2 first (added
// in float32, rounded once to the row dtype, written out as x; y and rstd use that rounded x).
// Rows are split over cores; a core moves rowsPerLoop rows per step through double-buffered
// queues (copies: gm_copy.h, per chip). Rows whose tiles fit in UB but whose float32 work does not
// (half/bf16 at 16384) stay resident, their float work done in column chunks; rows too long for
// UB are processed in column chunks in two passes (sum, then scale; the residual form reads its x
// back from GM in pass 2).
// All math is float32. rstd of a resident step (rows of at most 255 blocks as float; on 310P rows
// of at least 32 B and steps of whole blocks of rows) is computed for all its rows by vector ops
// (Sqrt and Div, exact to 1 ulp: never the approximate Rsqrt) and applied through a block per row
// (Brcb on A2; a Gather on 310P, where the twin does not model Brcb's reserved UB) and strided
// Muls, no scalar read per row; elsewhere rstd is computed on the scalar unit. A2 cores of one
// resident step (half/bf16) split it into row groups, each with its own rstd, their chains
// software-pipelined (ProcessGroups).
#pragma once
#include "gm_copy.h"
#include "rms_norm_tiling.h"
#include "row_sums.h"

namespace airfuse_kernel {

// 310P: the least y a part of the last step stores (ProcessResident's castLater parts), times
// the cores launched (which share HBM: a part's store takes its bytes times them over HBM's rate).
constexpr uint32_t kLaterStoreBytes310p = 16384;
// A2: the least bytes of a part of a one-step core's load (ProcessResident's firstPart), or of a
// later part of the last step's y scaled after the store before it, times the cores launched:
// shorter parts' transfers (37 cycles at 32 KB over 910B's 888.9 B/cycle) do not outlast the
// other part's vector work, and cost their own barriers (910B2 bf16 rms_norm 128 x 128, 3 rows a
// core of 256 B: 0.27 us whole, 0.28 in parts).
constexpr uint32_t kPartBytesA2 = 32768;

template <typename T, typename G, bool kResidual> class RmsNormRows {
public:
    // x2 and xOut are used only with kResidual (x is then x1).
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR xOut, const AirfuseRmsNormTilingData& t) {
        t_ = t;
        rows_ = MyRows(t.rowsPerCore, t.rowsRemainder, t.rowCores);
        bool aligned = t.alignedCopy != 0;
        mover_ = Mover{aligned, aligned && t.numCols < kBlock<T>, kBlock<T>};
        uint64_t d = t.numCols;
        uint32_t tile = t.rowsPerLoop * t.rowStride * sizeof(T);
        // Reads may run past this core's rows (whole blocks of short rows), never past x's end.
        xGm_.SetGlobalBuffer((__gm__ T*)x + rows_.start * d, (t.numRows - rows_.start) * d);
        yGm_.SetGlobalBuffer((__gm__ T*)y + rows_.start * d, rows_.count * d);
        rstdGm_.SetGlobalBuffer((__gm__ float*)rstd + rows_.start, rows_.count);
        gammaGm_.SetGlobalBuffer((__gm__ G*)gamma, d);
        pipe_.InitBuffer(xQue_, t.bufferNum, tile);
        pipe_.InitBuffer(yQue_, t.gammaFloatRow ? 1 : t.bufferNum, tile);
        if constexpr (kResidual) {
            x2Gm_.SetGlobalBuffer((__gm__ T*)x2 + rows_.start * d, (t.numRows - rows_.start) * d);
            xOutGm_.SetGlobalBuffer((__gm__ T*)xOut + rows_.start * d, rows_.count * d);
            pipe_.InitBuffer(x2Que_, t.bufferNum, tile);
            pipe_.InitBuffer(xOutQue_, t.bufferNum, tile);
            if constexpr (!kIsFloat<T>) pipe_.InitBuffer(work2_, t.workCols * sizeof(float));
        }
        if (aligned) {
            pipe_.InitBuffer(rstdStage_, t.rstdStageBytes);
        } else {
            pipe_.InitBuffer(rstdQue_, t.bufferNum, t.rowsPerLoop * sizeof(float));
        }
        // gammaFloatRow: work_ holds ProcessResidentChunks' two float chunks (x's, and the squares'
        // accumulator gammaF_ holds otherwise), pass 2 using them as one.
        pipe_.InitBuffer(work_, (t.workPair || t.gammaFloatRow ? 2 : 1) * t.workCols * sizeof(float));
        if (t.squaresBytes) pipe_.InitBuffer(squares_, t.squaresBytes);
        if (!t.gammaFloatRow) pipe_.InitBuffer(gammaF_, t.floatCols * sizeof(float));
        pipe_.InitBuffer(red_, t.redBytes);
        if (t.rstdVecBytes) pipe_.InitBuffer(rstdV_, t.rstdVecBytes);
        if (t.colsPerChunk < t.numCols && t.rowResident) {
            pipe_.InitBuffer(gammaRow_, t.gammaFloatRow ? RoundUpTo(t.numCols, 8) * sizeof(float) : RoundUpTo(t.numCols, kBlock<G>) * sizeof(G));
        } else if (t.colsPerChunk == t.numCols && !kIsFloat<G>) {
            pipe_.InitBuffer(gammaRow_, RoundUpTo(t.numCols, kBlock<G>) * sizeof(G));  // gamma's stage before its cast
        } else if (t.colsPerChunk < t.numCols) {
            pipe_.InitBuffer(gQue_, t.bufferNum, t.floatCols * sizeof(G));
        }
        if (t.outStageBytes) pipe_.InitBuffer(yStage_, t.outStageBytes);
        if (kResidual && t.outStageBytes) pipe_.InitBuffer(xStage_, t.outStageBytes);
    }

    __aicore__ inline void Process() {
        if (rows_.count == 0) return;
        if (mover_.aligned) rstdOut_.Init(rstdGm_, rstdStage_.Get<float>());
        if (mover_.natural) yOut_.Init(yGm_, yStage_.Get<T>());
        if (kResidual && mover_.natural) xOut_.Init(xOutGm_, xStage_.Get<T>());
        if (t_.colsPerChunk == t_.numCols) {
            ProcessResident();
        } else if (t_.rowResident) {
            ProcessResidentChunks();
        } else {
            for (uint32_t i = 0; i < rows_.count; ++i) ProcessSplitRow(i);
        }
        if (mover_.aligned) rstdOut_.Finish();
        if (mover_.natural) yOut_.Finish();
        if (kResidual && mover_.natural) xOut_.Finish();
    }

private:
    // gamma is read once per core, after the first step's rows (which it would otherwise delay by
    // its own transfer: 396 cycles at 4096 bf16 on 910B2, benchmarks/kernel_time.py), and kept in
    // UB as float, cast just before the first step scales. A step's rows go through each vector
    // op together where the layout allows (all but 310P rows under 32 B): one Cast, Mul, Add for
    // all of them, so the barriers and latencies between dependent ops are paid per step, not per
    // row; the row sums meet the scalar unit once per step (one V -> S wait, then the rstd of each
    // row is read while the vector pipe scales the rows before it). Each row has its own part of
    // work_.
    __aicore__ inline void ProcessResident() {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if constexpr (!kIsFloat<T>) {
            RowGroup groups[kMaxGroups];
            if (uint32_t count = PlanGroups(groups)) return ProcessGroups(groups, count);
        }
#endif
        uint32_t d = t_.numCols, span = mover_.Span(d), stride = t_.rowStride;
        LocalTensor<float> g = gammaF_.Get<float>();
        bool prefetch = t_.bufferNum > 1, vecRstd = t_.rstdVecBytes != 0;
        if (vecRstd) BuildRstdTables();
        // The squares: in work_ over x as float (cast again to scale), or, half/bf16 with UB for
        // it (the residual form: x2's float buffer, free once added), apart, x as float then
        // staying in work_ for the scaling (one cast pass and barrier fewer).
        bool sqApart = !kIsFloat<T> && (kResidual || t_.squaresBytes != 0);
        // A2, a core of one step whose x as float stays apart from the squares: its rows load in
        // two parts, one per buffer of each input queue, and the first part is added (kResidual),
        // cast and squared while the second lands (the load is otherwise exposed whole before
        // any vector work). The first part as long as its work still ends about when the second
        // lands (benchmarks/kernel_time.py, 910B2 bf16 1024 x 128, 22 rows a core): two thirds of
        // the rows (a cast and a square; rms_norm 11 + 11 rows 0.643 us, 14 + 8 0.636), 11/20 with
        // the residual add's four more passes and the second input (add_rms_norm 11 + 11 0.901,
        // 12 + 10 0.895, 13 + 9 0.899).
        uint32_t one = rows_.count == StepRows(0) ? rows_.count : 0;
        uint32_t firstPart = !mover_.aligned && prefetch && sqApart ? (kResidual ? one * 11 / 20 : one * 2 / 3) : 0;
        if (uint64_t(rows_.count - firstPart) * t_.numCols * sizeof(T) * GetBlockNum() < kPartBytesA2) firstPart = 0;
        LoadStep(0, firstPart);
        LocalTensor<T> xB, x2B;  // the second part, enqueued once the first is dequeued (queues of depth 1)
        if (firstPart) {
            xB = RowsIn(xQue_, xGm_, firstPart, rows_.count - firstPart, false);
            if constexpr (kResidual) x2B = RowsIn(x2Que_, x2Gm_, firstPart, rows_.count - firstPart, false);
        }
        TEventID gammaIn{};
        for (uint32_t done = 0, n = 0, step = 0; done < rows_.count; done += n, ++step) {
            n = StepRows(done);
            // Ops over the step's rows at once cover n * stride elements (the padding between
            // rows too, never stored); 310P rows under 32 B are packed, so row by row.
            uint32_t together = mover_.natural ? 1 : n, width = mover_.natural ? span : (n - 1) * stride + span;
            bool more = done + n < rows_.count;
            LocalTensor<T> x = xQue_.DeQue<T>();
            LocalTensor<T> x2, sum;
            if constexpr (kResidual) x2 = x2Que_.DeQue<T>();
            if (done == 0) {
                if (firstPart) {
                    xQue_.EnQue(xB);
                    if constexpr (kResidual) x2Que_.EnQue(x2B);
                }
                gammaIn = LoadGamma(g);  // after the second part's flags, which would otherwise wait for it too
            }
            // Two buffers per queue: the next step's rows load while this one is computed.
            if (prefetch && more) LoadStep(done + n);
            // Steps alternate between work_'s halves when it has two: a step's first vector op
            // then writes the half the last step did not read, and no barrier ends a step.
            LocalTensor<float> w = work_.GetWithOffset<float>(t_.workCols, t_.workPair && step % 2 ? t_.workCols * 4 : 0);
            if constexpr (kResidual) sum = xOutQue_.AllocTensor<T>();
            const LocalTensor<T>& normed = kResidual ? sum : x;
            LocalTensor<float> sq = w;
            if (sqApart) sq = kResidual ? work2_.Get<float>() : squares_.Get<float>();
            // The step's parts (firstPart: two, each in its own buffer, the second freed once
            // squared), each added and its x stored (kResidual), then cast and squared.
            for (uint32_t r0 = 0, m = 0; r0 < n; r0 += m) {
                m = r0 == 0 && done == 0 && firstPart ? firstPart : n - r0;
                // A part before the last also covers its last row's padding: the step's later ops
                // (the scaling, the cast back) run over its rows' padding too, as one width.
                uint32_t widthPart = mover_.natural ? span : (r0 + m < n ? m * stride : (m - 1) * stride + span);
                LocalTensor<T> xp = x, x2p = x2;
                if (r0) {
                    xp = xQue_.DeQue<T>();
                    if constexpr (kResidual) x2p = x2Que_.DeQue<T>();
                }
                if constexpr (kResidual) {
                    for (uint32_t i = 0; i < m; i += together)
                        AddRounded(sum[(r0 + i) * stride], xp[i * stride], x2p[i * stride], widthPart, w[(r0 + i) * stride], (r0 + i) * stride);
                    if (r0) {
                        PartOut(xOutGm_, sum, done, r0, m);
                    } else {
                        RowsOutKeep(xOutQue_, sum, xOutGm_, xOut_, done, m);
                    }
                }
                LocalTensor<T> normedPart = kResidual ? sum[r0 * stride] : xp;
                for (uint32_t i = 0; i < m; i += together) {
                    LocalTensor<float> xf = AsFloat(normedPart[i * stride], w[(r0 + i) * stride], widthPart);
                    Mul(sq[(r0 + i) * stride], xf, xf, widthPart);
                }
                if (r0) {
                    xQue_.FreeTensor(xp);
                    if constexpr (kResidual) x2Que_.FreeTensor(x2p);
                }
            }
            PipeBarrier<PIPE_V>();
            LocalTensor<T> y = yQue_.AllocTensor<T>();
            LocalTensor<float> r;
            if (!mover_.aligned) r = rstdQue_.AllocTensor<float>();
            // The vector rstd: epsilon under the packed sums' Axpy (VectorRstd); on A2 in the Brcb
            // part (the last step's ScaleRows read it before the barrier between its two MulRows).
            if (vecRstd) Duplicate(RstdEpsilon(RoundUpTo(n, 8)), t_.epsilon, int32_t(RoundUpTo(n, 8)));
            // The last step's y is stored in parts, its last castLater rows (in parts of `part`
            // rows) after the first part's store has started: that store is the launch's last
            // transfer. A2 (half/bf16): half the rows cast later (benchmarks/kernel_time.py:
            // 910B3 rms_norm 4096 x 128 bf16, two steps of 52 rows, 1.74 -> 1.71 us), and scaled
            // later (rstd's Muls, gamma's Mul: the first part's store starts that much sooner;
            // 910B2 bf16 rms_norm 1024 x 128 0.667 -> 0.643 us). 310P (vector rstd): also scaled
            // later (two Muls and the cast), in quarters or else halves whose
            // store (times the cores, kLaterStoreBytes310p: 80 cycles) outlasts the next part's
            // scaling and barriers (310P rms_norm half on 8 cores, 128 x 1024: halves 3.58 ->
            // 3.39 us, quarters 3.29; 16 x 128 on 2 cores, halves of 1 KB: 0.60 -> 0.64; 16 x 1024
            // on 2, quarters of 4 KB 1.57, halves 1.51).
            uint32_t part = n / 2, cores = GetBlockNum();
            if (mover_.aligned) {
                if (n / 4 * d * sizeof(T) * cores >= kLaterStoreBytes310p) part = n / 4;
                if (!vecRstd || part * d * sizeof(T) * cores < kLaterStoreBytes310p) part = 0;
            } else if (kIsFloat<T>) {
                part = 0;
            }
            // A2: later rows scaled later too where their store is long enough: the later half (the
            // larger), or, rstd from the scalar unit, every row but the first alone (910B2 bf16
            // rms_norm 128 x 1024, 3 rows a core: 2 + 1 rows 0.630 us, 1 + 2 0.593, 1 + 1 + 1 0.567:
            // each row's store beside the next row's scaling).
            bool scaleLater = mover_.aligned ? vecRstd : false;
            uint32_t later = vecRstd ? n - n / 2 : 1;
            if (!mover_.aligned && part && uint64_t(later) * d * sizeof(T) * cores >= kPartBytesA2) {
                part = later;
                scaleLater = true;
            }
            uint32_t castLater = !more && part ? (mover_.aligned || (scaleLater && !vecRstd) ? n - part : part) : 0;
            uint32_t scaleNow = scaleLater ? n - castLater : n;
            for (uint32_t i = 0; i < n; ++i) mover_.ZeroRepeat(sq[i * stride], d);
            RowSums(!mover_.aligned || vecRstd, vecRstd ? RstdVec(0) : red_.Get<float>(), sq, stride, n, span,
                    red_.GetWithOffset<float>(t_.redBytes / 4 - SumsFloats(), SumsFloats() * 4), t_.reduceTmpBytes / sizeof(float),
                    vecRstd ? kCompactSums : kSumStride);
            if (vecRstd) {
                PipeBarrier<PIPE_V>();  // RowSums read the squares (and wrote the sums VectorRstd reads)
                // x as float again unless kept (into work_, half/bf16), beside VectorRstd's first op (which ends with a barrier).
                LocalTensor<float> xf = w, out = w;
                if constexpr (kIsFloat<T>) {
                    xf = normed;
                    out = y;
                } else {
                    if (!sqApart) Cast(w, normed, RoundMode::CAST_NONE, width);
                }
                if (done == 0) GammaAsFloat(g, gammaIn);  // VectorRstd's first barrier follows
                VectorRstd(r, n);
                // A2: rstd leaves now, beside the scaling (MTE3 idle until y's first part), not ahead
                // of y (910B2 add_rms_norm 1024 x 128 bf16: 0.895 -> 0.892 us). 310P: the launch's
                // last rstd values leave now, beside the vector work, not behind y's last store.
                if (!mover_.aligned) CopyOutRstd(r, done, n, false);
                if (mover_.aligned && !more && n % 8 == 0) rstdOut_.Finish();
                ScaleRows(out, xf, g, 0, scaleNow, span, stride);
                if constexpr (!kIsFloat<T>) {
                    PipeBarrier<PIPE_V>();
                    FromFloat(y, out, width - castLater * stride);
                }
                if (!t_.workPair) PipeBarrier<PIPE_V>();  // the next step's first vector op overwrites work_
                StepOut(x, x2, sum, y, r, done, n, more && !prefetch, false, out, castLater, part, scaleLater, xf, g);
                continue;
            }
            int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
            SetFlag<HardEvent::V_S>(eventVS);
            WaitFlag<HardEvent::V_S>(eventVS);
            if (done == 0) GammaAsFloat(g, gammaIn);  // a barrier follows before gamma's first Mul below
            for (uint32_t i = 0; i < n; i += together) {
                LocalTensor<float> xf = sqApart ? w[i * stride] : AsFloat(normed[i * stride], w[i * stride], width);
                LocalTensor<float> out = w[i * stride];
                if constexpr (kIsFloat<T>) out = y[i * stride];
                ScaleRowsByScalars(out, xf, g, r, i, i + together > scaleNow ? scaleNow - i : together, span, stride);
                if constexpr (!kIsFloat<T>) {
                    PipeBarrier<PIPE_V>();
                    FromFloat(y[i * stride], out, width - castLater * stride);
                }
            }
            // The next step's first vector op overwrites work_ (one half); its queue flags cover this
            // step's vector work only with one buffer per queue.
            if (!t_.workPair) PipeBarrier<PIPE_V>();
            int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next step's sums overwrite what S read
            SetFlag<HardEvent::S_V>(eventSV);
            WaitFlag<HardEvent::S_V>(eventSV);
            StepOut(x, x2, sum, y, r, done, n, more && !prefetch, true, w, castLater, part, scaleLater, w, g);
        }
    }

#if AIRFUSE_HAS_DATA_COPY_PAD
    // Row groups (A2, a core of one resident step, half/bf16 x kept as float apart from its
    // squares): the step's rows load in groups one after another, each under its own MTE2 -> V
    // flag, and each group goes through the whole chain (its own row sums, rstd and scaling) and
    // stores its y as soon as it is cast. The groups' chains are software-pipelined: the vector
    // work runs in windows, each ended by one PipeBarrier, in which every group under way issues
    // one op of its chain (GroupOp), group k from window GroupStart(k) on. Each dependent op's
    // latency and barrier is paid once per window for the groups in it, and y's first rows leave
    // while the last rows load: with the step's rows sharing one rstd, a chain of 11 dependent ops
    // ran after the whole load and before the whole store (benchmarks/results/README.md "Eighth
    // round", "Ninth round").
    //
    // The vector rstd folds 1 / numCols and epsilon out of the chain: the squares accumulate
    // (MulAddDst) onto epsilon laid in their buffer before the first load lands, so a row sums to
    // e = sum(x^2) + numCols * epsilon, and rstd = sqrt(numCols) / sqrt(e), sqrt(numCols) going
    // into gamma once per core: y = x * (gamma * sqrt(numCols)) / sqrt(e), sqrt(e) broadcast a
    // block per row (Brcb) and divided by a level-0 Div. After the row sums that is Sqrt, Brcb and
    // the Div before y's cast (two ops fewer than Axpy, Sqrt, Div, Brcb and Mul, and no epsilon
    // Duplicate per group); rstd itself (one Div) is computed for every group after the last
    // window, beside the last store.
    static constexpr uint32_t kMaxGroups = 7;  // every group but the first holds an MTE2 -> V id (8 per event) until its first op, gamma one
    // Vector rstd: rows per group. Small groups keep a group's load (and its store) about a window
    // long, so one group can start, and one leave, every window (benchmarks/kernel_time.py, 910B2
    // bf16 rms_norm 1024 x 128, 22 rows a core, each group from the window after the last: 3
    // groups 0.545 us, 4 0.509, 5 0.489, 7 0.470).
    static constexpr uint32_t kGroupRows = 3;
    // Scalar rstd (steps of under the tiling's kVectorRstdMinRows rows): at most this many groups,
    // and steps of at most kMaxScalarRows rows (their rstd values wait in GroupTensors::rv).
    static constexpr uint32_t kMaxScalarGroups = 4;
    static constexpr uint32_t kMaxScalarRows = 16;
    enum class GroupOp : uint8_t { kAddIn, kAdd, kRound, kCast, kSquare, kSums, kSqrt, kBrcb, kScale, kScalarRstd, kCastBack };
    static constexpr uint32_t kMaxGroupOps = 18;  // GroupChain: 3 + 2 + row-sum levels (<= 9) + 3 + 1

    struct RowGroup {
        uint32_t first, rows;
        uint32_t sums, scratch;  // floats into red_: its row sums (the vector rstd: then their square roots) and RowSums scratch
        uint32_t rstd;           // vector rstd: floats into rstd's stage (GroupTensors::r)
        uint32_t start;          // the window of its first op
        TEventID in;             // its load's MTE2 -> V flag (the first group's is its queues')
    };

    // The tensors a group's ops read and write, each at row 0 of the step (a group takes its rows).
    struct GroupTensors {
        LocalTensor<T> x, x2, sum, y, stage;  // stage: y's second buffer, holding r (vector rstd)
        LocalTensor<float> w, b, sq, r, g;
        uint32_t slotRows;  // BrcbSlotRows
        float rv[kMaxScalarRows];  // scalar rstd: each row's, written to r after the last window
    };

    // The groups of this core's rows, 0 when it does not take them. Vector rstd: groups of about
    // kGroupRows rows (at least two groups; fewer where the row sums of groups so large take
    // another number of levels, or no layout), y's second buffer free for rstd's stage, and with
    // the residual add work_'s second half for the squares (x2's float buffer, where they go
    // otherwise, is written by the add). Scalar rstd: a row or more a group, the last group's y
    // moving >= kPartBytesA2 times the cores launched (shorter parts cost their barriers more
    // than their transfers overlap: 910B2 bf16 rms_norm 128 x 128).
    __aicore__ inline uint32_t PlanGroups(RowGroup* groups) const {
        uint32_t n = rows_.count;
        bool sqApart = !kIsFloat<T> && (kResidual || t_.squaresBytes != 0), packed = t_.rstdVecBytes != 0;
        if (mover_.aligned || !sqApart || n != StepRows(0) || n < 2) return 0;
        if (packed ? t_.bufferNum < 2 || (kResidual && !t_.workPair) : n > kMaxScalarRows) return 0;
        uint32_t count = packed ? n / kGroupRows : n, most = packed ? kMaxGroups : kMaxScalarGroups;
        for (count = count < most ? count : most; count >= 2; --count) {
            if (LayGroups(groups, count)) return count;
            if (!packed) return 0;
        }
        return 0;
    }

    // Lays this core's rows out as `count` groups; false where PlanGroups does not take them. With
    // the vector rstd the middle groups take the rows count does not divide: the first lands
    // sooner, the last leaves sooner (910B3 bf16 rms_norm 1024 x 128, 26 rows: 4, 4, 4, 4, 4, 3, 3
    // 0.4919 us; 3, 4, 4, 4, 4, 4, 3 0.4894); with the scalar one the first groups (910B2 bf16
    // rms_norm 256 x 1024, 6 rows: 1, 2, 2, 1 0.852 us; 2, 2, 1, 1 0.828). Each group's sums and
    // scratch take whole 32 B blocks of their own (two
    // groups' ops never write one block between barriers): with the vector rstd, packed, in red_
    // (which that path leaves free); else a block per row at its rows' place, and the scratch after
    // the step's.
    __aicore__ inline bool LayGroups(RowGroup* groups, uint32_t count) const {
        bool packed = t_.rstdVecBytes != 0;
        uint32_t n = rows_.count, first = 0, cursor = 0, scratch = SumsFloats(), rstd = 0;
        uint32_t extra = n % count, from = packed ? (count - extra) / 2 : 0;  // the groups taking a row more
        for (uint32_t k = 0; k < count; ++k) {
            uint32_t m = n / count + (k >= from && k < from + extra ? 1 : 0), size = GroupScratchFloats(m);
            if (size == ~0u || GroupSumLevels(m) != GroupSumLevels(n / count)) return false;  // one chain for every group
            // Starts apart: one group's op of a kind a window (the scalar rstd's V -> S flag).
            uint32_t start = GroupStart(k, first);
            if (k && start <= groups[k - 1].start) start = groups[k - 1].start + 1;
            groups[k] = {first, m, first * kSumStride, scratch, rstd, start, TEventID{}};
            rstd += RoundUpTo(m, 8);
            if (packed) {
                groups[k].scratch = cursor;
                groups[k].sums = cursor + size;
                cursor += size + RoundUpTo(m, 8);
            } else {
                scratch += size;
            }
            first += m;
        }
        if (!packed && uint64_t(groups[count - 1].rows) * t_.numCols * sizeof(T) * GetBlockNum() < kPartBytesA2) return false;
        if (packed && 2 * BrcbSlotRows(groups, count) > RoundUpTo(t_.rowsPerLoop, 8)) return false;
        return (packed ? cursor : scratch) <= t_.redBytes / 4;
    }

    // The window of group k's first op, its rows from `first` on. Vector rstd: one window after the
    // group before (a group's load, ~40 cycles at 910B2 rms_norm 1024 x 128, about a window).
    // Scalar rstd (a row or two a group, mostly of a KB or more): about a window per 2 KB loaded
    // before the group's rows, gamma's (loaded after the first group) included; with the residual
    // add (two inputs, and its ops in every window) two windows a group (910B3 bf16, four rows a
    // core, rms_norm 128 x 1024: starts 0, 2, 4, 6 1.500, by the 2 KB 0, 2, 3, 4 1.384;
    // add_rms_norm 1.183, by 2 KB of its two inputs 0, 3, 5, 7 1.207).
    __aicore__ inline uint32_t GroupStart(uint32_t k, uint32_t first) const {
        if (t_.rstdVecBytes) return k;
        if (kResidual || k == 0) return 2 * k;
        return CeilDivU(first * t_.numCols * sizeof(T) + t_.numCols * sizeof(G), 2048);
    }

    // Rows of each of the two slots of rstdV_'s Brcb part the groups take in turn (Brcb writes
    // whole repeats of 8 rows' blocks): group k + 2 overwrites group k's slot after group k's scaling read it.
    __aicore__ inline uint32_t BrcbSlotRows(const RowGroup* groups, uint32_t count) const {
        uint32_t most = 0;
        for (uint32_t k = 0; k < count; ++k) most = groups[k].rows > most ? groups[k].rows : most;
        return RoundUpTo(most, 8);
    }

    // Floats of RowSums scratch for a group of m rows (GroupSums), ~0u where GroupSums has no
    // layout: planes (q slices of each row, packed with the vector rstd, else a block per row),
    // or each row's partials (more repeats than rows; a whole number of repeats, <= 64).
    __aicore__ inline uint32_t GroupScratchFloats(uint32_t m) const {
        uint32_t q = CeilDivU(t_.numCols, kRepeatFloats);
        if (q == 1) return 0;
        if (q <= m) return q * (t_.rstdVecBytes ? RoundUpTo(m, 8) : m * kSumStride);
        if (t_.numCols % kRepeatFloats || q > kRepeatFloats) return ~0u;
        return m * RoundUpTo(q, 8);
    }

    // Levels of a group's row sums (GroupSums): planes, one reduction then halving adds; partials two.
    __aicore__ inline uint32_t GroupSumLevels(uint32_t m) const {
        uint32_t q = CeilDivU(t_.numCols, kRepeatFloats), levels = 1;
        if (q > m) return 2;
        for (uint32_t count = q; count > 1; count -= count / 2) ++levels;
        return levels;
    }

    __aicore__ inline void ProcessGroups(RowGroup* groups, uint32_t count) {
        bool vecRstd = t_.rstdVecBytes != 0;
        GroupTensors t;
        t.w = work_.Get<float>();
        // The squares: apart from x as float; the vector rstd's onto epsilon (LoadGroups lays it).
        t.sq = kResidual ? (vecRstd ? work_.GetWithOffset<float>(t_.workCols, t_.workCols * 4) : work2_.Get<float>()) : squares_.Get<float>();
        t.g = gammaF_.Get<float>();
        TEventID gammaIn = LoadGroups(t, groups, count);
        if constexpr (kResidual) {
            t.sum = xOutQue_.AllocTensor<T>();
            t.b = work2_.Get<float>();
        }
        t.y = yQue_.AllocTensor<T>();
        if (vecRstd) {
            t.slotRows = BrcbSlotRows(groups, count);
            t.stage = yQue_.AllocTensor<T>();
            t.r = t.stage.template ReinterpretCast<float>();
        } else {
            t.r = rstdQue_.AllocTensor<float>();
        }
        GroupOp ops[kMaxGroupOps];
        uint32_t sums0 = 0, chain = GroupChain(ops, GroupSumLevels(groups[0].rows), sums0);
        // x times gamma: the vector rstd's in each group's Brcb window, the window before its scaling,
        // gamma cast two windows before the first group's and times sqrt(numCols) in the next (a
        // group's first windows are the fullest: 910B2 bf16 rms_norm 1024 x 128, in the window after
        // its first row-sum level with gamma loaded after the second group, 0.477 us; so 0.470); the
        // scalar rstd's from its first row-sum level (the squares read x last), gamma cast the
        // window before the first group's.
        uint32_t gammaAt = vecRstd ? chain - 3 : sums0, gammaCast = groups[0].start + gammaAt - (vecRstd ? 2 : 1);
        uint32_t windows = groups[count - 1].start + chain;
        for (uint32_t win = 0; win < windows; ++win) {
            if (win) PipeBarrier<PIPE_V>();  // the ops of the window before are read, or overwritten, by this one's
            uint32_t order[kMaxGroups], n = 0;
            for (uint32_t k = 0; k < count; ++k)
                if (win >= groups[k].start && win - groups[k].start < chain) order[n++] = k;
            // Issue order (insertion sort on GroupOpRank, stable: the oldest group first among equals).
            for (uint32_t i = 1; i < n; ++i) {
                uint32_t k = order[i], rank = GroupOpRank(ops, groups, k, win, sums0), j = i;
                for (; j > 0 && rank > GroupOpRank(ops, groups, order[j - 1], win, sums0); --j) order[j] = order[j - 1];
                order[j] = k;
            }
            // The scalar rstd's V -> S flag now, so that its scalar reads wait for the windows before
            // only, the vector unit running this window's other ops meanwhile.
            TEventID eventVS{};
            for (uint32_t i = 0; i < n; ++i) {
                if (ops[win - groups[order[i]].start] != GroupOp::kScalarRstd) continue;
                eventVS = GetTPipePtr()->AllocEventID<HardEvent::V_S>();
                SetFlag<HardEvent::V_S>(eventVS);
            }
            // x times gamma after the groups' ops; with the scalar rstd before its reads and the newest
            // group's load wait (GroupOpRank under 2), which the vector unit would otherwise wait out
            // first (a row a group lands ~75-100 cycles after the one before: 910B2 bf16 rms_norm 96 x
            // 1024, 0.4866 us after them, 0.4766 before; the vector rstd's groups have landed by
            // then, and its gamma Mul, of a short latency, best ends the window).
            for (uint32_t i = 0, gammaDone = 0; i <= n; ++i) {
                bool last = i == n;
                if (!gammaDone && (last || (!vecRstd && GroupOpRank(ops, groups, order[i], win, sums0) < 2))) {
                    gammaDone = 1;
                    for (uint32_t k = 0; k < count; ++k) {
                        if (win != groups[k].start + gammaAt) continue;
                        LocalTensor<float> w = t.w[groups[k].first * t_.rowStride];
                        MulRows(w, w, t.g, RowFactor::kSharedRow, groups[k].rows, t_.numCols, t_.rowStride);
                    }
                    if (vecRstd && win == gammaCast + 1) Muls(t.g, t.g, SqrtCols(), int32_t(t_.numCols));
                }
                if (last) break;
                const RowGroup& grp = groups[order[i]];
                uint32_t s = win - grp.start;
                GroupStep(t, grp, ops[s], s - sums0, order[i], eventVS);
            }
            if (win == gammaCast) GammaAsFloat(t.g, gammaIn);
        }
        if (vecRstd) {
            for (uint32_t k = 0; k < count; ++k) Div(t.r[groups[k].rstd], RstdVec(1), red_.Get<float>()[groups[k].sums], int32_t(groups[k].rows));
            int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
            SetFlag<HardEvent::V_MTE3>(eventVMTE3);
            WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
            for (uint32_t k = 0; k < count; ++k) mover_.Out(rstdGm_, t.r[groups[k].rstd], groups[k].first, groups[k].rows);
        } else {
            for (uint32_t j = 0; j < rows_.count; ++j) t.r.SetValue(j, t.rv[j]);
            CopyOutRstd(t.r, 0, rows_.count, true);
        }
        xQue_.FreeTensor(t.x);
        if constexpr (kResidual) {
            x2Que_.FreeTensor(t.x2);
            xOutQue_.FreeTensor(t.sum);
        }
        yQue_.FreeTensor(t.y);
        if (vecRstd) yQue_.FreeTensor(t.stage);
    }

    __aicore__ inline float SqrtCols() const { return sqrt(float(t_.numCols)); }

    // Where group k's op in window `win` goes in the window's issue order, highest first: the ops
    // whose store follows (y's and x's casts) first, their stores then waiting for them alone; then
    // by the op's latency (the window ends when its last result lands: long latencies first, under
    // the occupancy of the ops after them); the scalar rstd's reads after every vector op; last,
    // the newest group's first op, which waits for its load (the vector unit waits in order).
    __aicore__ inline uint32_t GroupOpRank(const GroupOp* ops, const RowGroup* groups, uint32_t k, uint32_t win, uint32_t sums0) const {
        uint32_t s = win - groups[k].start;
        switch (ops[s]) {
            case GroupOp::kAddIn:
                return k ? 0 : 10;
            case GroupOp::kCast:
                return k && !kResidual ? 0 : 10;
            case GroupOp::kRound:
            case GroupOp::kCastBack:
                return 100;
            case GroupOp::kScalarRstd:
                return 1;
            case GroupOp::kSums:
                return s == sums0 ? 20 : 6;  // WholeReduceSum; then halving Adds
            case GroupOp::kScale:
                return 13;  // Div
            case GroupOp::kAdd:
                return 6;
            case GroupOp::kSquare:
                return t_.rstdVecBytes ? 10 : 7;  // MulAddDst, Mul
            default:
                return 10;  // Sqrt, Brcb
        }
    }

    // Issues the groups' loads (x, and x2 with kResidual) into one buffer of each input queue, each
    // group under its own MTE2 -> V flag (the first group's: the queues', dequeued at once, after
    // the vector rstd's epsilon under the squares and sqrt(numCols) in RstdVec(1), which the vector
    // unit lays while the first group lands), gamma's right after the first group's (scalar rstd)
    // or the fourth's (vector rstd: gamma is cast in the first group's window chain - 5, its third
    // or later, and the groups before it land sooner); returns gamma's flag.
    __aicore__ inline TEventID LoadGroups(GroupTensors& t, RowGroup* groups, uint32_t count) {
        uint32_t stride = t_.rowStride, gammaAfter = t_.rstdVecBytes ? (count > 4 ? 3 : count - 1) : 0;
        t.x = xQue_.AllocTensor<T>();
        if constexpr (kResidual) t.x2 = x2Que_.AllocTensor<T>();
        TEventID gammaIn{};
        for (uint32_t k = 0; k < count; ++k) {
            const RowGroup& grp = groups[k];
            uint64_t at = uint64_t(grp.first) * t_.numCols;
            mover_.RowsIn(t.x[grp.first * stride], xGm_, at, grp.rows, t_.numCols, stride);
            if constexpr (kResidual) mover_.RowsIn(t.x2[grp.first * stride], x2Gm_, at, grp.rows, t_.numCols, stride);
            if (k == 0) {
                xQue_.EnQue(t.x);
                if constexpr (kResidual) x2Que_.EnQue(t.x2);
                if (t_.rstdVecBytes) {
                    Duplicate(t.sq, t_.epsilon, int32_t(t_.workCols));
                    Duplicate(RstdVec(1), SqrtCols(), int32_t(RoundUpTo(t_.rowsPerLoop, 8)));
                }
                t.x = xQue_.DeQue<T>();
                if constexpr (kResidual) t.x2 = x2Que_.DeQue<T>();
            } else {
                groups[k].in = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
                SetFlag<HardEvent::MTE2_V>(groups[k].in);
            }
            if (k == gammaAfter) gammaIn = LoadGamma(t.g);
        }
        return gammaIn;
    }

    // The chain of ops every group goes through, into ops; returns its length, and in sums0 where
    // its `levels` row-sum levels start.
    __aicore__ inline uint32_t GroupChain(GroupOp* ops, uint32_t levels, uint32_t& sums0) const {
        uint32_t chain = 0;
        if constexpr (kResidual) {
            ops[chain++] = GroupOp::kAddIn;
            ops[chain++] = GroupOp::kAdd;
            ops[chain++] = GroupOp::kRound;
        }
        ops[chain++] = GroupOp::kCast;
        ops[chain++] = GroupOp::kSquare;
        sums0 = chain;
        for (uint32_t l = 0; l < levels; ++l) ops[chain++] = GroupOp::kSums;
        if (t_.rstdVecBytes) {
            ops[chain++] = GroupOp::kSqrt;
            ops[chain++] = GroupOp::kBrcb;
            ops[chain++] = GroupOp::kScale;
        } else {
            ops[chain++] = GroupOp::kScalarRstd;
        }
        ops[chain++] = GroupOp::kCastBack;
        return chain;
    }

    // Group k's op `op` (`level`: kSums' level) over its rows. The scalar rstd reads after
    // `eventVS` (set at its window's start) and keeps each row's value in t.rv (written out after
    // the last window: one scalar store per row, then one copy). Stores follow their op at once:
    // their V -> MTE3 flag then waits only for the ops issued before it in the window.
    __aicore__ inline void GroupStep(GroupTensors& t, const RowGroup& grp, GroupOp op, uint32_t level, uint32_t k, TEventID eventVS) {
        uint32_t f = grp.first, m = grp.rows, d = t_.numCols, stride = t_.rowStride, at = f * stride;
        uint32_t width = (m - 1) * stride + d;  // the group's rows as one op (the padding between them too, never stored)
        LocalTensor<float> w = t.w[at], sums = red_.Get<float>()[grp.sums], blocks;
        if (t_.rstdVecBytes) blocks = RstdVec(2)[k % 2 * 8 * t.slotRows];  // the group's sqrt(e), a block per row (Brcb)
        const LocalTensor<T>& normed = kResidual ? t.sum : t.x;
        switch (op) {
            case GroupOp::kAddIn:
                if (k) WaitIn(grp.in);
                Cast(w, t.x[at], RoundMode::CAST_NONE, width);
                Cast(t.b[at], t.x2[at], RoundMode::CAST_NONE, width);
                break;
            case GroupOp::kAdd:
                Add(w, w, t.b[at], width);
                break;
            case GroupOp::kRound:
                FromFloat(t.sum[at], w, width);
                GroupOut(xOutQue_, t.sum, xOutGm_, grp, k);
                break;
            case GroupOp::kCast:
                if (!kResidual && k) WaitIn(grp.in);
                Cast(w, normed[at], RoundMode::CAST_NONE, width);
                break;
            case GroupOp::kSquare:
                if (t_.rstdVecBytes) {
                    MulAddDst(t.sq[at], w, w, int32_t(width));
                } else {
                    Mul(t.sq[at], w, w, width);
                }
                break;
            case GroupOp::kSums:
                GroupSums(level, sums, t.sq[at], m, red_.Get<float>()[grp.scratch], t_.rstdVecBytes ? kCompactSums : kSumStride);
                break;
            case GroupOp::kSqrt:
                Sqrt(sums, sums, int32_t(m));
                break;
            case GroupOp::kBrcb:
                Brcb(blocks, sums, uint8_t(CeilDivU(m, 8)), BrcbRepeatParams(1, 8));
                break;
            case GroupOp::kScale:
                RowsByFactor<RowsOp::kDiv>(w, w, blocks, RowFactor::kRowBlock, m, d, stride);
                break;
            case GroupOp::kScalarRstd:
                WaitFlag<HardEvent::V_S>(eventVS);
                GetTPipePtr()->ReleaseEventID<HardEvent::V_S>(eventVS);
                for (uint32_t j = 0; j < m; ++j) {
                    t.rv[f + j] = Rstd(sums.GetValue(j * kSumStride));
                    Muls(w[j * stride], w[j * stride], t.rv[f + j], d);
                }
                break;
            case GroupOp::kCastBack:
                FromFloat(t.y[at], w, width);
                GroupOut(yQue_, t.y, yGm_, grp, k);
                break;
        }
    }

    // A group's rows of `rows` (a buffer of `que`) to GM once the vector work so far is done: the
    // first group's through the queue (which the later ones' PartOut then find dequeued).
    __aicore__ inline void GroupOut(TQue<QuePosition::VECOUT, 1>& que, LocalTensor<T>& rows, const GlobalTensor<T>& gm, const RowGroup& grp,
                                    uint32_t k) {
        if (k) return PartOut(gm, rows, 0, grp.first, grp.rows);
        que.EnQue(rows);
        rows = que.DeQue<T>();
        mover_.RowsOut(gm, rows, 0, grp.rows, t_.numCols, t_.rowStride);
    }

    // Level `level` of the row sums of a group's `rows` rows (their squares `sq`, rowStride floats
    // apart) into `sums` (packed with `sumStride` kCompactSums, else a block per row), as
    // kernels/row_sums.h WholeRowSums issues them but a level per window (its barriers are the
    // windows'), in the group's own `scratch`: planes (slice j of every row into plane j, then
    // halving adds), or, more repeats than rows, each row's partials, then their sums.
    __aicore__ inline void GroupSums(uint32_t level, const LocalTensor<float>& sums, const LocalTensor<float>& sq, uint32_t rows,
                                     const LocalTensor<float>& scratch, uint32_t sumStride) {
        uint32_t d = t_.numCols, q = CeilDivU(d, kRepeatFloats), rep = t_.rowStride / 8;
        if (q > rows) {
            uint32_t parts = RoundUpTo(q, 8);
            if (level == 0) {
                for (uint32_t i = 0; i < rows; ++i)
                    WholeReduceSum(scratch[i * parts], sq[i * t_.rowStride], int32_t(kRepeatFloats), int32_t(q), 1, 1, 8);
            } else {
                WholeReduceSum(sums, scratch, int32_t(q), int32_t(rows), int32_t(sumStride), 1, int32_t(parts / 8));
            }
            return;
        }
        uint32_t plane = sumStride == kSumStride ? rows * kSumStride : RoundUpTo(rows, 8);
        if (level == 0) {
            for (uint32_t j = 0; j < q; ++j) {
                uint32_t cols = d - j * kRepeatFloats < kRepeatFloats ? d - j * kRepeatFloats : kRepeatFloats;
                WholeReduceSum(q == 1 ? sums : scratch[j * plane], sq[j * kRepeatFloats], int32_t(cols), int32_t(rows), int32_t(sumStride), 1,
                               int32_t(rep));
            }
            return;
        }
        uint32_t count = q;
        for (uint32_t l = 1; l < level; ++l) count -= count / 2;
        uint32_t half = count / 2;
        Add(count == 2 ? sums : scratch, scratch, scratch[(count - half) * plane], half * plane);
    }
#endif

    // Issues gamma's load into dst, in its dtype; returns its MTE2 -> V flag, which WaitIn waits
    // for just before gamma is first needed.
    __aicore__ inline TEventID LoadGammaInto(const LocalTensor<G>& dst, uint32_t first = 0, uint32_t count = 0) {
        mover_.In(dst[first], gammaGm_, first, count ? count : t_.numCols);
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }

    __aicore__ inline void WaitIn(TEventID id) {
        WaitFlag<HardEvent::MTE2_V>(id);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(id);
    }

    // Resident rows: gamma into gammaF_ when float, else into its stage gammaRow_ (GammaAsFloat casts it).
    __aicore__ inline TEventID LoadGamma(const LocalTensor<float>& g) {
        if constexpr (kIsFloat<G>) {
            return LoadGammaInto(g);
        } else {
            return LoadGammaInto(gammaRow_.Get<G>());
        }
    }

    // Waits for gamma's load and casts it to float (half/bf16), the cast ordered by the caller's next barrier.
    __aicore__ inline void GammaAsFloat(const LocalTensor<float>& g, TEventID id) {
        WaitIn(id);
        if constexpr (!kIsFloat<G>) Cast(g, gammaRow_.Get<G>(), RoundMode::CAST_NONE, mover_.Span(t_.numCols));
    }

    // A step's end: frees its inputs, loads the next step (`loadNext`: one buffer per queue) and
    // stores x (kResidual), rstd (A2 when `scalarRstd`, written by the scalar unit; the vector rstd
    // left as soon as computed) and y; y's last `castLater` rows are cast from `out` here, after
    // its first rows' store is issued, and stored in parts of `part` rows, each (`scaleLater`)
    // scaled first from `xf` into `out` with gamma `g` (ScaleRows, or ScaleRowsByScalars with `scalarRstd`).
    __aicore__ inline void StepOut(LocalTensor<T>& x, LocalTensor<T>& x2, LocalTensor<T>& sum, LocalTensor<T>& y, LocalTensor<float>& r,
                                   uint32_t done, uint32_t n, bool loadNext, bool scalarRstd, const LocalTensor<float>& out,
                                   uint32_t castLater, uint32_t part, bool scaleLater, const LocalTensor<float>& xf,
                                   const LocalTensor<float>& g) {
        // 310P's later parts scale from x as float: float32 rows read x itself (or the residual sum).
        bool keepInputs = castLater && mover_.aligned;
        if (!keepInputs) {
            xQue_.FreeTensor(x);
            if constexpr (kResidual) x2Que_.FreeTensor(x2);
        }
        if (loadNext) LoadStep(done + n);
        if constexpr (kResidual) {
            if (!keepInputs) xOutQue_.FreeTensor(sum);
        }
        // The scalar rstd leaves first, or after later parts that are scaled (they write the rest of it).
        bool rstdLast = !mover_.aligned && scalarRstd && castLater && scaleLater;
        if (!mover_.aligned && scalarRstd && !rstdLast) CopyOutRstd(r, done, n, true);
        if (castLater == 0) return RowsOut(yQue_, y, yGm_, yOut_, done, n);
        uint32_t d = t_.numCols, stride = t_.rowStride, first = n - castLater;
        yQue_.EnQue(y);
        y = yQue_.DeQue<T>();
        mover_.RowsOut(yGm_, y, uint64_t(done) * d, first, d, stride);
        for (uint32_t p0 = first; p0 < n; p0 += part) {
            uint32_t m = n - p0 < part ? n - p0 : part;
            if (scaleLater && scalarRstd) {
                ScaleRowsByScalars(out[p0 * stride], xf[p0 * stride], g, r, p0, m, mover_.Span(d), stride);
            } else if (scaleLater) {
                ScaleRows(out, xf, g, p0, m, mover_.Span(d), stride);
            }
            if constexpr (!kIsFloat<T>) {
                if (scaleLater) PipeBarrier<PIPE_V>();
                FromFloat(y[p0 * stride], out[p0 * stride], (m - 1) * stride + mover_.Span(d));
            }
            PartOut(yGm_, y, done, p0, m);
        }
        if (rstdLast) CopyOutRstd(r, done, n, true);
        if (keepInputs) {
            xQue_.FreeTensor(x);
            if constexpr (kResidual) {
                x2Que_.FreeTensor(x2);
                xOutQue_.FreeTensor(sum);
            }
        }
        yQue_.FreeTensor(y);
    }

    // Part i of rstdV_, `count` floats (default: the part whole), for steps of up to n8 rows
    // (rowsPerLoop rounded up to 8): 0 the step's packed sums (n8), 1 ones (n8), 2 rstd a block per
    // row (8 n8; A2: epsilon first, under the Axpy, until Brcb overwrites it); 310P only: 3
    // epsilon, then rstd packed (n8), 4 Gather offsets 4 i for element 8 i + k (8 n8, uint32).
    // The A2 row groups (ProcessGroups) use parts 1 and 2 otherwise: 1 holds sqrt(numCols), 2 a
    // group's sqrt(e) a block per row (e: its sum of squares plus numCols epsilon), two groups' in turn.
    template <typename U = float> __aicore__ inline LocalTensor<U> RstdVec(uint32_t i, uint32_t count = 0) {
        uint32_t n8 = RoundUpTo(t_.rowsPerLoop, 8), at = i < 3 ? i * n8 : (i == 3 ? 10 * n8 : 11 * n8);
        return rstdV_.GetWithOffset<U>(count ? count : (i == 2 || i == 4 ? 8 * n8 : n8), at * uint32_t(sizeof(float)));
    }

    // The part holding epsilon under VectorRstd's Axpy (A2: Brcb's output, overwritten after), `count` floats.
    __aicore__ inline LocalTensor<float> RstdEpsilon(uint32_t count) { return RstdVec(mover_.aligned ? 3 : 2, count); }

    // Once per core: VectorRstd's ones (the numerator) and, on 310P, its Gather offsets (built by
    // doubling, as float in part 2, then cast: exact for these small integers).
    __aicore__ inline void BuildRstdTables() {
        uint32_t n8 = RoundUpTo(t_.rowsPerLoop, 8);
        if (mover_.aligned) {
            LocalTensor<float> f = RstdVec(2);
            Duplicate(f, 0.0f, 8);
            PipeBarrier<PIPE_V>();
            for (uint32_t have = 8; have < 8 * n8; have *= 2) {  // elements [have, 2 have) = [0, have) + have / 8 rows
                uint32_t more = 8 * n8 - have < have ? 8 * n8 - have : have;
                Adds(f[have], f, float(have / 8 * 4), int32_t(more));
                PipeBarrier<PIPE_V>();
            }
            Cast(RstdVec<int32_t>(4), f, RoundMode::CAST_RINT, 8 * n8);  // the first step's barriers come before its Gather
        }
        Duplicate(RstdVec(1), 1.0f, int32_t(n8));
    }

    // rstd of a step's n rows from their packed sums (RstdVec(0)), on the vector unit: the float32
    // ops of Rstd(), 1 / sqrt(sum * avgFactor + epsilon), sum * avgFactor + epsilon by one Axpy
    // (its product rounded, then the add: Muls then Adds, one op and barrier fewer) onto the
    // epsilon the step put in RstdEpsilon(), then a block per row for ScaleRows. A2: rstd into r,
    // then Brcb. 310P (no Brcb the twin models): rstd in place, Gathered a block per row, and
    // copied (+ 0) into rstdOut_'s stage beside the Gather. On packed sums each op is one repeat
    // for up to 64 rows, not eight (310P's went a block per row, a Gather and an op more: 1024 x
    // 128 half, ~40 cycles a step fewer).
    __aicore__ inline void VectorRstd(const LocalTensor<float>& r, uint32_t n) {
        // The step's blocks of rows only: the Gather below reads its source whole.
        LocalTensor<float> s = RstdVec(0), e = RstdEpsilon(RoundUpTo(n, 8));
        Axpy(e, s, t_.avgFactor, int32_t(n));
        PipeBarrier<PIPE_V>();
        Sqrt(e, e, int32_t(n));
        PipeBarrier<PIPE_V>();
        if (mover_.aligned) {
            Div(e, RstdVec(1), e, int32_t(n));
            PipeBarrier<PIPE_V>();
            Gather(RstdVec(2, n * 8), e, RstdVec<uint32_t>(4, n * 8), 0, n * 8);
            Adds(rstdOut_.VectorSlot(n), e, 0.0f, int32_t(n));
            rstdOut_.VectorPut(n);
            PipeBarrier<PIPE_V>();
            return;
        }
#if AIRFUSE_HAS_DATA_COPY_PAD
        Div(r, RstdVec(1), e, int32_t(n));
        PipeBarrier<PIPE_V>();
        Brcb(RstdVec(2), r, uint8_t(CeilDivU(n, 8)), BrcbRepeatParams(1, 8));
        PipeBarrier<PIPE_V>();
#endif
    }

    // Rows first .. first + n of the step scaled with rstd from the scalar unit: out = xf * rstd *
    // gamma (out and xf at row `first`, rows `stride` floats apart), each row's rstd computed from
    // its sum in red_ (after the caller's V -> S wait) and kept for GM (rstdOut_'s stage on 310P, else r).
    __aicore__ inline void ScaleRowsByScalars(const LocalTensor<float>& out, const LocalTensor<float>& xf, const LocalTensor<float>& g,
                                              LocalTensor<float>& r, uint32_t first, uint32_t n, uint32_t span, uint32_t stride) {
        for (uint32_t j = 0; j < n; ++j) {
            float rv = Rstd(red_.Get<float>().GetValue((first + j) * kSumStride));
            Muls(out[j * stride], xf[j * stride], rv, span);
            if (mover_.aligned) {
                rstdOut_.Put(rv);
            } else {
                r.SetValue(first + j, rv);
            }
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t j = 0; j < n; ++j) Mul(out[j * stride], out[j * stride], g, span);
    }

    // out = xf * rstd * gamma for rows first .. first + n, `stride` floats apart (rstd: row i's block of RstdVec(2)).
    __aicore__ inline void ScaleRows(const LocalTensor<float>& out, const LocalTensor<float>& xf, const LocalTensor<float>& g, uint32_t first,
                                     uint32_t n, uint32_t span, uint32_t stride) {
        MulRows(out[first * stride], xf[first * stride], RstdVec(2)[first * 8], RowFactor::kRowBlock, n, span, stride);
        PipeBarrier<PIPE_V>();
        MulRows(out[first * stride], out[first * stride], g, RowFactor::kSharedRow, n, span, stride);
    }

    // One row per step, its tiles resident, its float work in column chunks of colsPerChunk: pass 1
    // sums the row's squares (the residual form first adds each chunk into x's tile): on A2
    // accumulated over the chunks, then reduced once; on 310P (no MulAddDst) each chunk into its
    // own block of red_, the scalar unit adding them once per row; pass 2 scales. gamma stays in
    // UB in its own dtype, cast a chunk at a time, or (tiling gammaFloatRow, A2) as a float32 row
    // cast once: by the first row's pass 2, a chunk at a time, from its stage in that row's y
    // buffer (each chunk's y then overwrites the gamma it was cast from). Pass 2 then has both
    // float chunks for one chunk twice as long (a chunk's four barriers paid half as often), and
    // y, in one buffer, leaves in two parts: pass 2's first chunk, stored while the rest is
    // scaled, then the rest, whose store the next row's pass 2 waits for (after that row's pass
    // 1) and the last row exposes. The next row loads while this one is computed:
    // with two buffers per queue (AirfuseRmsNorm), or, the residual form's four tiles fitting
    // once, as soon as pass 1 has consumed x1 and x2. On 310P rows of whole blocks only (the
    // tiling's choice).
    __aicore__ inline void ProcessResidentChunks() {
        uint32_t d = t_.numCols, c = t_.colsPerChunk, chunks = CeilDivU(d, c);
        bool floatRow = t_.gammaFloatRow != 0;
        LocalTensor<G> gRow = gammaRow_.Get<G>();
        LocalTensor<float> gRowF = gammaRow_.Get<float>();
        LocalTensor<float> w = work_.Get<float>(), sums = red_.Get<float>();
        LocalTensor<float> gf = floatRow ? work_.GetWithOffset<float>(t_.workCols, t_.workCols * 4) : gammaF_.Get<float>();
        LocalTensor<float> scratch = red_.GetWithOffset<float>(t_.redBytes / 4 - chunks * kSumStride, chunks * kSumStride * 4);
        bool prefetch = t_.bufferNum > 1;
        // A2: pass 1 accumulates the chunks' squares elementwise (MulAddDst) in gf (gammaF_, or
        // work_'s second chunk; free until pass 2), then sums them once: per chunk two barriers (after the cast, after the
        // accumulate) where a sum per chunk takes four (benchmarks/kernel_time.py).
        bool accumulate = false;
#if AIRFUSE_HAS_DATA_COPY_PAD
        accumulate = !mover_.aligned;
#endif
        // floatRow: the first row loads in two parts, its first xFirst columns (whole chunks, half
        // or more) under the queues' flags, the rest under xRest: pass 1 squares the first part's
        // chunks while the rest lands.
        uint32_t xFirst = floatRow ? (chunks + 1) / 2 * c : 0;
        TEventID xRest = xFirst ? LoadFirstRowInParts(xFirst) : TEventID{};
        if (!xFirst) LoadStep(0);
        // gamma after the first row (first needed by its pass 2), not before: the row's pass 1
        // starts a gamma's transfer earlier (1585 cycles at 16384 bf16 on 910B2). It loads in two
        // parts, split at chunk `half`: pass 2's first chunks wait only for the first part, and
        // the second lands while they are scaled (whole, gamma landed ~660 cycles after pass 1
        // ended: benchmarks/kernel_time.py, 910B2 rms_norm 128 x 16384 bf16).
        uint32_t half = chunks / 2, split = half * c;  // chunks >= 2: c < d
        LocalTensor<T> y;
        LocalTensor<G> gIn = gRow;  // gamma in its dtype
        if (floatRow) {
            y = yQue_.AllocTensor<T>();
            gIn = y.template ReinterpretCast<G>();
        }
        TEventID gammaIn = LoadGammaInto(gIn, 0, split), gammaRest = LoadGammaInto(gIn, split, d - split);
        // Pass 2's chunks; floatRow: y's first part, its first chunk (0: y leaves whole).
        uint32_t c2 = floatRow ? 2 * c : c, yFirst = floatRow && c2 < d ? c2 : 0;
        for (uint32_t row = 0; row < rows_.count; ++row) {
            bool more = row + 1 < rows_.count;
            LocalTensor<T> x = xQue_.DeQue<T>();
            LocalTensor<T> x2, sum;
            if constexpr (kResidual) {
                x2 = x2Que_.DeQue<T>();
                sum = xOutQue_.AllocTensor<T>();
            }
            if (prefetch && more) LoadStep(row + 1);
            const LocalTensor<T>& normed = kResidual ? sum : x;
            for (uint32_t k = 0; k < chunks; ++k) {
                uint32_t c0 = k * c, n = d - c0 < c ? d - c0 : c;
                if (row == 0 && xFirst && c0 == xFirst) WaitIn(xRest);
                if constexpr (kResidual) AddRounded(sum[c0], x[c0], x2[c0], n, w);
                LocalTensor<float> xf = AsFloat(normed[c0], w, n);
#if AIRFUSE_HAS_DATA_COPY_PAD
                if (accumulate) {
                    if (k == 0) {
                        Mul(gf, xf, xf, n);  // chunk 0 is a whole chunk: every accumulator element set
                    } else {
                        MulAddDst(gf, xf, xf, int32_t(n));
                    }
                    PipeBarrier<PIPE_V>();  // the next chunk overwrites work_, and reads gf
                    continue;
                }
#endif
                Mul(w, xf, xf, n);
                PipeBarrier<PIPE_V>();
                RowSums(!mover_.aligned, sums[k * kSumStride], w, RoundUpTo(n, 8), 1, n, scratch, t_.reduceTmpBytes / sizeof(float));
                PipeBarrier<PIPE_V>();  // the next chunk overwrites work_ and the scratch
            }
            // Pass 2 overwrites gf after the V -> S -> V round trip below, no barrier needed.
            if (accumulate) RowSums(true, sums, gf, RoundUpTo(c, 8), 1, c, scratch, t_.reduceTmpBytes / sizeof(float));
            if constexpr (kResidual) {
                xQue_.FreeTensor(x);
                x2Que_.FreeTensor(x2);
                if (!prefetch && more) LoadStep(row + 1);
                RowsOutKeep(xOutQue_, sum, xOutGm_, xOut_, row, 1);
            }
            int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
            SetFlag<HardEvent::V_S>(eventVS);
            WaitFlag<HardEvent::V_S>(eventVS);
            float s = 0.0f;
            for (uint32_t k = 0; k < (accumulate ? 1 : chunks); ++k) s += sums.GetValue(k * kSumStride);
            float rv = Rstd(s);
            int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);  // the next row's sums overwrite what S read
            SetFlag<HardEvent::S_V>(eventSV);
            WaitFlag<HardEvent::S_V>(eventSV);
            if (!floatRow || row > 0) y = yQue_.AllocTensor<T>();
            for (uint32_t c0 = 0; c0 < d; c0 += c2) {
                uint32_t n = d - c0 < c2 ? d - c0 : c2;
                if (row == 0 && c0 == 0) WaitIn(gammaIn);
                if (row == 0 && c0 <= split && c0 + n > split) WaitIn(gammaRest);  // the chunk reaching gamma's second part
                LocalTensor<float> out = w, g = gf, xf = w;
                if constexpr (kIsFloat<G>) {
                    g = gRow[c0];
                } else if (floatRow) {
                    g = gRowF[c0];
                    if (row == 0) Cast(g, gIn[c0], RoundMode::CAST_NONE, n);
                } else {
                    Cast(gf, gRow[c0], RoundMode::CAST_NONE, n);
                }
                if constexpr (kIsFloat<T>) {
                    out = y[c0];
                    xf = normed[c0];
                } else {
                    Cast(w, normed[c0], RoundMode::CAST_NONE, n);
                }
                PipeBarrier<PIPE_V>();
                Muls(out, xf, rv, n);
                PipeBarrier<PIPE_V>();
                Mul(out, out, g, n);
                if constexpr (!kIsFloat<T>) {
                    PipeBarrier<PIPE_V>();
                    FromFloat(y[c0], out, n);
                }
                PipeBarrier<PIPE_V>();  // the next chunk overwrites work_ and gf
                if (c0 + n == yFirst) {
                    int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
                    SetFlag<HardEvent::V_MTE3>(eventVMTE3);
                    WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
                    mover_.Out(yGm_, y, uint64_t(row) * d, yFirst);
                }
            }
            if constexpr (!kResidual) {
                xQue_.FreeTensor(x);
                if (!prefetch && more) LoadStep(row + 1);
            }
            // First: its MTE3 -> S wait then covers the last row's stores and y's first part (stored
            // while pass 2's later chunks were scaled), not this row's (rest of) y.
            PutRstd(rv, row);
            if constexpr (kResidual) xOutQue_.FreeTensor(sum);
            if (yFirst == 0) {
                RowsOut(yQue_, y, yGm_, yOut_, row, 1);
                continue;
            }
            yQue_.EnQue(y);
            y = yQue_.DeQue<T>();
            mover_.Out(yGm_, y[yFirst], uint64_t(row) * d + yFirst, d - yFirst);
            yQue_.FreeTensor(y);
        }
    }

    // Issues row 0's loads (x, and x2 with kResidual) in two parts, split at column `first`: the
    // queues' EnQue flags cover the first part; the second, issued after, lands under the
    // returned MTE2 -> V flag (WaitIn), which the row's pass 1 waits for before its columns.
    __aicore__ inline TEventID LoadFirstRowInParts(uint32_t first) {
        uint32_t d = t_.numCols;
        LocalTensor<T> x = xQue_.AllocTensor<T>(), x2;
        mover_.In(x, xGm_, 0, first);
        xQue_.EnQue(x);
        if constexpr (kResidual) {
            x2 = x2Que_.AllocTensor<T>();
            mover_.In(x2, x2Gm_, 0, first);
            x2Que_.EnQue(x2);
        }
        mover_.In(x[first], xGm_, first, d - first);
        if constexpr (kResidual) mover_.In(x2[first], x2Gm_, first, d - first);
        TEventID id = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
        SetFlag<HardEvent::MTE2_V>(id);
        return id;
    }

    // Rows of the resident step starting at this core's row `done`: firstStepRows first when set
    // (310P: a shorter first load exposed before any compute, and a short last step, the rest of
    // the rows, whose store ends the launch), then rowsPerLoop.
    __aicore__ inline uint32_t StepRows(uint32_t done) const {
        uint32_t want = done == 0 && t_.firstStepRows ? t_.firstStepRows : t_.rowsPerLoop;
        return rows_.count - done < want ? rows_.count - done : want;
    }

    // red_ holds every row's sum of squares (kSumStride apart), then RowSums' scratch.
    __aicore__ inline uint32_t SumsFloats() const { return t_.rowsPerLoop * kSumStride; }

    // Issues the loads of the step starting at row `first` of this core (x, and x2 with kResidual):
    // its `rows` rows, 0 = StepRows(first).
    __aicore__ inline void LoadStep(uint32_t first, uint32_t rows = 0) {
        uint32_t n = rows ? rows : StepRows(first);
        RowsIn(xQue_, xGm_, first, n);
        if constexpr (kResidual) RowsIn(x2Que_, x2Gm_, first, n);
    }

    // Issues the copy of rows first .. first + n into a buffer of `que`, enqueued unless not `enqueue`.
    __aicore__ inline LocalTensor<T> RowsIn(TQue<QuePosition::VECIN, 1>& que, const GlobalTensor<T>& gm, uint32_t first, uint32_t n,
                                            bool enqueue = true) {
        LocalTensor<T> x = que.AllocTensor<T>();
        mover_.RowsIn(x, gm, uint64_t(first) * t_.numCols, n, t_.numCols, t_.rowStride);
        if (enqueue) que.EnQue(x);
        return x;
    }

    // Stores n rows computed into `rows` (a buffer of `que`, which it frees), through `stream` on
    // 310P when rows are under 32 B.
    __aicore__ inline void RowsOut(TQue<QuePosition::VECOUT, 1>& que, LocalTensor<T>& rows, const GlobalTensor<T>& gm, GmStream<T>& stream,
                                   uint32_t first, uint32_t n) {
        RowsOutKeep(que, rows, gm, stream, first, n);
        que.FreeTensor(rows);
    }

    // RowsOut without the free: the residual sum x leaves as soon as it is computed, its store
    // overlapping the norm's vector work, which still reads it (after all of it, x's store
    // waited for that work and then held MTE3 before y's: benchmarks/kernel_time.py, 910B3
    // add_rms_norm 128 x 8192 bf16 6.96 -> 6.15 us); the step's end frees it.
    __aicore__ inline void RowsOutKeep(TQue<QuePosition::VECOUT, 1>& que, LocalTensor<T>& rows, const GlobalTensor<T>& gm, GmStream<T>& stream,
                                       uint32_t first, uint32_t n) {
        que.EnQue(rows);
        rows = que.DeQue<T>();
        if (mover_.natural) {
            stream.PutRows(rows, n, t_.numCols, t_.rowStride);
        } else {
            mover_.RowsOut(gm, rows, uint64_t(first) * t_.numCols, n, t_.numCols, t_.rowStride);
        }
    }

    // Stores rows first .. first + n of `rows` (vector-written rows of this core's step at row
    // `done`, a buffer already dequeued once), after the vector work so far.
    __aicore__ inline void PartOut(const GlobalTensor<T>& gm, const LocalTensor<T>& rows, uint32_t done, uint32_t first, uint32_t n) {
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        mover_.RowsOut(gm, rows[first * t_.rowStride], uint64_t(done + first) * t_.numCols, n, t_.numCols, t_.rowStride);
    }

    // sum = x1 + x2 in float32 (x1 as float into `a`, a part of work_; x2 as float into work2_
    // from element `at`, the same rows' place there), rounded once to T (the residual stream's dtype).
    __aicore__ inline void AddRounded(const LocalTensor<T>& sum, const LocalTensor<T>& x1, const LocalTensor<T>& x2, uint32_t n,
                                      const LocalTensor<float>& a, uint32_t at = 0) {
        if constexpr (kIsFloat<T>) {
            Add(sum, x1, x2, n);
        } else {
            LocalTensor<float> b = work2_.Get<float>()[at];
            Cast(a, x1, RoundMode::CAST_NONE, n);
            Cast(b, x2, RoundMode::CAST_NONE, n);
            PipeBarrier<PIPE_V>();
            Add(a, a, b, n);
            PipeBarrier<PIPE_V>();
            FromFloat(sum, a, n);
        }
        PipeBarrier<PIPE_V>();  // the sum is read next, and work_ overwritten
    }

    // A row longer than UB: pass 1 sums x^2 chunk by chunk (the residual form also adds and
    // stores x), pass 2 re-reads x and gamma and scales.
    __aicore__ inline void ProcessSplitRow(uint32_t row) {
        uint32_t d = t_.numCols, c = t_.colsPerChunk;
        uint64_t base = uint64_t(row) * d;
        float s = 0.0f;
        for (uint32_t c0 = 0; c0 < d; c0 += c) {
            uint32_t n = d - c0 < c ? d - c0 : c;
            LocalTensor<T> x = CopyInChunk(xQue_, xGm_, base + c0, n);
            if constexpr (kResidual) {
                LocalTensor<T> x2 = CopyInChunk(x2Que_, x2Gm_, base + c0, n);
                LocalTensor<T> sum = xOutQue_.AllocTensor<T>();
                AddRounded(sum, x, x2, mover_.Span(n), work_.Get<float>());
                x2Que_.FreeTensor(x2);
                s += SumSquares(sum, n);
                xOutQue_.EnQue(sum);
                sum = xOutQue_.DeQue<T>();
                mover_.Out(xOutGm_, sum, base + c0, n);
                xOutQue_.FreeTensor(sum);
            } else {
                s += SumSquares(x, n);
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
        float rv = Rstd(s);
        for (uint32_t c0 = 0; c0 < d; c0 += c) {
            uint32_t n = d - c0 < c ? d - c0 : c;
            LocalTensor<T> x = CopyInChunk(xQue_, normed, base + c0, n);
            LocalTensor<G> gq = gQue_.AllocTensor<G>();
            mover_.In(gq, gammaGm_, c0, n);
            gQue_.EnQue(gq);
            gq = gQue_.DeQue<G>();
            LocalTensor<float> g = AsFloat(gq, gammaF_.Get<float>(), mover_.Span(n));
            LocalTensor<T> y = yQue_.AllocTensor<T>();
            Scale(x, y, g, rv, mover_.Span(n));
            xQue_.FreeTensor(x);
            gQue_.FreeTensor(gq);
            yQue_.EnQue(y);
            y = yQue_.DeQue<T>();
            mover_.Out(yGm_, y, base + c0, n);
            yQue_.FreeTensor(y);
        }
        PutRstd(rv, row);
    }

    // One row's rstd, computed on the scalar unit, to GM.
    __aicore__ inline void PutRstd(float rv, uint32_t row) {
        if (mover_.aligned) {
            rstdOut_.Put(rv);
            return;
        }
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        // AllocTensor orders the buffer's last store (MTE3) before V only; the scalar write
        // needs its own MTE3 -> S (the resident path has a V -> S wait in between that carries it).
        int32_t eventMTE3S = GetTPipePtr()->FetchEventID(HardEvent::MTE3_S);
        SetFlag<HardEvent::MTE3_S>(eventMTE3S);
        WaitFlag<HardEvent::MTE3_S>(eventMTE3S);
        r.SetValue(0, rv);
        CopyOutRstd(r, row, 1, true);
    }

    __aicore__ inline LocalTensor<T> CopyInChunk(TQue<QuePosition::VECIN, 1>& que, const GlobalTensor<T>& gm, uint64_t offset, uint32_t n) {
        LocalTensor<T> x = que.AllocTensor<T>();
        mover_.In(x, gm, offset, n);
        que.EnQue(x);
        return que.DeQue<T>();
    }

    // rstd values to GM (910B; on 310P they leave through rstdOut_); written by the scalar unit,
    // they need an S -> MTE3 order (the queue orders V's).
    __aicore__ inline void CopyOutRstd(LocalTensor<float>& r, uint32_t first, uint32_t n, bool scalarWritten) {
        if (scalarWritten) {
            int32_t eventSMTE3 = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
            SetFlag<HardEvent::S_MTE3>(eventSMTE3);
            WaitFlag<HardEvent::S_MTE3>(eventSMTE3);
        }
        rstdQue_.EnQue(r);
        r = rstdQue_.DeQue<float>();
        mover_.Out(rstdGm_, r, first, n);
        rstdQue_.FreeTensor(r);
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

    __aicore__ inline float Rstd(float sumSquares) const { return 1.0f / sqrt(sumSquares * t_.avgFactor + t_.epsilon); }

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
        PipeBarrier<PIPE_V>();  // the next row's first vector op overwrites work_
    }

    AirfuseRmsNormTilingData t_;
    RowRange rows_;
    Mover mover_{};
    GmStream<float> rstdOut_;
    GmStream<T> yOut_;
    GmStream<T> xOut_;
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> x2Que_;
    TQue<QuePosition::VECOUT, 1> xOutQue_;
    TQue<QuePosition::VECIN, 1> gQue_;
    TQue<QuePosition::VECOUT, 1> yQue_;
    TQue<QuePosition::VECOUT, 1> rstdQue_;
    TBuf<TPosition::VECCALC> work_;
    TBuf<TPosition::VECCALC> work2_;
    TBuf<TPosition::VECCALC> squares_;
    // GM loads land in VECIN (or VECOUT, DataCopyPad only): the copy docs' data paths (twin/README.md).
    TBuf<TPosition::VECIN> gammaF_;
    TBuf<TPosition::VECIN> gammaRow_;
    TBuf<TPosition::VECCALC> red_;
    TBuf<TPosition::VECCALC> rstdV_;
    TBuf<TPosition::VECOUT> rstdStage_;
    TBuf<TPosition::VECOUT> yStage_;
    TBuf<TPosition::VECOUT> xStage_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> x2Gm_;
    GlobalTensor<T> xOutGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<float> rstdGm_;
    GlobalTensor<G> gammaGm_;
};

}  // namespace airfuse_kernel
