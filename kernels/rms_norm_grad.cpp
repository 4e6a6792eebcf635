// AirfuseRmsNormGrad: with xhat = x * rstd and dxhat = dy * gamma,
//   dx = rstd * (dxhat - xhat * mean(dxhat * xhat))   per row (last dim),
//   dgamma = sum over rows of dy * xhat               (float32, cast to gamma's dtype).
// One class per strategy, chosen by the tiling key op_host's selector sets
// (op_host/tiling/rms_norm_grad.h; kernels/README.md says when each is picked):
//   1 resident rows (rms_norm/grad_resident.h), 2 split rows (rms_norm/grad_split.h),
//   3 slices of columns (rms_norm/grad_slices.h, 910B only).
// TILING_KEY_IS takes literals: CANN's build compiles one binary per key it finds there.
#include "rms_norm/grad_resident.h"
#include "rms_norm/grad_slices.h"
#include "rms_norm/grad_split.h"

using namespace AscendC;
using namespace airfuse_kernel;

static_assert(kRmsNormGradResidentKey == 1 && kRmsNormGradSplitKey == 2 && kRmsNormGradSlicesKey == 3, "the literals below");

extern "C" __global__ __aicore__ void airfuse_rms_norm_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR rstd, GM_ADDR gamma, GM_ADDR dx, GM_ADDR dgamma,
                                                            GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_SYNC_ALL_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormGradRowsTilingData);
    REGISTER_TILING_FOR_TILINGKEY("TILING_KEY_VAR == 3", AirfuseRmsNormGradSlicesTilingData);
    if (TILING_KEY_IS(1)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormGradRowsTilingData, t, tiling);
        RmsNormGradResident<DTYPE_X, DTYPE_GAMMA> op;
        op.Init(dy, x, rstd, gamma, dx, dgamma, workspace, t);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormGradRowsTilingData, t, tiling);
        RmsNormGradSplit<DTYPE_X, DTYPE_GAMMA> op;
        op.Init(dy, x, rstd, gamma, dx, dgamma, workspace, t);
        op.Process();
    }
#if AIRFUSE_HAS_DATA_COPY_PAD
    else if (TILING_KEY_IS(3)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormGradSlicesTilingData, t, tiling);
        RmsNormGradSlices<DTYPE_X, DTYPE_GAMMA> op;
        op.Init(dy, x, rstd, gamma, dx, dgamma, workspace, t);
        op.Process();
    }
#endif
}
