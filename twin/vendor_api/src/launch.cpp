// The vendor-API twin's launcher: the C entry points airfuse/twin.py calls (the same as the
// home-made twin's twin_launch and twin_set_tiling_key, twin/src/runtime.cpp), running a kernel
// compiled against CANN's real headers over the core model.
//
// Blocks run one after another in this thread: the CPU-debug headers keep the block index and the
// unified buffer in process-wide globals (asc-tools stub_def.h's block_idx, ConstDefiner::cpuUB),
// as CANN's CPU debug runs each block in a process of its own. So a kernel that synchronises its
// cores (SyncAll) cannot run here yet.
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include "chip.h"
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

extern int64_t block_idx;
extern int64_t block_num;
extern uint64_t g_tilingKey;

namespace airfuse_vendor_twin {
extern Core gCore;
extern bool gInLaunch;
void ResetBookkeeping();
}  // namespace airfuse_vendor_twin

using namespace airfuse_vendor_twin;

namespace {
using K3 = void (*)(uint8_t*, uint8_t*, uint8_t*);
using K4 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K5 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K6 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K7 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K8 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);

void Call(void* fn, int n, uint8_t** a) {
    switch (n) {
        case 3: reinterpret_cast<K3>(fn)(a[0], a[1], a[2]); break;
        case 4: reinterpret_cast<K4>(fn)(a[0], a[1], a[2], a[3]); break;
        case 5: reinterpret_cast<K5>(fn)(a[0], a[1], a[2], a[3], a[4]); break;
        case 6: reinterpret_cast<K6>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
        case 7: reinterpret_cast<K7>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
        case 8: reinterpret_cast<K8>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
        default: throw Failure(Fmt("the vendor-API twin launches kernels with 3..8 parameters, got %d", n));
    }
}

// The vendor's CPU-debug checks end a failed check with raise(SIGABRT) (impl/basic_api/kernel_log.h
// ASCENDC_ASSERT), after printing why: caught for the launch, which then fails instead of the process.
sigjmp_buf gAbortJump;
void OnAbort(int) { siglongjmp(gAbortJump, 1); }

void CheckFlagsClear(const Core& c) {
    for (int a = 0; a < 16; ++a)
        for (int b = 0; b < 16; ++b)
            for (int e = 0; e < 8; ++e)
                if (c.flags[a][b][e])
                    Fail("kernel end", Fmt("pipe %d -> %d event %d is still set (set_flag with no wait_flag)", a, b, e));
}

int CopyErr(char* err, int errLen, const std::string& what) {
    std::snprintf(err, size_t(errLen), "%s", what.c_str());
    return 1;
}

// One block; false with `why` when it failed.
bool RunBlock(void* fn, int nargs, uint8_t** args, std::string& why) {
    struct sigaction onAbort = {}, previous = {};
    onAbort.sa_handler = OnAbort;
    sigaction(SIGABRT, &onAbort, &previous);
    bool ok = true;
    if (sigsetjmp(gAbortJump, 1)) {
        why = Fmt("kernel %s, block %lld/%lld: the vendor's CPU-debug check stopped the kernel (SIGABRT; its message is on stdout)",
                  gCore.kernel, (long long)gCore.blockIdx, (long long)gCore.blockNum);
        ok = false;
    } else {
        try {
            Call(fn, nargs, args);
            CheckFlagsClear(gCore);
        } catch (const std::exception& ex) {
            why = ex.what();
            ok = false;
        }
    }
    sigaction(SIGABRT, &previous, nullptr);
    return ok;
}
}  // namespace

extern "C" int twin_launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args, const uint64_t* sizes,
                           const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten, char* err, int errLen) {
    const airfuse::ChipInfo* chip = airfuse::FindChip(soc);
    if (!chip) return CopyErr(err, errLen, Fmt("unknown chip '%s'", soc));
    // The kernels here are compiled for dav_c220 (__NPU_ARCH__ 2201), the 910B's vector core.
    if (std::strncmp(chip->socVersion, "Ascend910B", 10) != 0)
        return CopyErr(err, errLen, Fmt("the vendor-API twin runs the 910B (dav_c220) builds only, not %s", soc));
    if (countOnly) return CopyErr(err, errLen, "the vendor-API twin has no count-only mode: its intrinsics always move data");
    if (blockDim < 1 || blockDim > 65535) return CopyErr(err, errLen, Fmt("block_dim %u outside 1..65535", blockDim));
    std::vector<GmBuffer> gm;
    for (int i = 0; i < nargs; ++i)
        if (args[i] && sizes[i]) gm.push_back({names[i], args[i], sizes[i]});
    uint64_t read = 0, written = 0;
    gDropped.seen = 0;
    for (uint32_t b = 0; b < blockDim; ++b) {
        gCore = Core{};
        gCore.kernel = kernel;
        gCore.blockIdx = b;
        gCore.blockNum = blockDim;
        gCore.gm = &gm;
        block_idx = b;
        block_num = blockDim;
        ResetBookkeeping();
        gInLaunch = true;
        std::string why;
        bool ok = RunBlock(fn, nargs, args, why);
        gInLaunch = false;
        if (!ok) return CopyErr(err, errLen, why);
        read += gCore.gmRead;
        written += gCore.gmWritten;
    }
    *bytesRead = read;
    *bytesWritten = written;
    return 0;
}

// Mutation test: the following launches run as if the `index`-th (0-based, over the launch's
// blocks in order) set_flag of `event` ("MTE2_V", "V_MTE3", ...: source and destination pipe)
// with the wait_flag consuming it, or the `index`-th pipe_barrier of `event` ("PIPE_V", ...), were
// deleted; "" restores them. Returns 0, or 1 for a name it does not know.
extern "C" int twin_drop_sync(const char* event, int64_t index) {
    static const struct {
        const char* name;
        pipe_t pipe;
    } pipes[] = {{"S", PIPE_S}, {"V", PIPE_V}, {"MTE2", PIPE_MTE2}, {"MTE3", PIPE_MTE3}};
    gDropped = DroppedSync{};
    std::string e = event;
    if (e.empty()) return 0;
    auto find = [&](const std::string& n, pipe_t& out) {
        for (const auto& p : pipes)
            if (n == p.name) return out = p.pipe, true;
        return false;
    };
    pipe_t from, to = PIPE_ALL;
    size_t cut = e.find('_');
    bool ok = e.rfind("PIPE_", 0) == 0 ? find(e.substr(5), from) : cut != std::string::npos && find(e.substr(0, cut), from) && find(e.substr(cut + 1), to);
    if (!ok) return 1;
    gDropped.active = true;
    gDropped.from = from;
    gDropped.to = to;
    gDropped.index = index;
    return 0;
}

// The tiling key of the following launches: CPU debug's g_tilingKey, which TILING_KEY_IS reads.
extern "C" void twin_set_tiling_key(uint64_t key) { g_tilingKey = key; }
