// AirfuseRmsNorm: y = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + epsilon) over the last dim
// (the row machinery, shared with AirfuseAddRmsNorm, is in rms_norm_rows.h).
#include "rms_norm_rows.h"

using namespace AscendC;
using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_rms_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormTilingData, t, tiling);
    RmsNormRows<DTYPE_X, DTYPE_GAMMA, false> op;
    op.Init(x, nullptr, gamma, y, rstd, nullptr, t);
    op.Process();
}
