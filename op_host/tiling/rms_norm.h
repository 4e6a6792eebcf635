// Tiling of AirfuseRmsNorm and AirfuseRmsNormGrad: shapes, dtypes and chip -> tiling data.
// UB plans mirror the kernels' InitBuffer calls exactly; a plan is accepted only if it fits.
#pragma once
#include <utility>
#include "tiling_common.h"
#include "rms_norm_tiling.h"
#include "rms_norm_grad_tiling.h"

namespace airfuse::tiling {
namespace detail {

constexpr uint64_t R32(uint64_t v) { return RoundUp(v, 32); }

struct Plan {
    uint32_t bufferNum = 0, rowsPerLoop = 0, chunk = 0, rowStride = 0;
};

// Picks double buffering if possible, then single; the row whole if possible, else 64-element chunks.
// `bytes(bufferNum, rowsPerLoop, chunk, rowStride)` is the kernel's UB use for that plan.
template <typename F> inline Plan ChoosePlan(uint32_t ub, uint32_t cols, uint32_t elemsPer32, uint64_t maxRows, F bytes) {
    uint32_t stride = uint32_t(RoundUp(cols, elemsPer32));
    for (uint32_t buf = 2; buf >= 1; --buf) {
        if (bytes(buf, 1, cols, stride) > ub) continue;
        uint64_t lo = 1, hi = maxRows < kMaxBlockCount ? maxRows : kMaxBlockCount;
        while (lo < hi) {  // largest rowsPerLoop that fits
            uint64_t mid = (lo + hi + 1) / 2;
            if (bytes(buf, uint32_t(mid), cols, stride) <= ub) lo = mid; else hi = mid - 1;
        }
        return {buf, uint32_t(lo), cols, stride};
    }
    for (uint32_t buf = 2; buf >= 1; --buf)
        for (uint64_t chunk = RoundUp(cols, 64) - 64; chunk >= 64; chunk -= 64)
            if (bytes(buf, 1, uint32_t(chunk), uint32_t(chunk)) <= ub) return {buf, 1, uint32_t(chunk), uint32_t(chunk)};
    return {};
}

// Elements of each float32 work buffer: the chunk, or its windowed span on 310P (whole blocks of x).
inline uint32_t FloatCols(bool aligned, uint32_t chunk, uint32_t s) { return uint32_t(RoundUp(chunk, aligned ? 32 / s : 8)); }

// The row-partition and UB-plan fields both RmsNorm tiling structs share.
template <typename Tiling>
inline void FillRowFields(Tiling* out, uint64_t rows, uint32_t cols, const Plan& p, uint32_t rowCores, bool aligned, uint32_t s) {
    uint32_t f = FloatCols(aligned, p.chunk, s);
    out->numRows = rows;
    out->numCols = cols;
    out->rowStride = p.rowStride;
    out->rowsPerCore = uint32_t(rows / rowCores);
    out->rowsRemainder = uint32_t(rows % rowCores);
    out->rowsPerLoop = p.rowsPerLoop;
    out->colsPerChunk = p.chunk;
    out->bufferNum = p.bufferNum;
    out->reduceTmpBytes = ReduceTmpBytes(f);
    out->avgFactor = 1.0f / float(cols);
    out->alignedCopy = aligned;
    out->floatCols = f;
}

// Float32 work elements of the forward kernel (kernels/rms_norm_rows.h): a resident step's rows
// are converted together; a split row one chunk at a time.
inline uint64_t WorkCols(uint32_t rpl, uint32_t chunk, uint32_t cols, uint32_t stride, uint64_t floatCols) {
    return chunk < cols ? floatCols : uint64_t(rpl) * stride;
}

// Floats of scratch kernels/row_sums.h RowSums needs for n rows of d, `stride` floats apart:
// WholeRowSums' planes (a block per row, or `packed`, a float per row) or row partials
// (recursively); else one ReduceSum sharedTmpBuffer per row.
inline uint64_t RowSumsScratch(bool wholeReduce, bool packed, uint64_t n, uint64_t d, uint64_t stride, uint32_t reduceTmpBytes) {
    if (!wholeReduce) return n * (reduceTmpBytes / 4);
    uint64_t q = CeilDiv(d, 64);
    if (q == 1) return 0;
    if (q <= n && stride / 8 <= 255) return q * (packed ? RoundUp(n, 8) : n * 8);
    uint64_t partStride = RoundUp(q, 8);
    return n * partStride + RowSumsScratch(true, packed, n, q, partStride, 0);
}

// Elements a resident row covers in vector ops (kernels/gm_copy.h Mover::Span): 310P's windowed
// rows their whole blocks; a split row's chunk.
inline uint32_t RowSpan(bool aligned, bool natural, uint32_t cols, uint32_t chunk, uint32_t stride) {
    if (chunk < cols) return chunk;
    return aligned && !natural ? stride : cols;
}

// UB bytes of a step's row-sum buffer (the kernels' red_): n sums 32 B apart, then RowSums'
// scratch (as RowSumsScratch); a split row uses it as one sum and one ReduceSum sharedTmpBuffer.
inline uint32_t RedBytes(bool wholeReduce, bool packed, uint32_t n, uint32_t span, uint32_t stride, uint32_t floatCols) {
    uint32_t tmp = ReduceTmpBytes(floatCols);
    uint64_t scratch = RowSumsScratch(wholeReduce, packed, n, span, stride, tmp) * 4;
    uint64_t rows = uint64_t(n) * 32 + (scratch < 32 ? 32 : R32(scratch)), split = 32 + uint64_t(tmp);
    return uint32_t(rows > split ? rows : split);
}

// UB bytes of the forward kernel's vector rstd path (kernels/rms_norm_rows.h VectorRstd), 0 when
// it does not apply: resident rows whose float stride a level-0 repeat stride (uint8 blocks)
// holds. A2: steps of at least kVectorRstdMinRows rows (its chain of dependent ops costs a step
// ~9 barriers where the scalar unit costs ~40 cycles a row, overlapped with the vector work;
// benchmarks/kernel_time.py: 8 rows of 1024 were faster on the scalar unit, 11 rows of 128 or
// 1024 not slower on the vector unit); a step's compacted sums and ones (8-float aligned), then a
// Brcb block per row. 310P (aligned): rows of >= 32 B (not `natural`: those go row by row) in
// steps of whole blocks of rows (each step's rstd then starts a block of the GmStream's stage);
// as A2's, plus the packed epsilon and rstd and a block per row of Gather offsets (in place of
// Brcb). On packed sums its chain is 5 short ops, cheaper than the scalar unit's ~40 cycles a row
// from 8 rows and at any width (310P rms_norm half 128 x 1024, 8 rows a step: 3.67 -> 3.58 us;
// its chain on a block per row, before, lost from 1024 columns).
constexpr uint32_t kVectorRstdMinRows = 10;
constexpr uint64_t kRowStepBytes = 4096;
inline uint32_t RstdVecBytes(bool aligned, bool natural, uint32_t rpl, uint32_t chunk, uint32_t cols, uint32_t stride) {
    if (chunk < cols || stride / 8 > 255) return 0;
    uint32_t n8 = uint32_t(RoundUp(rpl, 8));
    if (!aligned) return rpl < kVectorRstdMinRows ? 0 : n8 * 4 * 2 + n8 * 32;
    if (natural || rpl % 8 != 0) return 0;
    return n8 * 4 * 3 + n8 * 32 * 2;
}

// A GmStream stage (kernels/gm_copy.h) for `elems` values of `size` bytes: plus three blocks, >= 4 blocks.
inline uint32_t StageBytes(uint64_t elems, uint32_t size) {
    uint64_t e = 32 / size, b = (RoundUp(elems, e) + 3 * e) * size;
    return uint32_t(b < 128 ? 128 : b);
}

// Block_dim for rows, then the cores that get rows. Without DataCopyPad an output range leaves in
// whole 32 B blocks, the last one overlapping (kernels/gm_copy.h): each core with rows needs
// >= minRows310p rows so its ranges hold a block; with fewer rows one core takes them all (scalar
// stores). A forced block_dim is kept, the cores past rowCores idle.
inline void Partition(const ChipInfo& chip, uint64_t rows, uint32_t forceBlockDim, uint64_t minRows310p, Result& res, uint32_t& rowCores) {
    if (forceBlockDim) res.blockDim = forceBlockDim;
    uint64_t c = chip.hasDataCopyPad ? rows : rows / minRows310p;
    c = c < 1 ? 1 : (c < res.blockDim ? c : res.blockDim);
    rowCores = uint32_t(c);
    if (!chip.hasDataCopyPad && !forceBlockDim) res.blockDim = rowCores;
}

// What both RmsNorm tilings refuse: empty or oversized x, dtypes the chip lacks, a forced
// block_dim the chip cannot run. Empty when the inputs are acceptable.
inline std::string CheckInputs(const char* op, const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma,
                               uint32_t forceBlockDim) {
    if (rows == 0 || cols == 0) return std::string(op) + ": x must not be empty";
    if (rows > UINT32_MAX) return std::string(op) + ": more than 2^32 - 1 rows";
    for (DType t : {x, gamma}) {
        std::string error = CheckChip(op, chip, t);
        if (!error.empty()) return error;
    }
    return CheckForcedBlockDim(op, chip, forceBlockDim);
}

// Rows whose tiles fit in UB (AirfuseRmsNorm: x and y twice, double-buffered; the residual form:
// x1, x2, x and y once) but whose float32 work does not (kernels/rms_norm_rows.h
// ProcessResidentChunks): each row moves once, and only the float work (a chunk of x, of x2 with
// the residual add, and of gamma, gamma itself kept in its dtype) is chunked. `floatGamma`
// (tiling gammaFloatRow): gamma kept as a float32 row instead, y in one buffer (AirfuseRmsNorm's
// second y tile makes room for the float row; the residual form's y has one anyway). Chunks of >= 1024 columns, as few as fit, evened
// out; `chunks` gets their count. bufferNum 0 when none fits.
inline Plan ResidentChunks(uint32_t ub, bool residual, bool aligned, uint32_t cols, uint32_t s, uint32_t g, bool floatGamma, uint32_t& chunks) {
    constexpr uint32_t kMinChunk = 1024;
    uint32_t stride = uint32_t(RoundUp(cols, 32 / s)), buf = residual ? 1 : 2, tiles = floatGamma && !residual ? 3 : 4;
    auto bytes = [&](uint32_t c) {
        uint32_t f = FloatCols(aligned, c, s), k = uint32_t(CeilDiv(cols, c));
        uint64_t rstd = aligned ? StageBytes(1, 4) : buf * 32, floats = residual && s != 4 ? 3 : 2;
        return tiles * R32(uint64_t(stride) * s) + R32(uint64_t(cols) * (floatGamma ? 4 : g)) + floats * R32(f * 4ull) +
               RedBytes(!aligned, false, 1, c, c, f) + (k - 1) * 32ull + rstd;
    };
    for (uint64_t c = RoundUp(cols, 64) - 64; c >= kMinChunk; c -= 64) {
        if (bytes(uint32_t(c)) > ub) continue;
        chunks = uint32_t(CeilDiv(cols, c));
        uint32_t even = uint32_t(RoundUp(CeilDiv(cols, chunks), 64));
        return {buf, 1, even, stride};
    }
    return {};
}

// Partitions rows over cores and picks the UB plan (sets res.error when none fits). A plan that
// splits rows re-reads gamma per row anyway, so then every core that can take rows gets some.
template <typename F>
inline Plan PlanRows(const char* op, const ChipInfo& chip, uint64_t rows, uint32_t cols, uint32_t elemsPer32, uint32_t forceBlockDim,
                     uint64_t minRows, F bytes, Result& res, uint32_t& rowCores) {
    Partition(chip, rows, forceBlockDim, minRows, res, rowCores);
    Plan p = ChoosePlan(chip.ubBytes, cols, elemsPer32, StepRows(CeilDiv(rows, rowCores), uint64_t(cols) * (32 / elemsPer32)), bytes);
    if (p.bufferNum == 0) {
        res.error = std::string(op) + ": no UB plan fits " + std::to_string(chip.ubBytes) + " bytes";
    } else if (p.chunk < cols && !forceBlockDim) {
        res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
        Partition(chip, rows, 0, minRows, res, rowCores);
    }
    return p;
}

// AirfuseRmsNorm, and with `residual` AirfuseAddRmsNorm (kernels/rms_norm_rows.h): the residual
// form also holds x2 and the sum x in queues (plus a float32 copy of x2 for half/bf16) and, for
// rows under 32 B on 310P, stages x like y.
inline Result RmsNormRows(const char* op, bool residual, const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma,
                          float epsilon, AirfuseRmsNormTilingData* out, uint32_t forceBlockDim) {
    Result res;
    res.error = CheckInputs(op, chip, rows, cols, x, gamma, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(x), g = SizeOf(gamma), e = 32 / s, tiles = residual ? 4 : 2;
    bool aligned = !chip.hasDataCopyPad, natural = aligned && cols < e;
    // Every core as soon as there are rows for it: the per-row vector and sync work, not bytes,
    // bounds a core (benchmarks/kernel_time.py), and gamma, the one thing each core re-reads, is
    // one row per core (L2 serves the re-reads).
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
    // 310P: a core's rstd (one float per row) and, for rows under 32 B, its y (and x) hold a whole block.
    uint64_t minRows = natural && CeilDiv(e, cols) > 8 ? CeilDiv(e, cols) : 8;
    auto bytes = [&](uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) {
        uint64_t f = detail::FloatCols(aligned, chunk, s), work = WorkCols(rpl, chunk, cols, stride, f);
        uint32_t span = RowSpan(aligned, natural, cols, chunk, stride);
        uint32_t vec = RstdVecBytes(aligned, natural, rpl, chunk, cols, stride);  // its step's sums go packed (WholeRowSums)
        uint64_t b = tiles * buf * R32(uint64_t(rpl) * stride * s) + R32(work * 4) + R32(f * 4) +
                     RedBytes(!aligned || vec, vec != 0, rpl, span, stride, uint32_t(f));
        b += aligned ? StageBytes(rpl, 4) : buf * R32(rpl * 4ull);
        if (natural) b += (residual ? 2 : 1) * uint64_t(StageBytes(uint64_t(rpl) * cols, s));
        if (residual && s != 4) b += R32(work * 4);
        if (chunk < cols) b += buf * R32(f * g);
        if (chunk == cols && g != 4) b += R32(RoundUp(cols, 32 / g) * g);  // gamma's stage (it no longer borrows work_)
        return b + vec;
    };
    uint32_t rowCores;
    Plan p = PlanRows(op, chip, rows, cols, e, forceBlockDim, minRows, bytes, res, rowCores);
    if (!res.ok()) return res;
    // 310P's vector rstd takes steps of whole blocks of rows and UB of its own: the most such rows
    // that fit, if the plan had more but not the vector rstd (157 rows of 128 half -> 144: no
    // scalar read per row, worth more than the longer steps).
    if (aligned && !RstdVecBytes(aligned, natural, p.rowsPerLoop, p.chunk, cols, p.rowStride)) {
        for (uint32_t r = p.rowsPerLoop / 8 * 8; r >= kVectorRstdMinRows; r -= 8) {
            if (RstdVecBytes(aligned, natural, r, p.chunk, cols, p.rowStride) && bytes(p.bufferNum, r, p.chunk, p.rowStride) <= chip.ubBytes) {
                p.rowsPerLoop = r;
                break;
            }
        }
    }
    // Steps of even size: the plan's rows per step (StepRows' 16 KB floor, or UB) leave a short
    // last step (86 rows of 128 bf16 per core: 64 + 22); the same number of steps evened out
    // (43 + 43) exposes a shorter first load and last store (benchmarks/kernel_time.py: 910B2
    // rms_norm 4096 x 128 1.81 -> 1.72 us). 310P's steps stay whole blocks of rows (its vector rstd).
    uint64_t perCore = CeilDiv(rows, rowCores);
    if (p.chunk == cols && p.rowsPerLoop < perCore) {
        uint64_t steps = CeilDiv(perCore, p.rowsPerLoop), even = CeilDiv(perCore, steps);
        if (aligned) even = RoundUp(even, 8);
        if (even < p.rowsPerLoop) p.rowsPerLoop = uint32_t(even);
    }
    // A core of at most kStepsPerCore rows of >= kRowStepBytes moves a row per step: StepRows'
    // 16 KB floor made 3 rows of 8 KB two steps (2 + 1), the pair's store starting only after
    // both rows' compute and holding MTE3 while the last row's store waited
    // (benchmarks/kernel_time.py: 910B2 rms_norm 128 x 4096 bf16 1.73 -> 1.60 us). Such a copy
    // is one row, below the floor's 16 KB: a cost the model does not see (short bursts).
    if (p.chunk == cols && perCore <= kStepsPerCore && uint64_t(cols) * s >= kRowStepBytes) p.rowsPerLoop = 1;
    uint32_t sumBlocks = 1;  // a step's row sums (resident), or a resident row's chunks
    // A whole row but one buffer per queue serialises each row's load, compute and store: chunked
    // float work with two buffers is faster (benchmarks/kernel_time.py).
    bool oneRowAtATime = p.chunk < cols || (p.bufferNum == 1 && p.rowsPerLoop == 1);
    bool gammaFloatRow = false;
    if (oneRowAtATime && (!aligned || cols % e == 0)) {
        Plan q = ResidentChunks(chip.ubBytes, residual, aligned, cols, s, g, false, sumBlocks);
        if (q.bufferNum) p = q;
        // A2, half/bf16 x and gamma: gamma as a float32 row, cast once per core instead of a chunk
        // at a time in every row, where that leaves as few chunks (it takes AirfuseRmsNorm's UB of
        // the plain plan, never less: r fits only where q does). Its stage is y's one buffer (GM
        // -> VECOUT is a DataCopyPad path; 310P's DataCopy loads VECIN only); y leaves in two
        // parts, so the next row's pass 2 waits only for the second part's store
        // (benchmarks/results/README.md "Seventh round": 910B3 rms_norm 128 x 16384 bf16 7.44 -> 6.19 us).
        uint32_t floatChunks = 0;
        Plan r = aligned || s == 4 || g == 4 ? Plan{} : ResidentChunks(chip.ubBytes, residual, aligned, cols, s, g, true, floatChunks);
        if (r.bufferNum && q.bufferNum && floatChunks <= sumBlocks) {
            p = r;
            sumBlocks = floatChunks;
            gammaFloatRow = true;
        }
    }
    // The fewest cores that keep the busiest core's row count (128 rows on 48 cores: 43 of 3
    // rows): the same critical path, fewer gamma reads and, in the cost model, whose HBM share is
    // split evenly by the cores launched, a larger share each.
    if (!forceBlockDim) {
        res.blockDim = uint32_t(CeilDiv(rows, CeilDiv(rows, rowCores)));
        Partition(chip, rows, 0, minRows, res, rowCores);
    }
    *out = AirfuseRmsNormTilingData{};
    FillRowFields(out, rows, cols, p, rowCores, aligned, s);
    out->rowResident = p.chunk < cols && sumBlocks > 1;
    out->gammaFloatRow = out->rowResident && gammaFloatRow;
    out->epsilon = epsilon;
    out->rowCores = rowCores;
    out->rstdStageBytes = aligned ? StageBytes(p.rowsPerLoop, 4) : 0;
    // UB the plan leaves (resident rows; ResidentChunks counts its own).
    uint64_t spare = p.chunk == cols ? chip.ubBytes - bytes(p.bufferNum, p.rowsPerLoop, p.chunk, p.rowStride) : 0;
    // 310P: rstd's stage holds all of a core's rows when UB allows, so no step flushes it (a flush
    // drains the vector pipe, waits for its copy and moves the kept block by scalar reads and
    // writes: ~380 cycles at the second step of 1024 x 128 half, benchmarks/kernel_time.py).
    if (aligned && p.chunk == cols) {
        uint32_t whole = StageBytes(perCore, 4);
        if (whole > out->rstdStageBytes && whole - out->rstdStageBytes <= spare) {
            spare -= whole - out->rstdStageBytes;
            out->rstdStageBytes = whole;
        }
    }
    out->workCols = uint32_t(WorkCols(p.rowsPerLoop, p.chunk, cols, p.rowStride, out->floatCols));
    out->rstdVecBytes = RstdVecBytes(aligned, natural, p.rowsPerLoop, p.chunk, cols, p.rowStride);
    out->redBytes = RedBytes(!aligned || out->rstdVecBytes, out->rstdVecBytes != 0, p.rowsPerLoop,
                             RowSpan(aligned, natural, cols, p.chunk, p.rowStride), p.rowStride, out->floatCols) +
                    (sumBlocks - 1) * 32;
    out->outStageBytes = natural ? StageBytes(uint64_t(p.rowsPerLoop) * cols, s) : 0;
    // Half/bf16 resident rows keep x as float beside the squares when UB has room for a second
    // step of floats (the residual form has x2's float buffer for it): x is then cast once, not
    // twice (benchmarks/kernel_time.py: 910B2 rms_norm 4096 x 128 bf16 1.75 -> 1.67 us).
    if (!residual && s != 4 && p.chunk == cols) {
        uint64_t sq = R32(uint64_t(out->workCols) * 4);
        if (sq <= spare) {
            out->squaresBytes = uint32_t(sq);
            spare -= sq;
        }
    }
    // Then a second work buffer, used by every other step: no barrier between steps, each ending
    // after its last cast (benchmarks/kernel_time.py: 910B3 rms_norm 128 x 4096 bf16 1.73 -> 1.67 us).
    if (p.chunk == cols && R32(uint64_t(out->workCols) * 4) <= spare) out->workPair = 1;
    // 310P, a core of two or more resident steps: the first step half as long (whole blocks of
    // rows), the rest of the rows last. The first load is exposed before any vector work and the
    // last store after it, where a step's dependent chain of ~10 barriers makes every step
    // shortened cost (benchmarks/kernel_time.py, rms_norm 1024 x 128 half: steps of 64 + 64 rows
    // 3.54 us, 32 + 64 + 32 3.19 us).
    if (aligned && !natural && p.chunk == cols && perCore > p.rowsPerLoop && p.rowsPerLoop >= 16)
        out->firstStepRows = uint32_t(RoundUp(p.rowsPerLoop / 2, 8));
    return res;
}

// AirfuseRmsNormGrad without a hardware SyncAll, or with rows split in chunks: dgamma split into
// slices of `cols` columns, one per core, each summed over every row in steps of `rows` rows (kernels/rms_norm_grad.cpp
// ColumnDgamma). A slice is whole 32 B blocks of x and of gamma (strided DataCopy) and a step
// reuses the kernel's buffers: its x and dy in a step's input buffer (rows * cols <= rowsPerLoop *
// rowStride), its rstd in the rstd buffers (grown from rowsPerLoop to `rows` floats, rounded up to 8,
// while the plan's `spare` UB bytes allow: fewer, longer steps), the float products,
// the rstd Gather's offsets and result in the float work buffers and the input buffer, the slice's
// float sum in the gamma buffer, its cast in the dx buffer. cores = 0 when no split of >= 2 slices fits,
// or for one row (nothing to share: the second read of x and dy costs more than it saves,
// benchmarks/kernel_time.py).
struct ColumnSplit {
    uint32_t cores, cols, rows;
};

inline ColumnSplit SplitColumns(uint64_t rows, uint32_t cols, uint32_t s, uint32_t g, const Plan& p, uint32_t maxCores, uint64_t spare) {
    uint32_t unit = 32 / (s < g ? s : g);
    if (cols % unit != 0 || maxCores < 2 || rows < 2) return {};
    uint32_t width = uint32_t(RoundUp(CeilDiv(cols, maxCores), unit)), cores = uint32_t(CeilDiv(cols, width));
    uint64_t inElems = uint64_t(p.rowsPerLoop) * p.rowStride, step = inElems / width;
    uint64_t rstd = RoundUp(p.rowsPerLoop, 8) + spare / (4 * p.bufferNum) / 8 * 8;  // floats R32 keeps within spare
    step = step < rstd ? step : rstd;
    step = step < rows ? step : rows;
    step = step < kMaxBlockCount ? step : kMaxBlockCount;
    bool fits = cores >= 2 && step >= 1 && width <= p.chunk && uint64_t(width) * g <= inElems * s && (cols - width) * s / 32 <= 65535;
    if (!fits) return {};
    return {cores, width, uint32_t(step)};
}

// AirfuseRmsNormGrad on 910B with few rows a core: each core takes a slice of columns of every
// row (kernels/rms_norm_grad.cpp ProcessSlices) instead of whole rows. A row's sum then has a part
// on every core: each core stores its parts (4 bytes a row) and after one SyncAll reads every
// core's (4 x rows x cores bytes: 22 KB at 128 x 16384 bf16 on 910B2), where rows over cores
// store a float32 partial dgamma row per core and read a slice of all of them (8 x hidden bytes a
// core: 128 KB there, 43 cores of 3 rows); dgamma needs no exchange, a slice's column sums are
// whole on its core (benchmarks/results/README.md, eighth round: 910B2 bf16 128 x 16384 15.08 ->
// 10.27 us). Slices are whole 128 B of a row (ascendc_facts.md: GM is accessed in 128/256/512 B
// bursts), at most kMaxSliceCols (a level-0 repeat stride of float blocks), on at least half the
// cores (the vector work of a row is spread over the slices' cores only: 910B2 bf16 128 x 1024,
// 16 cores, 1.66 -> 2.08 us); a step is rowsPerLoop rows of the slice (a multiple of 8 rows: each
// step's sums pack into whole blocks), double-buffered. UB holds every core's partial sums: rows <=
// kSliceMaxRows. The last `held` steps keep x and dy as float in UB across the SyncAll, so pass 2
// neither reads nor casts them again (SliceHeldSteps; benchmarks/results/README.md, ninth round:
// 910B2 bf16 128 x 4096, all held, 3.66 -> 2.99 us).
struct Slices {
    uint32_t cores = 0, cols = 0, stride = 0, stepRows = 0, redBytes = 0, rowVecBytes = 0, held = 0;
};

constexpr uint32_t kSliceUnitBytes = 128, kMaxSliceCols = 255 * 8;
constexpr uint64_t kSliceMaxRows = 256, kSliceMinStepRows = 16;

// ProcessSlices' steps of k rows (its SliceFirstRows, SliceSteps, SliceStep): the first one 8
// rows where k >= 16 and there are more rows than k.
struct SliceSteps {
    uint64_t rows, k, first, count;
    SliceSteps(uint64_t rows_, uint64_t k_) : rows(rows_), k(k_), first(k_ >= 16 && rows_ > k_ ? 8 : k_) {
        count = rows <= first ? 1 : 1 + CeilDiv(rows - first, k);
    }
    uint64_t Row(uint64_t i) const { return i == 0 ? 0 : i >= count ? rows : first + (i - 1) * k; }
};

// Bytes of the slices' RowSums scratch for steps of k rows (tiling redBytes), at least a block.
inline uint64_t SliceRedBytes(uint32_t k, uint32_t c, uint32_t stride) {
    uint64_t red = RowSumsScratch(true, true, k, c, stride, 0) * 4;
    return red < 32 ? 32 : R32(red);
}

// Bytes of the slices' row scalars (tiling rowVecBytes, the kernel's SliceVec): a float a row,
// then a block per row of rstd and, unless every step is held, of dx's factor.
inline uint64_t SliceRowVecBytes(uint64_t rows, bool allHeld) {
    uint64_t r8 = RoundUp(rows, 8);
    return r8 * 4 + (allHeld ? 1 : 2) * r8 * 32;
}

// UB of ProcessSlices (its InitSlices): per step of k rows, x and dy (two buffers), dx (two), two
// float buffers (a streamed step's x and dy, or two held steps' products; all held: every core's
// partial sums after pass 1, when larger), dgamma's terms, RowSums' scratch; once: gamma as float
// and its stage, dgamma's float sum, rstd and (some steps streamed) every core's partial sums,
// this core's, the row scalars (SliceRowVecBytes); the held steps' rows of x and dy as float.
inline uint64_t SliceBytes(uint32_t cores, uint64_t rows, uint32_t c, uint32_t stride, uint32_t k, uint32_t s, uint32_t g, uint64_t held) {
    SliceSteps st(rows, k);
    bool all = held == st.count;
    uint64_t r8 = RoundUp(rows, 8), tile = R32(uint64_t(k) * stride * s), step = R32(uint64_t(k) * stride * 4), parts = R32(cores * r8 * 4);
    uint64_t heldRows = rows - st.Row(st.count - held);
    return 4 * tile + 2 * tile + (all && parts > 2 * step ? parts : 2 * step) + step + SliceRedBytes(k, c, stride) + R32(stride * 4ull) +
           (g == 4 ? 0 : R32(uint64_t(c) * g)) + R32(stride * 4ull) + R32(r8 * 4 * (all ? 1 : 1 + cores)) + R32(r8 * 4) +
           SliceRowVecBytes(rows, all) + R32(2 * heldRows * stride * 4);
}

// Steps and held steps: every step held, in steps of the most rows that allows, from steps of >= 16
// KB of x and dy down (x and dy read once, pass 2 three vector passes a step; 910B bf16 128 x 4096:
// 16 rows of 256 B, 4 KB copies); else the steps that hold the most rows (at least the last step).
// {0, 0} when not even that fits.
inline std::pair<uint64_t, uint64_t> SliceHeldSteps(const ChipInfo& chip, uint32_t cores, uint64_t rows, uint32_t c, uint32_t stride, uint32_t s,
                                                    uint32_t g) {
    uint64_t k0 = RoundUp(CeilDiv(kMinCopyBytes, 2ull * c * s), 8);
    if (k0 >= rows) k0 = rows;
    auto fits = [&](uint64_t k, uint64_t held) { return SliceBytes(cores, rows, c, stride, uint32_t(k), s, g, held) <= chip.ubBytes; };
    // Steps past the first start at whole blocks of the packed sums (8 rows): the kernel's vector
    // operands there (sums, the row factors and their Brcb) start 32 B-aligned (ascendc_facts.md
    // 1.3), and the parts of each group of steps fill their rows per core. So k is a multiple of 8
    // or every row (one step); 3 float rows of 79909 columns once got k = 2 (the twin refused the
    // launch: parts past their buffer).
    auto next = [](uint64_t k) { return k > 8 ? (k - 1) / 8 * 8 : 0; };
    for (uint64_t k = k0; k > 0; k = next(k)) {
        uint64_t count = SliceSteps(rows, k).count;
        if (fits(k, count)) return {k, count};
    }
    // Most rows held, over steps of >= 16 rows where one fits (fewer rows a step pay their
    // barriers twice as often: 910B3 bf16 128 x 8192, 16 rows a step 5.93 us, 8 rows 6.21 us).
    uint64_t best = 0, bestHeld = 0, bestRows = 0;
    for (uint64_t k = k0; k > 0 && (best == 0 || k >= kSliceMinStepRows); k = next(k)) {
        SliceSteps st(rows, k);
        uint64_t held = 0;
        while (held < st.count && fits(k, held + 1)) ++held;
        if (held > 0 && rows - st.Row(st.count - held) > bestRows) best = k, bestHeld = held, bestRows = rows - st.Row(st.count - held);
    }
    return {best, bestHeld};
}

inline Slices SliceColumns(const ChipInfo& chip, uint64_t rows, uint32_t cols, uint32_t s, uint32_t g) {
    uint32_t unit = kSliceUnitBytes / s;
    if (!chip.hasDataCopyPad || !chip.hardSyncAll || rows > kSliceMaxRows || cols < 2 * unit) return {};
    uint32_t c = uint32_t(RoundUp(CeilDiv(cols, chip.vectorCores), unit));
    if (c > kMaxSliceCols) return {};
    uint32_t cores = uint32_t(CeilDiv(cols, c)), stride = uint32_t(RoundUp(c, 32 / s));
    if (2 * cores < chip.vectorCores) return {};
    auto [k, held] = SliceHeldSteps(chip, cores, rows, c, stride, s, g);
    if (k == 0) return {};
    bool all = held == SliceSteps(rows, k).count;
    return {cores, c, stride, uint32_t(k), uint32_t(SliceRedBytes(uint32_t(k), c, stride)), uint32_t(SliceRowVecBytes(rows, all)), uint32_t(held)};
}

}  // namespace detail

inline Result RmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon, AirfuseRmsNormTilingData* out,
                      uint32_t forceBlockDim = 0) {
    return detail::RmsNormRows("AirfuseRmsNorm", false, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

inline Result AddRmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon,
                         AirfuseRmsNormTilingData* out, uint32_t forceBlockDim = 0) {
    return detail::RmsNormRows("AirfuseAddRmsNorm", true, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

// AirfuseRmsNormGrad takes slices of columns (detail::SliceColumns) when the rows over the cores
// would give a core at most this many.
constexpr uint64_t kSliceRowsPerCore = 4;

inline Result RmsNormGrad(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, AirfuseRmsNormGradTilingData* out,
                          uint32_t forceBlockDim = 0) {
    const char* op = "AirfuseRmsNormGrad";
    Result res;
    res.error = detail::CheckInputs(op, chip, rows, cols, x, gamma, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(x), g = SizeOf(gamma), e = 32 / s;
    bool aligned = !chip.hasDataCopyPad, natural = aligned && cols < e;
    // Every core as soon as there are rows for it: per-row vector and scalar work, not bytes,
    // bounds a core (benchmarks/kernel_time.py). Each writes a float32 partial dgamma row, which
    // the cores then sum a slice of columns each (kernels/rms_norm_grad.cpp SpreadReduce).
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
    // 910B, few rows a core: slices of columns (SliceColumns).
    if (!forceBlockDim && rows <= kSliceRowsPerCore * chip.vectorCores) {
        detail::Slices sl = detail::SliceColumns(chip, rows, cols, s, g);
        if (sl.cores) {
            res.blockDim = sl.cores;
            uint64_t r8 = RoundUp(rows, 8);
            res.workspaceBytes = uint64_t(sl.cores) * r8 * 4;
            *out = AirfuseRmsNormGradTilingData{};
            out->numRows = rows;
            out->numCols = cols;
            out->rowStride = sl.stride;
            out->rowsPerLoop = sl.stepRows;
            out->colsPerChunk = cols;
            out->bufferNum = 2;
            out->avgFactor = 1.0f / float(cols);
            out->usedCores = sl.cores;
            out->floatCols = sl.stride;
            out->wsStride = uint32_t(r8);
            out->workCols = sl.stepRows * sl.stride;
            out->redBytes = sl.redBytes;
            out->rowVecBytes = sl.rowVecBytes;
            out->sliceCols = sl.cols;
            out->sliceHeld = sl.held;
            return res;
        }
    }
    // 310P, rows under 32 B: a core's dx holds a whole block.
    uint64_t minRows = natural ? CeilDiv(e, cols) : 1;
    auto stage = [&](uint32_t rpl) {
        uint32_t dx = detail::StageBytes(uint64_t(rpl) * cols, s), dgamma = detail::StageBytes(cols, g);
        return natural ? (dx > dgamma ? dx : dgamma) : 0u;
    };
    // Queues x and dy (one buffer), dx and rstd; gamma as float; resident: a step's x and dy as
    // float (half/bf16; float: its products instead) and the dgamma accumulator; split: a chunk
    // of x and dy as float and of gamma.
    // A2 resident rows whose float stride a repeat stride (uint8 blocks) holds, in steps of at
    // least kVectorRstdMinRows rows: a step's per-row scalars on the vector unit
    // (kernels/rms_norm_grad.cpp RowVec): rstd, rstd / d and the row means, n8 floats each, then
    // a Brcb block per row of rstd and of rstd * mean. Its chain of dependent ops costs a step ~6
    // barriers where the scalar unit costs ~60 cycles a row (benchmarks/kernel_time.py, 910B2
    // bf16: 1024 x 512, 16 rows a step, 3.76 -> 3.60 us; 1024 x 1024, 8 rows, 5.23 -> 5.33 us).
    auto rowVecBytes = [&](uint32_t rpl, uint32_t chunk, uint32_t stride) -> uint32_t {
        if (natural || chunk < cols || stride / 8 > 255 || rpl < detail::kVectorRstdMinRows || rpl > 8 * 255) return 0;  // Brcb: a uint8 repeat count
        return uint32_t(RoundUp(rpl, 8)) * (aligned ? 35 : 19) * 4;  // 310P: two Gather offset tables for the blocks instead of Brcb
    };
    // red_: a step's row sums and their scratch; a split row's chunk sums a block each, then the scratch.
    auto redBytes = [&](uint32_t rpl, uint32_t chunk, uint32_t stride, uint32_t f) {
        uint64_t chunkSums = chunk < cols ? (CeilDiv(cols, chunk) - 1) * 32 : 0;
        return uint32_t(detail::RedBytes(!aligned, false, rpl, detail::RowSpan(aligned, natural, cols, chunk, stride), stride, f) + chunkSums);
    };
    auto bytes = [&](uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) {
        uint64_t f = detail::FloatCols(aligned, chunk, s), tile = detail::R32(uint64_t(rpl) * stride * s);
        uint64_t b = 3 * buf * tile + buf * detail::R32(rpl * 4ull) + detail::R32(f * 4) + stage(rpl) + redBytes(rpl, chunk, stride, uint32_t(f));
        if (chunk < cols) return b + 2 * detail::R32(f * 4) + buf * detail::R32(f * g);
        return b + (s == 4 ? 1 : 2) * detail::R32(uint64_t(rpl) * stride * 4) + detail::R32(f * 4) + rowVecBytes(rpl, chunk, stride);
    };
    // 310P has no hardware SyncAll, and its software SyncAll(gm, ub, usedCores) counts on GM
    // counters that must be zero before any core arrives ([ADK] impl/basic_api/dav_m200/
    // kernel_operator_sync_impl.h SoftSyncAllImpl adds to whatever the counter holds; SyncAll.md
    // asks for a zeroed region), which op_host cannot provide (no zeroed workspace) and a kernel
    // cannot provide without the very cross-core ordering it is for. Its atomic add on GM copies
    // (dav_m200 kernel_operator_set_atomic_impl.h: float/half) would need dgamma zeroed first, the
    // same dependency. So on 310P the cores split dgamma by columns (SplitColumns: no cross-core
    // dependency), or one core does everything. On 910B split rows sum theirs in UB (splitAcc
    // below) or, when that does not fit, take the column split: their partial rows would go
    // through GM row by row.
    uint32_t rowCores;
    detail::Plan p = detail::PlanRows(op, chip, rows, cols, e, forceBlockDim, minRows, bytes, res, rowCores);
    if (!res.ok()) return res;
    // 910B: the fewest cores that keep the busiest core's row count (128 rows on 48 cores: 43 of
    // 3 rows; on 40: 32 of 4), as the forward's: the same rows on the slowest core, fewer partial
    // dgamma rows to store and sum after SyncAll and, in the cost model, whose HBM share is split
    // by the cores launched, a larger share each (benchmarks/kernel_time.py, 910B2 bf16 128 x
    // 16384: 17.76 -> 16.63 us).
    if (chip.hardSyncAll && !forceBlockDim) {
        res.blockDim = uint32_t(CeilDiv(rows, CeilDiv(rows, rowCores)));
        detail::Partition(chip, rows, 0, minRows, res, rowCores);
    }
    // 910B resident rows in at most kStepsPerCore steps a core: the plan's steps (StepRows' 16 KB
    // floor) evened out over the core's rows, as the forward's (86 rows of 128 bf16: 64 + 22 ->
    // 43 + 43): the first load and the last store exposed are the shorter (benchmarks/kernel_time.py,
    // 910B2 bf16 4096 x 128: 3.50 -> 3.35 us). With more steps they are a small part and evening
    // cost a little (16384 x 128: 8.45 -> 8.50 us). 310P keeps its steps (its column split sizes by them).
    uint64_t perCore = CeilDiv(rows, rowCores), steps = CeilDiv(perCore, p.rowsPerLoop);
    if (chip.hardSyncAll && p.chunk == cols && steps > 1 && steps <= kStepsPerCore) p.rowsPerLoop = uint32_t(CeilDiv(perCore, steps));
    // Split rows with a SyncAll (910B): their dgamma terms summed in a float32
    // row of UB, and gamma kept whole instead of a queue of chunks, when that fits with chunks of
    // at least kMinSplitAccChunk: the rows' second read comes from L2, where the column split read
    // x and dy again from HBM (benchmarks/kernel_time.py, 910B2 bf16 4096 x 16384: 2.370 -> 1.517
    // with gamma still read per chunk; 310P3 float16 128 x 16384, column split -> splitAcc: 2.020 ->
    // 1.362, benchmarks/results/README.md).
    constexpr uint32_t kMinSplitAccChunk = 1024;  // below it a chunk's fixed costs (barriers, latencies) grow, as in ResidentChunks
    // Rows that fit only one at a time on one buffer take this path too when a core has several
    // (one row a core has nothing to overlap: 910B2 bf16 1 x 8192 1.48 -> 2.07 us), and first try keeping each
    // row's x and dy whole (two buffers; rowResident: read once), only dx and the float work by
    // chunks (benchmarks/kernel_time.py, 910B2 bf16 384 x 8192: one buffer 20.02 us, chunks read
    // twice 17.72 us, rowResident see benchmarks/results/README.md).
    bool splitAcc = false, rowResident = false, gammaFloat = false;
    if (chip.hardSyncAll && (p.chunk < cols || (p.bufferNum == 1 && p.rowsPerLoop == 1 && rows > rowCores))) {
        uint64_t ub = chip.ubBytes;
        uint32_t stride = uint32_t(RoundUp(cols, e));
        // gamma's row in UB: float32 (`asFloat`: float gamma, or half/bf16 cast once) or its dtype,
        // then gamma's float chunk buffer unless the row is float, acc_, a_ and b_, red_.
        auto common = [&](uint32_t chunk, uint32_t rowStride, bool asFloat) {
            uint64_t f = detail::FloatCols(aligned, chunk, s);
            return (asFloat ? detail::R32(uint64_t(cols) * 4) : detail::R32(uint64_t(cols) * g) + detail::R32(f * 4)) + detail::R32(uint64_t(cols) * 4) +
                   2 * detail::R32(f * 4) + redBytes(1, chunk, rowStride, uint32_t(f));
        };
        auto rowResBytes = [&](uint32_t chunk, bool asFloat) {  // plus x and dy twice, dx chunks twice, rstd twice
            return common(chunk, stride, asFloat) + 4 * detail::R32(uint64_t(stride) * s) + 2 * detail::R32(uint64_t(chunk) * s) + 2 * detail::R32(4);
        };
        auto accBytes = [&](uint32_t chunk, bool asFloat) {  // plus chunks of x and dy twice, of dx twice, rstd twice
            return common(chunk, chunk, asFloat) + 6 * detail::R32(uint64_t(chunk) * s) + 2 * detail::R32(4);
        };
        // The largest chunk (a multiple of 64 under cols) that fits, evened out over as many chunks; 0 if none.
        auto chunkFor = [&](auto fits) -> uint32_t {
            for (uint64_t chunk = RoundUp(cols, 64) - 64; chunk >= kMinSplitAccChunk; chunk -= 64)
                if (fits(uint32_t(chunk))) return uint32_t(RoundUp(CeilDiv(cols, CeilDiv(cols, chunk)), 64));
            return 0;
        };
        // rowResident saves the second read (from L2) but its rows leave less UB for chunks, and each
        // chunk costs its barriers and latencies twice a row: kept while its chunks are at least half
        // as long (benchmarks/kernel_time.py: 910B2 bf16 384 x 8192, 2752 vs 4096 columns, rowResident
        // faster; 310P3 float16 128 x 16384, 1152 vs 5504 columns: 139.78 us vs 94.48 us).
        auto pick = [&](bool asFloat, bool& resident) {
            uint32_t r = chunkFor([&](uint32_t c) { return rowResBytes(c, asFloat) <= ub; });
            uint32_t k = chunkFor([&](uint32_t c) { return accBytes(c, asFloat) <= ub; });
            resident = r >= kMinSplitAccChunk && 2 * r >= k;
            return resident ? r : k;
        };
        uint32_t chunk = pick(g == 4, rowResident);
        // half/bf16 gamma as a float32 row: no cast of gamma per chunk (two a row), where that
        // leaves as few chunks (310P3 float16 16384: 3 either way; 910B2 bf16 16384: 6 vs 5).
        bool floatResident = false;
        uint32_t floatChunk = g == 4 ? 0 : pick(true, floatResident);
        if (floatChunk >= kMinSplitAccChunk && (chunk < kMinSplitAccChunk || CeilDiv(cols, floatChunk) <= CeilDiv(cols, chunk))) {
            chunk = floatChunk;
            rowResident = floatResident;
            gammaFloat = true;
        }
        if (chunk >= kMinSplitAccChunk && chunk < cols) {
            p = {2, 1, chunk, rowResident ? stride : chunk};
            splitAcc = true;
        } else {
            rowResident = gammaFloat = false;
        }
    }
    detail::ColumnSplit split{};
    if (!chip.hardSyncAll || (p.chunk < cols && !splitAcc)) {
        uint64_t used = bytes(p.bufferNum, p.rowsPerLoop, p.chunk, p.rowStride);
        split = detail::SplitColumns(rows, cols, s, g, p, forceBlockDim ? forceBlockDim : chip.vectorCores, chip.ubBytes - used);
        if (split.cores == 0 && !chip.hardSyncAll) {
            if (forceBlockDim > 1)
                return {std::string(op) + ": block_dim " + std::to_string(forceBlockDim) + " needs a hardware SyncAll or dgamma split by " +
                        "columns (x's last dim a multiple of 32 bytes, >= 2 slices), which " + chip.socVersion + " and " +
                        std::to_string(cols) + " columns do not give; it runs on one core"};
            res.blockDim = 1;
            p = detail::PlanRows(op, chip, rows, cols, e, 1, minRows, bytes, res, rowCores);
            if (!res.ok()) return res;
        } else if (split.cores > res.blockDim) {
            res.blockDim = split.cores;  // cores past rowCores only sum their columns
        }
    }
    // 310P: partial rows start 32 B-aligned and hold the row's windowed layout.
    uint32_t wsStride = aligned ? uint32_t(RoundUp(cols, e)) : cols;
    res.workspaceBytes = split.cores ? 0 : uint64_t(rowCores) * wsStride * sizeof(float);
    *out = AirfuseRmsNormGradTilingData{};
    detail::FillRowFields(out, rows, cols, p, rowCores, aligned, s);
    out->usedCores = rowCores;
    out->wsStride = wsStride;
    out->outStageBytes = stage(p.rowsPerLoop);
    out->workCols = p.rowsPerLoop * p.rowStride;
    out->redBytes = redBytes(p.rowsPerLoop, p.chunk, p.rowStride, out->floatCols);
    out->colCores = split.cores;
    out->colCols = split.cols;
    out->colRows = split.rows;
    out->splitAcc = splitAcc;
    out->rowVecBytes = rowVecBytes(p.rowsPerLoop, p.chunk, p.rowStride);
    out->rowResident = rowResident;
    out->gammaFloat = gammaFloat;
    // 910B resident rows, half/bf16 gamma: its own stage when UB the plan leaves holds it, so it
    // loads after the first step's rows (kernels/rms_norm_grad.cpp ProcessResident); a plan is
    // not shrunk for it (the stage counted in the plan: 1 x 8192 bf16 1.48 -> 2.07 us). Only for
    // gamma of >= kLateGammaBytes on several cores: its cast then sits in the first step's chain,
    // which costs more than a short gamma's transfer, or one core's at the full MTE port
    // (benchmarks/kernel_time.py, 910B2 bf16: 128 x 128 0.90 us either way, 1 x 4096 0.85 -> 0.88).
    constexpr uint64_t kLateGammaBytes = 1024;
    if (!aligned && p.chunk == cols && g != 4 && split.cores == 0 && res.blockDim > 1 && uint64_t(cols) * g >= kLateGammaBytes) {
        uint64_t stageBytes = detail::R32(RoundUp(cols, 32 / g) * g);
        if (bytes(p.bufferNum, p.rowsPerLoop, p.chunk, p.rowStride) + stageBytes <= chip.ubBytes) out->gammaStageBytes = uint32_t(stageBytes);
    }
    return res;
}

}  // namespace airfuse::tiling
