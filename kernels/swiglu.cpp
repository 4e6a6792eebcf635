// AirfuseSwiglu: y = silu(a) * b with a, b the halves of x along dim: x as [outer, 2 * half] rows, a the lower and b the upper half of each (kernels/act_kernel.h, act_math.h).
#include "act_kernel.h"
#include "act_math.h"

using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_swiglu(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseActTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseActTilingData, t, tiling);
    RunAct<DTYPE_X, SiluMulMath>(t, {{x, ActView::Lower}, {x, ActView::Upper}}, {{y, ActView::Whole}});
}
