// Deliberately wrong kernel code that CANN's real headers (tests/vendor/test_negative_controls.py)
// and the twin's (tests/kernels/test_negative_controls.py) must both refuse at compile time.
// Compiled twice: with -DAIRFUSE_DEFECTS every defect is in (one function each, so the errors do
// not mix); without it each function holds the correct form instead, which must compile, so a
// test that passes proves the headers catch the defect and not something else. Each defect's line
// says what the compiler must report at that line:  DEFECT <name>: <regular expression>
#include "kernel_operator.h"

using namespace AscendC;

__aicore__ inline void MisspeltApi(const LocalTensor<float>& x) {
#ifdef AIRFUSE_DEFECTS
    Duplicat(x, 1.0f, 64);  // DEFECT misspelt_api: 'Duplicat' was not declared in this scope
#else
    Duplicate(x, 1.0f, 64);
#endif
}

__aicore__ inline void CastWithoutRoundMode(const LocalTensor<half>& h, const LocalTensor<float>& x) {
#ifdef AIRFUSE_DEFECTS
    Cast(h, x, 64);  // DEFECT cast_without_round_mode: no matching function for call to 'Cast\(
#else
    Cast(h, x, RoundMode::CAST_NONE, 64);
#endif
}

__aicore__ inline void ConstGlobalTensorWritten(const GlobalTensor<float>& out, GlobalTensor<float> writable) {
#ifdef AIRFUSE_DEFECTS
    out.SetValue(0, 1.0f);  // DEFECT const_gm_tensor_written: passing 'const AscendC::GlobalTensor<float>' as 'this' argument discards qualifiers
#else
    writable.SetValue(0, 1.0f);
#endif
}

__aicore__ inline void NonexistentHardEvent() {
#ifdef AIRFUSE_DEFECTS
    SetFlag<HardEvent::S_S>(0);  // DEFECT nonexistent_hard_event: 'S_S' is not a member of 'AscendC::HardEvent'
#else
    SetFlag<HardEvent::S_V>(0);
#endif
}

__aicore__ inline void WrongLocalTensorType(const LocalTensor<half>& h, const LocalTensor<float>& x) {
#ifdef AIRFUSE_DEFECTS
    Add(h, x, x, 64);  // DEFECT local_tensor_of_wrong_type: no matching function for call to 'Add\(
#else
    Add(x, x, x, 64);
#endif
}

extern "C" __global__ __aicore__ void kernel_defects(GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> x = buf.Get<float>();
    LocalTensor<half> h = buf.GetWithOffset<half>(64, 512);
    GlobalTensor<float> outGm;
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 64);
    MisspeltApi(x);
    CastWithoutRoundMode(h, x);
    ConstGlobalTensorWritten(outGm, outGm);
    NonexistentHardEvent();
    WrongLocalTensorType(h, x);
}
