// AirfuseAddRmsNorm: x = x1 + x2 (float32 add, rounded once to x1's dtype), then y, rstd as
// AirfuseRmsNorm computes them from that rounded x; outputs y, rstd, x (torch_npu's
// npu_add_rms_norm order). AirfuseRmsNorm's strategy classes and tiling structs with the residual
// add on (kernels/rms_norm.cpp says which key is which); op_host's UB plans count the residual's
// buffers.
#include "rms_norm/fwd_resident.h"
#include "rms_norm/fwd_resident_chunks.h"
#include "rms_norm/fwd_split.h"

using namespace AscendC;
using namespace airfuse_kernel;

static_assert(kRmsNormResidentKey == 1 && kRmsNormResidentChunksKey == 2 && kRmsNormSplitKey == 3, "the literals below");

extern "C" __global__ __aicore__ void airfuse_add_rms_norm(GM_ADDR x1, GM_ADDR x2, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR x,
                                                           GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormResidentTilingData);
    REGISTER_TILING_FOR_TILINGKEY("TILING_KEY_VAR == 2 || TILING_KEY_VAR == 3", AirfuseRmsNormChunksTilingData);
    if (TILING_KEY_IS(1)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormResidentTilingData, t, tiling);
        RmsNormFwdResident<DTYPE_X1, DTYPE_GAMMA, true> op;
        op.Init(x1, x2, gamma, y, rstd, x, t);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormChunksTilingData, t, tiling);
        RmsNormFwdResidentChunks<DTYPE_X1, DTYPE_GAMMA, true> op;
        op.Init(x1, x2, gamma, y, rstd, x, t);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormChunksTilingData, t, tiling);
        RmsNormFwdSplit<DTYPE_X1, DTYPE_GAMMA, true> op;
        op.Init(x1, x2, gamma, y, rstd, x, t);
        op.Process();
    }
}
