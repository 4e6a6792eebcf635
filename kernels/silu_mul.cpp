// AirfuseSiluMul: y = silu(a) * b for same-shape a, b, as one flat row (kernels/act_kernel.h, act_math.h).
#include "act_kernel.h"
#include "act_math.h"

using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_silu_mul(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseActTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseActTilingData, t, tiling);
    RunAct<DTYPE_A, SiluMulMath>(t, {{a, ActView::Whole}, {b, ActView::Whole}}, {{y, ActView::Whole}});
}
