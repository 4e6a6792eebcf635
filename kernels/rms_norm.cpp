// AirfuseRmsNorm: y = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + epsilon) over the last dim.
// One class per strategy, chosen by the tiling key op_host's selector sets
// (op_host/tiling/rms_norm.h; kernels/README.md says when each is picked):
//   1 resident rows (rms_norm/fwd_resident.h), 2 resident rows with float work in column chunks
//   (rms_norm/fwd_resident_chunks.h), 3 split rows (rms_norm/fwd_split.h).
// TILING_KEY_IS takes literals: CANN's build compiles one binary per key it finds there.
#include "rms_norm/fwd_resident.h"
#include "rms_norm/fwd_resident_chunks.h"
#include "rms_norm/fwd_split.h"

using namespace AscendC;
using namespace airfuse_kernel;

static_assert(kRmsNormResidentKey == 1 && kRmsNormResidentChunksKey == 2 && kRmsNormSplitKey == 3, "the literals below");

extern "C" __global__ __aicore__ void airfuse_rms_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormResidentTilingData);
    REGISTER_TILING_FOR_TILINGKEY("TILING_KEY_VAR == 2 || TILING_KEY_VAR == 3", AirfuseRmsNormChunksTilingData);
    if (TILING_KEY_IS(1)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormResidentTilingData, t, tiling);
        RmsNormFwdResident<DTYPE_X, DTYPE_GAMMA, false> op;
        op.Init(x, nullptr, gamma, y, rstd, nullptr, t);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormChunksTilingData, t, tiling);
        RmsNormFwdResidentChunks<DTYPE_X, DTYPE_GAMMA, false> op;
        op.Init(x, nullptr, gamma, y, rstd, nullptr, t);
        op.Process();
    } else if (TILING_KEY_IS(3)) {
        GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormChunksTilingData, t, tiling);
        RmsNormFwdSplit<DTYPE_X, DTYPE_GAMMA, false> op;
        op.Init(x, nullptr, gamma, y, rstd, nullptr, t);
        op.Process();
    }
}
