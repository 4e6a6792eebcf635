// The twin's stand-in for CANN's kernel_operator.h: the Ascend C subset airfuse's kernels use,
// executed on the CPU with the hardware's rules checked (see twin/README.md).
#pragma once
#include "twin/core.h"
#include "twin/tensor.h"
#include "twin/pipe.h"
#include "twin/copy.h"
#include "twin/vector.h"

#define KERNEL_TYPE_AIV_ONLY 0
#define KERNEL_TASK_TYPE_DEFAULT(type) ((void)(type))

namespace twin {
void ReadTiling(void* dst, const uint8_t* tiling, uint64_t bytes);
}

// Tiling is a plain struct copied from the GM tiling buffer.
#define GET_TILING_DATA_WITH_STRUCT(Type, var, tiling) \
    Type var;                                          \
    twin::ReadTiling(&var, (tiling), sizeof(Type))
