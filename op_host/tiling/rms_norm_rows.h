// Row helpers of the RMSNorm tilings (the forward's planners rms_norm_resident.h and
// rms_norm_chunks.h, the gradient's rms_norm_grad_rows.h and rms_norm_grad_slices.h): UB plans,
// row sums' scratch, rows over cores and the inputs every RMSNorm op refuses.
// UB plans mirror the kernels' InitBuffer calls exactly; a plan is accepted only if it fits.
#pragma once
#include <string>
#include "tiling_common.h"

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

// The row-partition and UB-plan fields of the gradient's rows struct.
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

// What every RMSNorm tiling refuses: empty or oversized x, dtypes the chip lacks, a forced
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

// On A2 a resident step's per-row scalars (the forward's rstd, rms_norm_resident.h RstdVecBytes;
// the gradient's, rms_norm_grad_rows.h RowVecBytes) go to the vector unit in steps of at least this
// many rows: below it the scalar unit, overlapped with the vector work, costs less than the vector
// path's chain of dependent ops.
constexpr uint32_t kVectorRstdMinRows = 10;

}  // namespace detail
}  // namespace airfuse::tiling
