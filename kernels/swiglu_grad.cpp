// AirfuseSwigluGrad: dx = cat(da, db) along dim, silu_mul's gradient on the halves of x ([outer, 2 * half] rows; kernels/act_kernel.h, act_math.h).
#include "act_kernel.h"
#include "act_math.h"

using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_swiglu_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseActTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseActTilingData, t, tiling);
    RunAct<DTYPE_X, SiluMulGradMath>(t, {{dy, ActView::Whole}, {x, ActView::Lower}, {x, ActView::Upper}}, {{dx, ActView::Lower}, {dx, ActView::Upper}});
}
