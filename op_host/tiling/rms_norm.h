// Tiling of AirfuseRmsNorm and AirfuseRmsNormGrad: shapes, dtypes and chip -> tiling data.
// UB plans mirror the kernels' InitBuffer calls exactly; a plan is accepted only if it fits.
#pragma once
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

inline std::string CheckShape(const char* op, uint64_t rows, uint32_t cols) {
    if (rows == 0 || cols == 0) return std::string(op) + ": x must not be empty";
    if (rows > UINT32_MAX) return std::string(op) + ": more than 2^32 - 1 rows";
    return {};
}

}  // namespace detail

inline Result RmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon, AirfuseRmsNormTilingData* out,
                      uint32_t forceBlockDim = 0) {
    const char* op = "AirfuseRmsNorm";
    Result res;
    res.error = detail::CheckShape(op, rows, cols);
    if (res.error.empty()) res.error = CheckChip(op, chip, x);
    if (res.error.empty()) res.error = CheckChip(op, chip, gamma);
    if (res.error.empty()) res.error = CheckForcedBlockDim(op, chip, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(x), g = SizeOf(gamma);
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, uint64_t(cols) * g, 2ull * cols * s + 4);
    if (forceBlockDim) res.blockDim = forceBlockDim;
    uint64_t maxRows = CeilDiv(rows, res.blockDim);
    auto bytes = [&](uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) {
        uint64_t chunkF = RoundUp(chunk, 8);
        uint64_t b = 2 * buf * detail::R32(uint64_t(rpl) * stride * s) + buf * detail::R32(rpl * 4ull) + 2 * detail::R32(chunkF * 4) + detail::R32(32 + ReduceTmpBytes(chunk));
        if (chunk < cols) b += buf * detail::R32(chunkF * g);
        return b;
    };
    detail::Plan p = detail::ChoosePlan(chip.ubBytes, cols, 32 / s, maxRows, bytes);
    if (p.bufferNum == 0) {
        res.error = std::string(op) + ": no UB plan fits " + std::to_string(chip.ubBytes) + " bytes";
        return res;
    }
    if (p.chunk < cols && !forceBlockDim) res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);  // gamma is re-read per row anyway
    *out = AirfuseRmsNormTilingData{};
    out->numRows = rows;
    out->numCols = cols;
    out->rowStride = p.rowStride;
    out->rowsPerCore = uint32_t(rows / res.blockDim);
    out->rowsRemainder = uint32_t(rows % res.blockDim);
    out->rowsPerLoop = p.rowsPerLoop;
    out->colsPerChunk = p.chunk;
    out->bufferNum = p.bufferNum;
    out->reduceTmpBytes = ReduceTmpBytes(p.chunk);
    out->epsilon = epsilon;
    out->avgFactor = 1.0f / float(cols);
    return res;
}

inline Result RmsNormGrad(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, AirfuseRmsNormGradTilingData* out,
                          uint32_t forceBlockDim = 0) {
    const char* op = "AirfuseRmsNormGrad";
    Result res;
    res.error = detail::CheckShape(op, rows, cols);
    if (res.error.empty()) res.error = CheckChip(op, chip, x);
    if (res.error.empty()) res.error = CheckChip(op, chip, gamma);
    if (res.error.empty()) res.error = CheckForcedBlockDim(op, chip, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(x), g = SizeOf(gamma);
    // Besides its rows a core reads gamma and core 0 reads the core's float32 partial row back.
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, uint64_t(cols) * (g + 4), 3ull * cols * s + 4);
    if (forceBlockDim) res.blockDim = forceBlockDim;
    uint64_t maxRows = CeilDiv(rows, res.blockDim);
    auto bytes = [&](uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) {
        uint64_t chunkF = RoundUp(chunk, 8);
        uint64_t b = 3 * buf * detail::R32(uint64_t(rpl) * stride * s) + buf * detail::R32(rpl * 4ull) + 3 * detail::R32(chunkF * 4) + detail::R32(32 + ReduceTmpBytes(chunk));
        b += chunk < cols ? buf * detail::R32(chunkF * g) : detail::R32(chunkF * 4);
        return b;
    };
    detail::Plan p = detail::ChoosePlan(chip.ubBytes, cols, 32 / s, maxRows, bytes);
    if (p.bufferNum == 0) {
        res.error = std::string(op) + ": no UB plan fits " + std::to_string(chip.ubBytes) + " bytes";
        return res;
    }
    if (p.chunk < cols && !forceBlockDim) res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
    res.workspaceBytes = uint64_t(res.blockDim) * cols * sizeof(float);
    *out = AirfuseRmsNormGradTilingData{};
    out->numRows = rows;
    out->numCols = cols;
    out->rowStride = p.rowStride;
    out->rowsPerCore = uint32_t(rows / res.blockDim);
    out->rowsRemainder = uint32_t(rows % res.blockDim);
    out->rowsPerLoop = p.rowsPerLoop;
    out->colsPerChunk = p.chunk;
    out->bufferNum = p.bufferNum;
    out->reduceTmpBytes = ReduceTmpBytes(p.chunk);
    out->avgFactor = 1.0f / float(cols);
    out->usedCores = res.blockDim;
    return res;
}

}  // namespace airfuse::tiling
