// Tiling of AirfuseRmsNorm and AirfuseAddRmsNorm, and the row helpers AirfuseRmsNormGrad's planners
// share (rms_norm_grad*.h): shapes, dtypes and chip -> tiling data.
// UB plans mirror the kernels' InitBuffer calls exactly; a plan is accepted only if it fits.
#pragma once
#include <utility>
#include "tiling_common.h"
#include "rms_norm_tiling.h"

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

}  // namespace detail

inline Result RmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon, AirfuseRmsNormTilingData* out,
                      uint32_t forceBlockDim = 0) {
    return detail::RmsNormRows("AirfuseRmsNorm", false, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

inline Result AddRmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon,
                         AirfuseRmsNormTilingData* out, uint32_t forceBlockDim = 0) {
    return detail::RmsNormRows("AirfuseAddRmsNorm", true, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

}  // namespace airfuse::tiling
