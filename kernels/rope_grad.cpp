// AirfuseRopeGrad: dx = dy * cos - rotate(dy * sin) (rotate's transpose is -rotate), the
// gradient of AirfuseRope with respect to x; same tiling and row machinery (rope_rows.h).
#include "rope_rows.h"

using namespace AscendC;
using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_rope_grad(GM_ADDR dy, GM_ADDR cos, GM_ADDR sin, GM_ADDR dx, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRopeTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRopeTilingData, t, tiling);
    RopeRows<DTYPE_DY, DTYPE_COS, true> op;
    op.Init(dy, cos, sin, dx, t);
    op.Process();
}
