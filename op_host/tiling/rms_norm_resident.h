// The RMSNorm forward's resident planner (kernels/rms_norm/fwd_resident.h, tiling key
// kRmsNormResidentKey): how many rows a step holds, and the UB its buffers take.
#pragma once
#include "rms_norm_rows.h"
#include "rms_norm/fwd_resident_tiling.h"

namespace airfuse::tiling {
namespace detail {

// What the forward's planners need of the shape, the dtypes and the chip.
struct NormShape {
    uint64_t rows;
    uint32_t cols;
    uint32_t xBytes, gammaBytes;  // bytes per element of x and of gamma
    bool residual;                // AirfuseAddRmsNorm: x2 and the sum x in queues too
    bool aligned;                 // no DataCopyPad (310P): whole 32 B blocks, kernels/gm_copy.h
    bool natural;                 // aligned and rows under 32 B: packed, staged on the way out

    uint32_t ElemsPer32() const { return 32 / xBytes; }
    uint32_t RowStride() const { return uint32_t(RoundUp(cols, ElemsPer32())); }
};

// The fields every forward strategy's tiling struct has: the rows over cores, the copy path and
// the math's constants (a fresh struct, the strategy's own fields left zero).
template <typename Tiling>
inline void FillForwardRows(Tiling* out, const NormShape& shape, uint32_t rowStride, uint32_t rowCores, float epsilon) {
    *out = Tiling{};
    out->numRows = shape.rows;
    out->numCols = shape.cols;
    out->rowStride = rowStride;
    out->rowsPerCore = uint32_t(shape.rows / rowCores);
    out->rowsRemainder = uint32_t(shape.rows % rowCores);
    out->rowCores = rowCores;
    out->alignedCopy = shape.aligned;
    out->epsilon = epsilon;
    out->avgFactor = 1.0f / float(shape.cols);
}

// UB bytes of the vector rstd (kernels/rms_norm/fwd_rstd_vector.h), 0 where the step's rstd stays
// on the scalar unit: rows whose float stride a repeat stride (uint8 blocks) holds; on A2 steps of
// at least kVectorRstdMinRows rows (packed sums and ones, then a Brcb block per row); on 310P rows
// of 32 B or more in steps of whole blocks of 8 rows (as A2's, plus packed epsilon and rstd and a
// block per row of Gather offsets).
inline uint32_t RstdVecBytes(const NormShape& shape, uint32_t rpl) {
    uint32_t rows8 = uint32_t(RoundUp(rpl, 8));
    if (shape.RowStride() / 8 > 255) return 0;
    if (!shape.aligned) return rpl < kVectorRstdMinRows ? 0 : rows8 * 4 * 2 + rows8 * 32;
    if (shape.natural || rpl % 8 != 0) return 0;
    return rows8 * 4 * 3 + rows8 * 32 * 2;
}

// UB bytes of the resident strategy's buffers (RmsNormFwdResident::Init, with the base's queues)
// for steps of `rpl` rows, `buf` buffers per queue.
inline uint64_t ResidentBytes(const NormShape& shape, uint32_t buf, uint32_t rpl) {
    uint32_t stride = shape.RowStride(), floatCols = FloatCols(shape.aligned, shape.cols, shape.xBytes);
    uint64_t stepElems = uint64_t(rpl) * stride;
    uint64_t bytes = (shape.residual ? 4 : 2) * buf * R32(stepElems * shape.xBytes);  // x, y (x2, x)
    bytes += (shape.xBytes == 4 ? 1 : 2) * R32(stepElems * 4);                         // work_ (and work2_)
    bytes += R32(uint64_t(stride) * 4);                                                // gamma as float
    if (shape.gammaBytes != 4) bytes += R32(RoundUp(shape.cols, 32 / shape.gammaBytes) * shape.gammaBytes);  // its stage
    uint32_t span = RowSpan(shape.aligned, shape.natural, shape.cols, shape.cols, stride), vec = RstdVecBytes(shape, rpl);
    bytes += RedBytes(!shape.aligned || vec, vec != 0, rpl, span, stride, floatCols) + vec;  // the vector rstd's sums go packed
    bytes += shape.aligned ? StageBytes(rpl, 4) : buf * R32(rpl * 4ull);  // rstd
    if (shape.natural) bytes += (shape.residual ? 2 : 1) * uint64_t(StageBytes(stepElems, shape.xBytes));
    return bytes;
}

// The most rows per step, up to maxRows, whose buffers fit in `ub`: double-buffered when one row
// fits so, else single. bufferNum 0 when not even one row fits.
inline Plan PlanResidentSteps(uint32_t ub, const NormShape& shape, uint64_t maxRows) {
    for (uint32_t buf = 2; buf >= 1; --buf) {
        if (ResidentBytes(shape, buf, 1) > ub) continue;
        uint64_t lo = 1, hi = maxRows < kMaxBlockCount ? maxRows : kMaxBlockCount;
        while (lo < hi) {
            uint64_t mid = (lo + hi + 1) / 2;
            if (ResidentBytes(shape, buf, uint32_t(mid)) <= ub) lo = mid; else hi = mid - 1;
        }
        Plan steps{buf, uint32_t(lo), shape.cols, shape.RowStride()};
        // 310P: the most steps of whole blocks of rows that fit with the vector rstd, if the plan
        // had more rows but not the vector rstd (no scalar read per row, worth more than longer steps).
        if (shape.aligned && !RstdVecBytes(shape, steps.rowsPerLoop)) {
            for (uint32_t rpl = steps.rowsPerLoop / 8 * 8; rpl >= kVectorRstdMinRows; rpl -= 8) {
                if (RstdVecBytes(shape, rpl) && ResidentBytes(shape, buf, rpl) <= ub) {
                    steps.rowsPerLoop = rpl;
                    break;
                }
            }
        }
        return steps;
    }
    return {};
}

inline void FillResident(AirfuseRmsNormResidentTilingData* out, const NormShape& shape, const Plan& steps, uint32_t rowCores, uint32_t ub,
                         float epsilon) {
    uint32_t floatCols = FloatCols(shape.aligned, shape.cols, shape.xBytes);
    FillForwardRows(out, shape, steps.rowStride, rowCores, epsilon);
    out->rowsPerLoop = steps.rowsPerLoop;
    out->bufferNum = steps.bufferNum;
    out->rstdVecBytes = RstdVecBytes(shape, steps.rowsPerLoop);
    out->redBytes = RedBytes(!shape.aligned || out->rstdVecBytes, out->rstdVecBytes != 0, steps.rowsPerLoop,
                             RowSpan(shape.aligned, shape.natural, shape.cols, shape.cols, steps.rowStride), steps.rowStride, floatCols);
    out->reduceTmpBytes = ReduceTmpBytes(floatCols);
    out->rstdStageBytes = shape.aligned ? StageBytes(steps.rowsPerLoop, 4) : 0;
    // 310P: rstd's stage holds all of a core's rows when UB allows, so no step flushes it (a flush
    // drains the vector pipe, waits for its copy and moves the kept block by scalar reads and writes).
    uint32_t whole = StageBytes(CeilDiv(shape.rows, rowCores), 4);
    if (shape.aligned && whole > out->rstdStageBytes &&
        ResidentBytes(shape, steps.bufferNum, steps.rowsPerLoop) + (whole - out->rstdStageBytes) <= ub)
        out->rstdStageBytes = whole;
    out->outStageBytes = shape.natural ? StageBytes(uint64_t(steps.rowsPerLoop) * shape.cols, shape.xBytes) : 0;
}

}  // namespace detail
}  // namespace airfuse::tiling
