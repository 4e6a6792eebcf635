// The vendor-API twin's launcher: the C entry points airfuse/twin.py calls (the same as the
// home-made twin's twin_launch and twin_set_tiling_key, twin/src/runtime.cpp), running a kernel
// compiled against CANN's real headers over the core model.
//
// Blocks take turns as coroutines of this thread (src/blocks.cpp).
#include <cstdio>
#include <cstring>
#include <string>
#include "blocks.h"
#include "../../src/launcher_common.h"
#include "chip.h"
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

extern uint64_t g_tilingKey;

using namespace airfuse_vendor_twin;

namespace {
// The compute unit whose builds keep the home-made twin's names (kernel_builds.py TWIN_BUILDS_CHIP).
constexpr const char* kHomeChip = "ascend910b";

int CopyErr(char* err, int errLen, const std::string& what) {
    std::snprintf(err, size_t(errLen), "%s", what.c_str());
    return 1;
}

// The compute unit a build is for, from its name (airfuse/kernel_builds.py vendor_twin_name): 910B's
// builds keep the home-made twin's names, every other chip's end in "__<compute unit>".
const char* KernelChip(const char* kernel) {
    const std::string name = kernel;
    for (const airfuse::ChipInfo& c : airfuse::kChips) {
        const std::string suffix = std::string("__") + c.computeUnit;
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) return c.computeUnit;
    }
    return kHomeChip;
}
}  // namespace

extern "C" int twin_launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args, const uint64_t* sizes,
                           const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten, char* err, int errLen) {
    const airfuse::ChipInfo* chip = airfuse::FindChip(soc);
    if (!chip) return CopyErr(err, errLen, Fmt("unknown chip '%s'", soc));
    // Each chip's builds are compiled in its own branch of the headers (dav_c220 for 910B, dav_m200
    // for 310P), and only that chip runs them: the build's name says its chip (KernelChip).
    const char* buildChip = KernelChip(kernel);
    if (std::strcmp(buildChip, chip->computeUnit) != 0)
        return CopyErr(err, errLen, Fmt("%s is the vendor-API twin's %s build; a launch on %s runs its %s build", kernel, buildChip, soc,
                                        chip->computeUnit));
    if (blockDim < 1 || blockDim > 65535) return CopyErr(err, errLen, Fmt("block_dim %u outside 1..65535", blockDim));
    std::vector<GmBuffer> gm;
    for (int i = 0; i < nargs; ++i)
        if (args[i] && sizes[i]) gm.push_back({names[i], args[i], sizes[i]});
    struct Watch {  // the scalar unit's accesses to the arguments, until the launch returns
        explicit Watch(const std::vector<GmBuffer>& gm) {
            for (const GmBuffer& g : gm) WatchScalarAccesses(g.base, g.bytes);
        }
        ~Watch() { UnwatchScalarAccesses(); }
    };
    const twin::CostParams* cost = twin::CostParamsFor(soc);
    if (!cost) return CopyErr(err, errLen, Fmt("the cost model has no parameters for '%s' (twin/src/cost.cpp)", soc));
    LaunchSpec spec{kernel, fn, nargs, args, blockDim, chip->vectorCores, &gm, cost, countOnly != 0};
    uint64_t read = 0, written = 0;
    std::string why;
    try {
        Watch watch(gm);
        if (!RunBlocks(spec, read, written, why)) return CopyErr(err, errLen, why);
    } catch (const std::exception& ex) {  // out of memory for the blocks' stacks or the model's state
        return CopyErr(err, errLen, std::string("the twin could not run the launch: ") + ex.what());
    }
    *bytesRead = read;
    *bytesWritten = written;
    return 0;
}

// The compute unit whose builds a launch on SoC `soc` runs (airfuse/twin.py names the entry symbol
// after it); null for an unknown SoC.
extern "C" const char* twin_kernel_chip(const char* soc) {
    const airfuse::ChipInfo* chip = airfuse::FindChip(soc);
    return chip ? chip->computeUnit : nullptr;
}

// Mutation test, as the home-made twin's entry points of the same names (twin/src/runtime.cpp):
// the SetFlag (with the WaitFlag that consumes it) or PipeBarrier called at "file:line" is skipped
// in the following launches; "" restores every site.
extern "C" void twin_disable_sync_site(const char* site) { gDisabledSite = site; }

// The SetFlag and PipeBarrier call sites run since the last call, one "file:line" per line; returns
// the length needed (the list is cleared only when it fit).
extern "C" int twin_sync_sites(char* out, int len) { return airfuse_twin_launch::ReportSyncSites(gSitesSeen, out, len); }

// The tiling key of the following launches: CPU debug's g_tilingKey, which TILING_KEY_IS reads.
extern "C" void twin_set_tiling_key(uint64_t key) { g_tilingKey = key; }
