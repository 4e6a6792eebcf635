// Tiling data of AirfuseRmsNorm, shared by op_host (writes it) and the kernel (reads it).
// Plain struct, naturally aligned fields: the same bytes on host and device.
#pragma once
#include <cstdint>

struct AirfuseRmsNormTilingData {
    uint64_t numRows;         // product of x's leading dims
    uint32_t numCols;         // x's last dim
    uint32_t rowStride;       // UB elements per row: numCols rounded up to 32 bytes
    uint32_t rowsPerCore;     // rows of every core; the first rowsRemainder cores take one more
    uint32_t rowsRemainder;
    uint32_t rowsPerLoop;     // rows moved per copy-in (1 when the row is split)
    uint32_t colsPerChunk;    // numCols when a row fits in UB, else a 256-byte-aligned chunk
    uint32_t bufferNum;       // 2 = double-buffered queues, 1 when UB is too tight
    uint32_t reduceTmpBytes;  // ReduceSum sharedTmpBuffer for one chunk
    float epsilon;
    float avgFactor;          // 1 / numCols
    uint32_t alignedCopy;     // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
    uint32_t rowCores;        // cores that get rows (<= block_dim)
    uint32_t floatCols;       // elements of each float32 work buffer
    uint32_t rstdStageBytes;  // alignedCopy: UB staging of rstd values
    uint32_t outStageBytes;   // alignedCopy with rows under 32 B: UB staging of y; else 0
    uint32_t workCols;        // elements of the float32 work buffers (x as float, x2 as float): a step's rows, or the chunk
    uint32_t redBytes;        // a step's row sums (32 B each, kernels/row_sums.h), then RowSums' scratch (a split row: ReduceSum's)
    uint32_t rowResident;     // colsPerChunk < numCols: 1 = each row's tiles stay in UB (loaded and stored once), only its float work in chunks
    uint32_t rstdVecBytes;    // resident rows of <= 255 blocks as float (310P: >= 32 B, steps of whole blocks of rows): UB of the vector rstd path (else 0: rstd on the scalar unit)
    uint32_t squaresBytes;    // AirfuseRmsNorm, half/bf16 resident rows, UB to spare: a step's squares apart from x as float (workCols floats), else 0
    uint32_t workPair;        // resident rows, UB to spare: 1 = the work buffer holds two steps' workCols floats, used by steps alternately
    uint32_t firstStepRows;   // resident rows: rows of a core's first step (then rowsPerLoop, the rest last); 0 = rowsPerLoop
    uint32_t gammaFloatRow;   // rowResident (A2, half/bf16 x and gamma): 1 = gamma kept as a float32 row (staged in y's one buffer), y stored in two parts
};
