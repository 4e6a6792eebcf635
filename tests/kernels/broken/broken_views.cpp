// Deliberately broken tensor views the twin must refuse (tests/kernels/test_twin_checks.py),
// beside broken_kernels.cpp. Parameters: x (GM, 256 floats), workspace, tiling.
#include "kernel_operator.h"

using namespace AscendC;

// A view starting at the end of a 256-float tensor, never used: CANN's CPU-debug
// LocalTensor::operator[] refuses it all the same (impl/basic_api/kernel_tensor_impl.h).
extern "C" __global__ __aicore__ void broken_view_at_end(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    LocalTensor<float> end = t[256];
    (void)end;
}
