// Tiling data of AirfuseRope and AirfuseRopeGrad, shared by op_host (writes it) and the kernel
// (reads it). Plain struct, naturally aligned fields: the same bytes on host and device.
//
// x's rows (every dim but the last) are collapsed into at most kRopeMaxDims dims, each either
// "full" (cos/sin have it) or "broadcast" (cos/sin have 1 there). A table row t (one cos/sin
// slice) serves `groupRows` x rows, one per index of the broadcast dims. Work items are
// (t, g) pairs in t-major order, split over cores, so a core loads each slice once per group.
#pragma once
#include <cstdint>

constexpr uint32_t kRopeMaxDims = 8;

struct AirfuseRopeTilingData {
    uint64_t tableRows;        // cos/sin rows: product of the full dims
    uint64_t groupRows;        // x rows per table row: product of the broadcast dims
    uint64_t itemsPerCore;     // (t, g) items of every core; the first itemsRemainder cores take one more
    uint64_t itemsRemainder;
    uint64_t dimSize[kRopeMaxDims];   // collapsed dims, outermost first
    uint64_t dimStride[kRopeMaxDims]; // x rows between neighbours along the dim
    uint32_t dimBroadcast[kRopeMaxDims];
    uint32_t numDims;
    uint32_t headDim;          // D, even
    uint32_t rowStride;        // UB elements per row: D rounded up to 32 bytes of x's dtype
    uint32_t rowsPerLoop;      // x rows per copy-in
    uint32_t bufferNum;        // 2 = double-buffered queues, 1 when UB is too tight
    uint32_t rotateStep;       // D/2 ("half") or 1 ("interleave"): the distance a pair's partner sits at
    uint32_t alignedCopy;      // 1: the chip has no DataCopyPad (310P): rows are whole 32 B blocks
    uint32_t rowCores;         // cores that get items (<= block_dim)
};
