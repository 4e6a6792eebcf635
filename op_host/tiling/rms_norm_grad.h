// Tiling of AirfuseRmsNormGrad: the selector of its strategies (one planner each:
// rms_norm_grad_slices.h, rms_norm_grad_rows.h), which sets the tiling key the kernel entry
// (kernels/rms_norm_grad.cpp) branches on and fills that strategy's tiling struct.
#pragma once
#include "rms_norm_grad_rows.h"
#include "rms_norm_grad_slices.h"

namespace airfuse::tiling {

// Each strategy's tiling struct; the Result's tilingKey says which one was filled.
struct RmsNormGradTilings {
    AirfuseRmsNormGradRowsTilingData rows{};
    AirfuseRmsNormGradSlicesTilingData slices{};
};

// Slices of columns (910B) when the rows over the cores would give a core at most this many:
// every core's partial row sums then cost less than every core's partial dgamma row.
constexpr uint64_t kSliceRowsPerCore = 4;

inline Result RmsNormGrad(const ChipInfo& chip, uint64_t rows, uint32_t cols, DType x, DType gamma, RmsNormGradTilings* out,
                          uint32_t forceBlockDim = 0) {
    Result res;
    res.error = detail::CheckInputs("AirfuseRmsNormGrad", chip, rows, cols, x, gamma, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(x), g = SizeOf(gamma);
    if (!forceBlockDim && rows <= kSliceRowsPerCore * chip.vectorCores && detail::PlanSlices(chip, rows, cols, s, g, &out->slices, res))
        return res;
    res.blockDim = BlockDimForRows(rows, chip.vectorCores, 0, 1);
    return detail::PlanGradRows(chip, rows, cols, s, g, &out->rows, forceBlockDim, res);
}

}  // namespace airfuse::tiling
