// The RMSNorm forward's planners for rows whose float32 work does not fit in UB: resident chunks
// (kernels/rms_norm/fwd_resident_chunks.h, tiling key kRmsNormResidentChunksKey) and split rows
// (fwd_split.h, kRmsNormSplitKey), both filling AirfuseRmsNormChunksTilingData.
#pragma once
#include "rms_norm_resident.h"
#include "rms_norm/fwd_chunks_tiling.h"

namespace airfuse::tiling {
namespace detail {

// Resident chunks of at least this many columns: shorter chunks pay their barriers and latencies
// (four a chunk, twice a row) more often than splitting the row would.
constexpr uint32_t kMinResidentChunk = 1024;

// UB bytes of the resident-chunks strategy (RmsNormFwdResidentChunks::Init): a row's four tiles
// (AirfuseRmsNorm's x and y double-buffered; the residual form's x1, x2, x and y once), gamma's
// row in its dtype, float chunks (x's, gamma's for half/bf16 gamma, x2's for the half/bf16
// residual form), a sum per chunk and the scratch, rstd.
inline uint64_t ResidentChunksBytes(const NormShape& shape, uint32_t chunk) {
    uint32_t floatCols = FloatCols(shape.aligned, chunk, shape.xBytes), chunks = uint32_t(CeilDiv(shape.cols, chunk));
    uint32_t buf = shape.residual ? 1 : 2, floats = 1 + (shape.gammaBytes != 4) + (shape.residual && shape.xBytes != 4);
    return 4 * R32(uint64_t(shape.RowStride()) * shape.xBytes) + R32(RoundUp(shape.cols, 32 / shape.gammaBytes) * shape.gammaBytes) +
           floats * R32(floatCols * 4ull) + RedBytes(!shape.aligned, false, 1, chunk, chunk, floatCols) + (chunks - 1) * 32ull +
           (shape.aligned ? StageBytes(1, 4) : buf * 32ull);
}

// The resident chunk: as few chunks as fit, evened out (multiples of 64 columns); 0 when none of
// kMinResidentChunk or more fits, or, on 310P, rows are not whole blocks (a chunk's windowed tail
// would repeat data in the middle of the row's tile).
inline uint32_t PlanResidentChunk(uint32_t ub, const NormShape& shape) {
    if (shape.aligned && shape.cols % shape.ElemsPer32() != 0) return 0;
    for (uint64_t chunk = RoundUp(shape.cols, 64) - 64; chunk >= kMinResidentChunk; chunk -= 64) {
        if (ResidentChunksBytes(shape, uint32_t(chunk)) > ub) continue;
        return uint32_t(RoundUp(CeilDiv(shape.cols, CeilDiv(shape.cols, chunk)), 64));
    }
    return 0;
}

// UB bytes of the split strategy (RmsNormFwdSplit::Init): chunks of x and y (x2 and x) and of
// gamma in `buf` buffers, float chunks of x, gamma (and x2), the sum's scratch, rstd.
inline uint64_t SplitBytes(const NormShape& shape, uint32_t buf, uint32_t chunk) {
    uint64_t floatCols = FloatCols(shape.aligned, chunk, shape.xBytes);
    uint32_t floats = 2 + (shape.residual && shape.xBytes != 4);
    return (shape.residual ? 4 : 2) * buf * R32(uint64_t(chunk) * shape.xBytes) + buf * R32(floatCols * shape.gammaBytes) +
           floats * R32(floatCols * 4) + RedBytes(!shape.aligned, false, 1, chunk, chunk, uint32_t(floatCols)) +
           (shape.aligned ? StageBytes(1, 4) : buf * 32ull);
}

// The largest split chunk (a multiple of 64), double-buffered when one fits so; bufferNum 0 when none fits.
inline Plan PlanSplit(uint32_t ub, const NormShape& shape) {
    for (uint32_t buf = 2; buf >= 1; --buf)
        for (uint64_t chunk = RoundUp(shape.cols, 64) - 64; chunk >= 64; chunk -= 64)
            if (SplitBytes(shape, buf, uint32_t(chunk)) <= ub) return {buf, 1, uint32_t(chunk), uint32_t(chunk)};
    return {};
}

// `plan`: bufferNum, chunk and the row tile's stride (resident chunks: the row's, its chunk sums a
// block each; split: the chunk).
inline void FillChunks(AirfuseRmsNormChunksTilingData* out, const NormShape& shape, const Plan& plan, bool resident, uint32_t rowCores,
                       float epsilon) {
    uint32_t floatCols = FloatCols(shape.aligned, plan.chunk, shape.xBytes), chunks = uint32_t(CeilDiv(shape.cols, plan.chunk));
    FillForwardRows(out, shape, plan.rowStride, rowCores, epsilon);
    out->colsPerChunk = plan.chunk;
    out->floatCols = floatCols;
    out->bufferNum = plan.bufferNum;
    out->redBytes = RedBytes(!shape.aligned, false, 1, plan.chunk, plan.chunk, floatCols) + (resident ? (chunks - 1) * 32 : 0);
    out->reduceTmpBytes = ReduceTmpBytes(floatCols);
    out->rstdStageBytes = shape.aligned ? StageBytes(1, 4) : 0;
}

}  // namespace detail
}  // namespace airfuse::tiling
