// Tiling of AirfuseRmsNorm and AirfuseAddRmsNorm: the selector of their strategies (one planner
// each: rms_norm_resident.h, rms_norm_chunks.h), which sets the tiling key the kernel entries
// (kernels/rms_norm.cpp, add_rms_norm.cpp) branch on and fills that strategy's tiling struct.
#pragma once
#include "rms_norm_chunks.h"
#include "rms_norm_resident.h"

namespace airfuse::tiling {

// Each strategy's tiling struct; the Result's tilingKey says which one was filled.
struct RmsNormTilings {
    AirfuseRmsNormResidentTilingData resident{};
    AirfuseRmsNormChunksTilingData chunks{};
};

namespace detail {

// AirfuseRmsNorm, and with `residual` AirfuseAddRmsNorm. Every core gets rows as soon as there
// are rows for it: per-row vector and sync work, not bytes, bounds a core, and gamma, the one
// thing each core re-reads, is one row. Resident steps of rows when two fit (or one, double
// buffered); a row whose one tile fits only single-buffered goes by resident chunks where those
// fit (its load, compute and store would otherwise serialise); else split rows.
inline Result RmsNormForward(const char* op, bool residual, const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma,
                             float epsilon, RmsNormTilings* out, uint32_t forceBlockDim) {
    Result res;
    res.error = CheckInputs(op, chip, rows, cols, x, gamma, forceBlockDim);
    if (!res.ok()) return res;
    bool aligned = !chip.hasDataCopyPad;
    NormShape shape{rows, cols, SizeOf(x), SizeOf(gamma), residual, aligned, aligned && cols < 32 / SizeOf(x)};
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
    // 310P: a core's rstd (one float per row) and, for rows under 32 B, its y (and x) hold a whole block.
    uint64_t perBlock = CeilDiv(shape.ElemsPer32(), cols), minRows = shape.natural && perBlock > 8 ? perBlock : 8;
    uint32_t rowCores;
    Partition(chip, rows, forceBlockDim, minRows, res, rowCores);
    // The fewest cores that keep the busiest core's row count (128 rows on 48 cores: 43 of 3 rows):
    // the same critical path, and fewer cores each re-reading gamma.
    if (!forceBlockDim) {
        res.blockDim = uint32_t(CeilDiv(rows, CeilDiv(rows, rowCores)));
        Partition(chip, rows, 0, minRows, res, rowCores);
    }
    uint64_t perCore = CeilDiv(rows, rowCores), maxRows = StepRows(perCore, uint64_t(cols) * shape.xBytes);
    Plan steps = PlanResidentSteps(chip.ubBytes, shape, maxRows);
    if (steps.bufferNum && (steps.bufferNum == 2 || steps.rowsPerLoop > 1)) {
        FillResident(&out->resident, shape, steps, rowCores, chip.ubBytes, epsilon);
        res.tilingKey = kRmsNormResidentKey;
        return res;
    }
    if (uint32_t chunk = PlanResidentChunk(chip.ubBytes, shape)) {
        FillChunks(&out->chunks, shape, Plan{residual ? 1u : 2u, 1, chunk, shape.RowStride()}, true, rowCores, epsilon);
        res.tilingKey = kRmsNormResidentChunksKey;
        return res;
    }
    if (steps.bufferNum) {
        FillResident(&out->resident, shape, steps, rowCores, chip.ubBytes, epsilon);
        res.tilingKey = kRmsNormResidentKey;
        return res;
    }
    Plan split = PlanSplit(chip.ubBytes, shape);
    if (split.bufferNum == 0) {
        res.error = std::string(op) + ": no UB plan fits " + std::to_string(chip.ubBytes) + " bytes";
        return res;
    }
    FillChunks(&out->chunks, shape, split, false, rowCores, epsilon);
    res.tilingKey = kRmsNormSplitKey;
    return res;
}

}  // namespace detail

inline Result RmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon, RmsNormTilings* out,
                      uint32_t forceBlockDim = 0) {
    return detail::RmsNormForward("AirfuseRmsNorm", false, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

inline Result AddRmsNorm(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, float epsilon, RmsNormTilings* out,
                         uint32_t forceBlockDim = 0) {
    return detail::RmsNormForward("AirfuseAddRmsNorm", true, chip, rows, cols, x, gamma, epsilon, out, forceBlockDim);
}

}  // namespace airfuse::tiling
