// Tiling data of the elementwise activation kernels (kernels/act_kernel.h: AirfuseSiluMul, AirfuseSwiglu,
// AirfuseGelu and their Grad kernels), shared by op_host (writes it) and the kernels (read it).
#pragma once
#include <cstdint>

inline constexpr uint32_t kActAlignElems = 128;  // unit and tile starts stay 256 B-aligned

// The work is `rows` rows of `cols` elements. Operands are either whole (rows `cols` apart) or one
// half of a row of 2*cols (swiglu's gate and up halves, rows `gatedStride` apart).
// Rows are cut into units of `chunkElems` columns (the last unit of a row takes the rest, never
// less than one 32 B block on its own); cores take consecutive units.
struct AirfuseActTilingData {
    uint64_t rows;
    uint64_t cols;
    uint64_t gatedStride;   // elements between rows of a gated operand (2 * cols)
    uint64_t chunkElems;    // a multiple of 128 elements, or cols
    uint64_t unitsPerCore;  // the first unitRemainder cores take one more
    uint32_t chunksPerRow;
    uint32_t unitRemainder;
    uint32_t usedCores;     // cores with units (<= block_dim)
    uint32_t tileElems;     // elements per copy-in, a multiple of 128
    uint32_t bufferNum;
    uint32_t alignedCopy;   // 1: the chip has no DataCopyPad (310P), kernels/gm_copy.h
    uint32_t natural;       // 1: 310P and cols under one 32 B block (then one row, one core)
    uint32_t approximate;   // gelu: 0 tanh, 1 none (erf); 0 for the other kernels
};

// UB tiles each kernel needs per element: queued inputs and outputs (in the row dtype) and float32
// temporaries (besides the float copies of half/bf16 inputs and outputs). With resultsInTemps the
// float results of half/bf16 rows are the last `outputs` temporaries (the math leaves them free by
// then), not tiles of their own: longer tiles in the same UB.
struct AirfuseActBuffers {
    uint32_t inputs;
    uint32_t outputs;
    uint32_t temps;
    uint32_t resultsInTemps;
};
inline constexpr AirfuseActBuffers kSiluMulBuffers{2, 1, 2, 1};
inline constexpr AirfuseActBuffers kSiluMulGradBuffers{3, 2, 3, 0};
inline constexpr AirfuseActBuffers kGeluBuffers{1, 1, 3, 1};
inline constexpr AirfuseActBuffers kGeluGradBuffers{2, 1, 3, 1};
