// Tiling data of AirfuseAdd, shared by op_host (writes it) and the kernel (reads it).
#pragma once
#include <cstdint>

struct AirfuseAddTilingData {
    uint64_t totalElems;
    uint64_t elemsPerCore;  // a multiple of 128 elements; the last used core takes what is left
    uint32_t tileElems;     // elements per copy-in, a multiple of 128
    uint32_t bufferNum;
    uint32_t usedCores;     // cores with elements (<= block_dim)
    uint32_t alignedCopy;   // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
};
