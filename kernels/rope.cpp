// AirfuseRope: y = x * cos + rotate(x) * sin over the last dim, mode "half" or "interleave" (the
// tiling's rotateStep); cos/sin broadcast over x's other dims without being materialised. The
// row machinery is rope_rows.h.
#include "rope_rows.h"

using namespace AscendC;
using namespace airfuse_kernel;

extern "C" __global__ __aicore__ void airfuse_rope(GM_ADDR x, GM_ADDR cos, GM_ADDR sin, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRopeTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRopeTilingData, t, tiling);
    RopeRows<DTYPE_X, DTYPE_COS, false> op;
    op.Init(x, cos, sin, y, t);
    op.Process();
}
