// Tiling data of the RMSNorm forward's resident strategy (kernels/rms_norm/fwd_resident.h, tiling
// key kRmsNormResidentKey), shared by op_host (op_host/tiling/rms_norm_resident.h writes it) and
// the kernels (AirfuseRmsNorm, AirfuseAddRmsNorm read it). Plain struct, naturally aligned fields:
// the same bytes on host and device.
#pragma once
#include <cstdint>

constexpr uint64_t kRmsNormResidentKey = 1;  // a step's rows whole in UB

struct AirfuseRmsNormResidentTilingData {
    uint64_t numRows;         // product of x's leading dims
    uint32_t numCols;         // x's last dim
    uint32_t rowStride;       // UB elements per row: numCols rounded up to 32 bytes
    uint32_t rowsPerCore;     // rows of every core; the first rowsRemainder cores take one more
    uint32_t rowsRemainder;
    uint32_t rowCores;        // cores that get rows (<= block_dim)
    uint32_t rowsPerLoop;     // rows of a step (the last step of a core may have fewer)
    uint32_t bufferNum;       // 2: the next step loads while this one is computed; 1 when UB is too tight
    uint32_t redBytes;        // a step's row sums (a 32 B block each), then RowSums' scratch (kernels/row_sums.h)
    uint32_t reduceTmpBytes;  // 310P: ReduceSum's sharedTmpBuffer for one row (RowSums goes row by row there)
    uint32_t alignedCopy;     // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
    uint32_t rstdStageBytes;  // alignedCopy: UB staging of rstd values (kernels/gm_copy.h GmStream)
    uint32_t outStageBytes;   // alignedCopy with rows under 32 B: UB staging of y (and x); else 0
    uint32_t rstdVecBytes;    // UB of the vector rstd (fwd_rstd_vector.h); 0: rstd on the scalar unit
    float epsilon;
    float avgFactor;          // 1 / numCols
};
