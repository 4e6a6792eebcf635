// Tiling data of the RMSNorm forward's two strategies for rows whose float32 work does not fit in
// UB (kernels/rms_norm/fwd_resident_chunks.h, tiling key kRmsNormResidentChunksKey: the row's
// tiles resident; fwd_split.h, kRmsNormSplitKey: the row in column chunks, two passes over GM),
// shared by op_host (op_host/tiling/rms_norm_chunks.h writes it) and the kernels. Plain struct,
// naturally aligned fields: the same bytes on host and device.
#pragma once
#include <cstdint>

constexpr uint64_t kRmsNormResidentChunksKey = 2;  // a row's tiles whole in UB, its float work in column chunks
constexpr uint64_t kRmsNormSplitKey = 3;           // a row in column chunks, read twice

struct AirfuseRmsNormChunksTilingData {
    uint64_t numRows;         // product of x's leading dims
    uint32_t numCols;         // x's last dim
    uint32_t rowStride;       // resident chunks: UB elements of a row's tile (numCols rounded up to 32 bytes); split: colsPerChunk
    uint32_t rowsPerCore;     // rows of every core; the first rowsRemainder cores take one more
    uint32_t rowsRemainder;
    uint32_t rowCores;        // cores that get rows (<= block_dim)
    uint32_t colsPerChunk;    // columns of a chunk of float work (a multiple of 64)
    uint32_t floatCols;       // elements of each float32 work buffer: colsPerChunk, or its 32 B-windowed span on 310P
    uint32_t bufferNum;       // 2: the next tile loads while this one is computed; 1 when UB is too tight
    uint32_t redBytes;        // a sum per chunk (a 32 B block each), then RowSums' or ReduceSum's scratch
    uint32_t reduceTmpBytes;  // ReduceSum's sharedTmpBuffer for one chunk
    uint32_t alignedCopy;     // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
    uint32_t rstdStageBytes;  // alignedCopy: UB staging of rstd values (kernels/gm_copy.h GmStream)
    float epsilon;
    float avgFactor;          // 1 / numCols
};
