// Tiling data of AirfuseRmsNormGrad's slices strategy (kernels/rms_norm/grad_slices.h, tiling key
// kRmsNormGradSlicesKey, 910B only), shared by op_host (writes it) and the kernel (reads it).
// Plain struct, naturally aligned fields: the same bytes on host and device.
#pragma once
#include <cstdint>

constexpr uint64_t kRmsNormGradSlicesKey = 3;  // each core a slice of columns of every row

struct AirfuseRmsNormGradSlicesTilingData {
    uint64_t numRows;      // product of x's leading dims (at most op_host's kSliceMaxRows)
    uint32_t numCols;      // x's last dim
    uint32_t sliceCols;    // columns of each core's slice (the last core's may be fewer)
    uint32_t rowStride;    // UB elements between a step's rows: sliceCols rounded up to 32 bytes
    uint32_t rowsPerLoop;  // rows of a step (the first step 8 when this is >= 16)
    uint32_t sliceHeld;    // the last sliceHeld steps (>= 1) keep x and dy as float in UB across the SyncAll
    uint32_t usedCores;    // cores with a slice (= block_dim)
    uint32_t wsStride;     // floats of each core's partial row sums in the workspace: numRows rounded up to 8
    uint32_t redBytes;     // RowSums' scratch for a step (kernels/row_sums.h)
    uint32_t rowVecBytes;  // the row scalars: a float a row, then a block per row of rstd and of dx's factor
    float avgFactor;       // 1 / numCols
};
