// AirfuseAddRmsNorm: x = x1 + x2 (float32 add, rounded once to x1's dtype), then y, rstd as
// AirfuseRmsNorm computes them from that rounded x; outputs y, rstd, x (torch_npu's
// npu_add_rms_norm order). The row machinery is rms_norm_rows.h with the residual add on; the
// tiling data is AirfuseRmsNorm's, its UB plan counting the residual's buffers.
#include "rms_norm_rows.h"

using namespace AscendC;
using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_add_rms_norm(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR x,
                                                           GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormTilingData, t, tiling);
    RmsNormRows<DTYPE_X1, DTYPE_GAMMA, true> op;
    op.Init(x1, x2, gamma, y, rstd, x, t);
    op.Process();
}
