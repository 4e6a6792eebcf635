// The four PlatformAscendC methods airfuse's tiling adapters call (op_host/adapter_common.h). CANN
// defines them in its platform library, which is not public. opbuild only reads the OpDefs: it
// never runs a tiling function, so these are needed to link op_host with --no-undefined and are
// never reached; reaching one aborts, naming it, rather than returning a made-up chip. The tiling
// adapters are exercised against their own platform stand-in by tests/kernels.
#include <cstdio>
#include <cstdlib>

#include "tiling/platform/platform_ascendc.h"

namespace {
[[noreturn]] void Unreached(const char* method) {
    std::fprintf(stderr, "vendor check: platform_ascendc::PlatformAscendC::%s was called, but CANN's platform library is not "
                         "part of the vendor check (only opbuild loads this op_host)\n", method);
    std::abort();
}
}  // namespace

namespace platform_ascendc {
uint32_t PlatformAscendC::GetCoreNumAiv() const { Unreached("GetCoreNumAiv"); }
uint32_t PlatformAscendC::GetLibApiWorkSpaceSize() const { Unreached("GetLibApiWorkSpaceSize"); }
void PlatformAscendC::GetCoreMemSize(const CoreMemType&, uint64_t&) const { Unreached("GetCoreMemSize"); }
SocVersion PlatformAscendC::GetSocVersion() const { Unreached("GetSocVersion"); }
}  // namespace platform_ascendc
