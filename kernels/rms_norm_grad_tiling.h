// Tiling data of AirfuseRmsNormGrad, shared by op_host (writes it) and the kernel (reads it).
#pragma once
#include <cstdint>

struct AirfuseRmsNormGradTilingData {
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
    // No hardware SyncAll (310P), or rows split in chunks: cores 0..colCores-1 each sum dgamma over
    // every row for colCols columns (strided copies of colRows rows at a time) instead of partial
    // rows; 0: partial rows (SyncAll, or core 0 alone).
    uint32_t colCores;
    uint32_t colCols;
    uint32_t colRows;
    // Rows split in chunks with a hardware SyncAll: dgamma terms summed in a float32 row of UB,
    // which goes to the workspace like a resident step's (no column split, no GM row per row).
    uint32_t splitAcc;
    uint32_t rowVecBytes;     // A2 resident rows: UB of a step's per-row scalars on the vector unit; 0: read on the scalar unit
    // splitAcc with each row's x and dy tiles whole in UB (two buffers; rowStride the row's): only
    // the float work and dx go by chunks, x and dy are read once.
    uint32_t rowResident;
    // 910B resident rows with half/bf16 gamma: bytes of gamma's own stage, so it loads after the
    // first step's rows; 0: staged in the float work and loaded first (float gamma loads late
    // into its float buffer either way).
    uint32_t gammaStageBytes;
    // splitAcc with half/bf16 gamma: 1 = gamma held whole in UB as float32 (cast once per core, not
    // per chunk), when that leaves chunks no more numerous; 0: held in its dtype.
    uint32_t gammaFloat;
    // 910B, few rows a core: each core takes a slice of sliceCols columns of every row instead of
    // rows (kernels/rms_norm_grad.cpp ProcessSlices), rowsPerLoop rows of it per step, rowStride
    // its UB stride; the slices' partial row sums meet in the workspace (wsStride floats a core)
    // across a SyncAll, dgamma needs none. 0: rows over cores.
    uint32_t sliceCols;
    // Slices: the last sliceHeld steps (>= 1) keep their x and dy as float in UB across the
    // SyncAll: pass 2 neither loads nor casts them again.
    uint32_t sliceHeld;
};
