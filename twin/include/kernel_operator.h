// The twin's stand-in for CANN's kernel_operator.h: the Ascend C subset airfuse's kernels use,
// executed on the CPU with the hardware's rules checked (see twin/README.md).
#pragma once
#include "twin/core.h"
#include "twin/tensor.h"
#include "twin/pipe.h"
#include "twin/copy.h"
#include "twin/vector.h"

// Kernel types legal per chip ([ADK] 设置Kernel类型.md, 约束说明): a kernel compiled for 310P
// (__CCE_AICORE__ 200) that names an A2 type fails to compile, as with CANN. The values index
// twin::KernelTypeName.
#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 200
#define KERNEL_TYPE_AICORE 6
#define KERNEL_TYPE_MIX_VECTOR_CORE 7
#else
#define KERNEL_TYPE_AIV_ONLY 0
#define KERNEL_TYPE_AIC_ONLY 1
#define KERNEL_TYPE_MIX_AIV_1_0 2
#define KERNEL_TYPE_MIX_AIC_1_0 3
#define KERNEL_TYPE_MIX_AIC_1_1 4
#define KERNEL_TYPE_MIX_AIC_1_2 5
#endif
#define KERNEL_TASK_TYPE_DEFAULT(type) twin::SetKernelType(type)

namespace twin {
void RegisterTiling(const char* type);
void ReadTiling(void* dst, const uint8_t* tiling, uint64_t bytes, const char* type);
}

// Tiling keys (kernel_utils_macros.h): op_host's SetTilingKey chooses which branch of a kernel
// runs; CPU debug keeps the key in g_tilingKey, set before a launch (ICPU_SET_TILING_KEY; the
// twin's twin_set_tiling_key).
extern uint64_t g_tilingKey;
#define TILING_KEY_VAR g_tilingKey
#define TILING_KEY_IS(k) (TILING_KEY_VAR == (k))

// A standard C++ tiling struct must be registered before it is read (REGISTER_TILING_DEFAULT.md);
// then it is a plain struct copied from the GM tiling buffer.
#define REGISTER_TILING_DEFAULT(Type) twin::RegisterTiling(#Type)
#define REGISTER_TILING_FOR_TILINGKEY(expression, Type) twin::RegisterTiling(#Type)
#define GET_TILING_DATA_WITH_STRUCT(Type, var, tiling) \
    Type var;                                          \
    twin::ReadTiling(&var, (tiling), sizeof(Type), #Type)
