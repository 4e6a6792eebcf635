// Tiling data of AirfuseRmsNormGrad's row strategies (kernels/rms_norm/grad_resident.h, tiling key
// kRmsNormGradResidentKey, and grad_split.h, kRmsNormGradSplitKey), shared by op_host (writes it)
// and the kernel (reads it). Plain struct, naturally aligned fields: the same bytes on host and device.
#pragma once
#include <cstdint>

constexpr uint64_t kRmsNormGradResidentKey = 1;  // a step's rows whole in UB
constexpr uint64_t kRmsNormGradSplitKey = 2;     // a row in column chunks

// Floats each rstd buffer holds past a step's rstd where the kernel Gathers rstd (310P, and the
// column split): CANN's CPU-debug Gather check asks a source up to 7 blocks longer than the
// step's rstd (kernels/common.h GatherSourceCount).
constexpr uint32_t kRstdGatherSlack = 56;

struct AirfuseRmsNormGradRowsTilingData {
    uint64_t numRows;         // product of x's leading dims
    uint32_t numCols;         // x's last dim
    uint32_t rowStride;       // UB elements per row: numCols rounded up to 32 bytes
    uint32_t rowsPerCore;     // the first rowsRemainder cores take one more
    uint32_t rowsRemainder;
    uint32_t rowsPerLoop;     // 1 when the row is split
    uint32_t colsPerChunk;    // numCols when a row fits in UB, else a 256-byte-aligned chunk
    uint32_t bufferNum;
    uint32_t reduceTmpBytes;
    float avgFactor;          // 1 / numCols
    uint32_t usedCores;       // cores that get rows (<= block_dim): partial dgamma rows in the workspace
    uint32_t alignedCopy;     // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
    uint32_t floatCols;       // elements of each float32 work buffer
    uint32_t wsStride;        // elements between the workspace's partial rows
    uint32_t outStageBytes;   // alignedCopy with rows under 32 B: UB staging of dx and dgamma; else 0
    uint32_t workCols;        // resident rows: elements of each float32 buffer of a step (rowsPerLoop * rowStride)
    uint32_t redBytes;        // a step's row sums and RowSums' scratch (kernels/row_sums.h); a split row's ReduceSum
    // No hardware SyncAll (310P), or rows split in chunks whose dgamma row does not fit in UB:
    // cores 0..colCores-1 each sum dgamma over every row for colCols columns (strided copies of
    // colRows rows at a time) instead of partial rows; 0: partial rows (SyncAll, or core 0 alone).
    uint32_t colCores;
    uint32_t colCols;
    uint32_t colRows;
    // Split rows on 910B: dgamma terms summed in a float32 row of UB, which goes to the workspace
    // like a resident step's (no column split, no GM row per row).
    uint32_t splitAcc;
    uint32_t rowVecBytes;     // resident rows: UB of a step's per-row scalars on the vector unit; 0: read on the scalar unit
    // splitAcc with each row's x and dy tiles whole in UB (two buffers; rowStride the row's): only
    // the float work and dx go by chunks, x and dy are read once.
    uint32_t rowResident;
};
