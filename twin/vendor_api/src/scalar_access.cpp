// The scalar unit's accesses to the unified buffer and to GM (pipe S). In the CPU-debug headers the
// scalar loads and stores of the NPU (LocalTensor::GetValue/SetValue/operator(), GlobalTensor::
// GetValue/SetValue, ReduceSum's store of its sum) are plain host loads and stores: no intrinsic
// sees them. So the kernels are compiled with every memory access outlined to a call
// (build.cmake: -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0):
// GCC calls __asan_loadN_noabort / __asan_storeN_noabort(address) before each load and store of
// the kernel's code, the vendor headers' code included. Those that land in the unified buffer or in
// a GM argument of the launch are the scalar unit's, checked and ordered as pipe S instructions
// (pipe_order.h, gm_order.h); every other (the kernel's stack, TPipe's books) is not the model's.
// The model's own code (the intrinsics) is not instrumented.
//
// The CPU-debug headers make many host accesses per API call, nearly all outside UB and GM, so
// each callback first looks the address's 4 KiB page up in a table of the pages the launch's UB
// and GM arguments touch (by 2 MiB region, a bit per page), and only then compares exact ranges.
#include <cxxabi.h>
#include <dlfcn.h>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include "core_model.h"

using namespace airfuse_vendor_twin;

namespace {

// The watched pages: per 2 MiB region (its number + 1; 0 an empty slot, open addressing), a bit
// for each of its 512 pages.
constexpr int kRegionShift = 21, kPageShift = 12;
constexpr uint64_t kSlots = 4096;
struct Region {
    uint64_t id;
    uint64_t pages[8];
};
Region gWatched[kSlots];

inline bool Watched(uintptr_t address) {
    uint64_t id = (uint64_t(address) >> kRegionShift) + 1;
    for (uint64_t i = id & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
        if (gWatched[i].id == id) {
            uint64_t page = (uint64_t(address) >> kPageShift) & 511;
            return (gWatched[i].pages[page >> 6] >> (page & 63)) & 1;
        }
        if (gWatched[i].id == 0) return false;
    }
}

// "scalar load in airfuse_kernel::RmsNormGradRows::Process": the function of the kernel (template
// arguments and parameters left out) that holds the access; kept per call site, so the name an
// access leaves in the model's books stays valid.
const char* AccessName(const void* caller, bool write) {
    static std::unordered_map<const void*, std::string> names[2];
    auto [it, inserted] = names[write].try_emplace(caller);
    if (!inserted) return it->second.c_str();
    std::string function = "the kernel";
    Dl_info info{};
    if (dladdr(caller, &info) && info.dli_sname) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
        std::string full = status == 0 ? demangled : info.dli_sname;
        std::free(demangled);
        full = full.substr(0, full.find('('));
        function.clear();
        int depth = 0;
        for (char ch : full) {
            depth += ch == '<';
            if (depth == 0) function += ch;
            depth -= ch == '>';
        }
    }
    it->second = std::string(write ? "scalar store in " : "scalar load in ") + function;
    return it->second.c_str();
}

const GmBuffer* GmArgument(const Core& c, const uint8_t* p) {
    for (const GmBuffer& g : *c.gm)
        if (p >= g.base && p < g.base + g.bytes) return &g;
    return nullptr;
}

__attribute__((noinline)) void ScalarAccess(const void* caller, uintptr_t address, uint64_t bytes, bool write) {
    Core* c = gRunning;
    if (!c || bytes == 0) return;
    auto* p = reinterpret_cast<const uint8_t*>(address);
    if (c->ub && p >= c->ub && p < c->ub + c->ubBytes) {
        const char* name = AccessName(caller, write);
        uint64_t offset = CheckUb(name, "element", p, bytes);
        c->order.Touch(c->order.Issue(kPipeS, name), "element", offset, bytes, write);
        twin::CostOpen(c->cost, kPipeS);  // costs scalar_ub
        return;
    }
    const GmBuffer* g = GmArgument(*c, p);
    // The tiling is the launcher's argument, read once by GET_TILING_DATA: not the kernel's GM traffic.
    if (!g || g->name == "tiling") return;
    const char* name = AccessName(caller, write);
    CheckGm(name, "element", p, bytes);
    c->gmOrder->Touch(*c, c->order.Issue(kPipeS, name), "element", p, bytes, write);
    twin::CostOpen(c->cost, kPipeS);
    twin::CostGm(c->cost, g->base, uint64_t(p - g->base), bytes, write);  // costs scalar_gm
    (write ? c->gmWritten : c->gmRead) += bytes;
}

}  // namespace

namespace airfuse_vendor_twin {

void WatchScalarAccesses(const void* p, uint64_t bytes) {
    uint64_t first = uint64_t(uintptr_t(p)) >> kPageShift, last = (uint64_t(uintptr_t(p)) + bytes - 1) >> kPageShift;
    for (uint64_t page = first; page <= last; ++page) {
        uint64_t id = (page >> (kRegionShift - kPageShift)) + 1, i = id & (kSlots - 1), probes = 0;
        while (gWatched[i].id != 0 && gWatched[i].id != id) {
            if (++probes == kSlots) throw Failure("the launch's GM arguments span more memory than the scalar-access table holds");
            i = (i + 1) & (kSlots - 1);
        }
        gWatched[i].id = id;
        uint64_t bit = page & 511;
        gWatched[i].pages[bit >> 6] |= uint64_t(1) << (bit & 63);
    }
}

void UnwatchScalarAccesses() { std::memset(gWatched, 0, sizeof gWatched); }

}  // namespace airfuse_vendor_twin

// The callbacks GCC's outlined instrumentation calls (the "noabort" forms: -fsanitize-recover is
// the default of kernel-address), for accesses of 1, 2, 4, 8 and 16 bytes and of any size.
#define AIRFUSE_SCALAR_ACCESS(n)                                                                 \
    extern "C" void __asan_load##n##_noabort(uintptr_t a) {                                        \
        if (Watched(a) || Watched(a + n - 1)) ScalarAccess(__builtin_return_address(0), a, n, false); \
    }                                                                                              \
    extern "C" void __asan_store##n##_noabort(uintptr_t a) {                                       \
        if (Watched(a) || Watched(a + n - 1)) ScalarAccess(__builtin_return_address(0), a, n, true);  \
    }
AIRFUSE_SCALAR_ACCESS(1)
AIRFUSE_SCALAR_ACCESS(2)
AIRFUSE_SCALAR_ACCESS(4)
AIRFUSE_SCALAR_ACCESS(8)
AIRFUSE_SCALAR_ACCESS(16)
extern "C" void __asan_loadN_noabort(uintptr_t a, size_t n) {
    if (n && (Watched(a) || Watched(a + n - 1))) ScalarAccess(__builtin_return_address(0), a, n, false);
}
extern "C" void __asan_storeN_noabort(uintptr_t a, size_t n) {
    if (n && (Watched(a) || Watched(a + n - 1))) ScalarAccess(__builtin_return_address(0), a, n, true);
}
// The address sanitizer's own bookkeeping around a call that does not return (a throw) and a
// translation unit's dynamic initialisation of globals: this use of the instrumentation keeps none.
extern "C" void __asan_handle_no_return() {}
extern "C" void __asan_before_dynamic_init(const char*) {}
extern "C" void __asan_after_dynamic_init() {}
