// TPipe's construction, compiled without the scalar-access instrumentation (build.cmake). In the
// CPU-debug headers it fills every simulated memory (GM, UB, L1, L0A/B/C, ...) with random values,
// a std::map lookup per word (kernel_tpipe_impl.h SetBufferCtx): host work no NPU does, and, once
// instrumented, millions of calls per block into src/scalar_access.cpp. TPipe's constructor and
// the functions it calls out of line are inline functions of the headers, which every kernel object
// defines too; this object is linked before the kernels, and the linker keeps the first definition
// of each (one definition rule: they are the same code), so the kernels construct their TPipe here.
#include "stub_def.h"
#include "kernel_operator.h"

// Never called: makes the compiler emit TPipe's constructor and destructor in this object.
[[gnu::used]] static void EmitTPipe() { AscendC::TPipe pipe; }
