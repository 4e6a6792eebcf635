// Twin core: storage types, per-core state, violations and GM registry.
// Kernels never include this directly; they include "kernel_operator.h".
#pragma once
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdarg>
#include <string>
#include <vector>
#include <set>
#include <utility>
#include <stdexcept>
#include <type_traits>
#include "chip.h"
#include "sync_state.h"
#include "cost.h"

// Device qualifiers mean nothing on the CPU (as in CANN's own CPU debug mode).
#define __aicore__
#define __global__
#define __gm__
#define GM_ADDR uint8_t*

using half = _Float16;

// bf16 is a storage type only: no arithmetic operators on purpose (ascendc_facts §6.1).
struct bfloat16_t {
    uint16_t bits;
};

namespace twin {

using Chip = airfuse::ChipInfo;

struct GmShadow;

struct GmBuffer {
    std::string name;
    const uint8_t* base;
    uint64_t bytes;
    GmShadow* shadow = nullptr;  // cross-core race state; none in count-only launches
};

struct QueueBase;

// KERNEL_TASK_TYPE_DEFAULT values (kernel_operator.h); -1 = the kernel set none.
constexpr int kKernelTypeUnset = -1, kKernelTypeMixAiv10 = 2;
const char* KernelTypeName(int type);
void SetKernelType(int type);
void CheckEventsAtEnd();

// Everything one simulated vector core owns during a launch (one thread per core).
struct Core {
    const Chip* chip = nullptr;
    const char* kernel = "";
    int64_t blockIdx = 0;
    int64_t blockNum = 1;
    bool countOnly = false;
    std::vector<uint8_t> ub;
    uint32_t ubUsed = 0;
    uint32_t bufCount = 0;
    uint32_t initBuffers = 0;     // TPipe::InitBuffer calls, to name buffers in messages
    uint32_t softSyncs = 0;       // soft SyncAll calls passed
    // GM writes by MTE3 before this block's first SyncAll, for the soft SyncAll's kernel-side
    // zeroing (SoftSyncAllBlocks): where, whether the data was all zeros (unknown in count-only
    // launches), and when the cost model has it land; entries from `earlyOpen` on belong to the
    // instruction not costed yet.
    struct EarlyWrite {
        const uint8_t* p;
        uint64_t bytes;
        bool zeros;
        double lands;
        const char* api;
    };
    std::vector<EarlyWrite> earlyWrites;
    size_t earlyOpen = 0;
    bool pipeAlive = false;
    uint32_t liveBufs[16] = {};   // allocated queue buffers per TPosition
    std::vector<QueueBase*> queues;
    void* tpipe = nullptr;        // the kernel's TPipe (GetTPipePtr)
    int kernelType = kKernelTypeUnset;
    std::set<std::string> tilingTypes;  // the structs REGISTER_TILING_DEFAULT / REGISTER_TILING_FOR_TILINGKEY named
    SyncState sync;
    CoreCost cost;
    std::set<std::pair<const char*, int>> sitesSeen;  // SetFlag/PipeBarrier call sites run
    std::string disabledSite;                          // "file:line" the mutation test switched off
    uint64_t gmRead = 0;
    uint64_t gmWritten = 0;
    const std::vector<GmBuffer>* gm = nullptr;
};

Core& Cur();

class Violation : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Stops the launch: message names kernel, block, API and the offending values.
[[noreturn]] void Fail(const char* api, const std::string& what);

const char* Basename(const char* path);

inline std::string Fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string Fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// GM buffer names the launcher gives the workspace's two parts.
constexpr const char* kWorkspace = "workspace";
constexpr const char* kSystemWorkspace = "system workspace";

// GM bounds: [p, p+bytes) must lie inside one registered buffer.
const GmBuffer& CheckGm(const char* api, const void* p, uint64_t bytes);

inline bool AllZero(const void* p, uint64_t bytes) {
    auto* b = static_cast<const uint8_t*>(p);
    for (uint64_t i = 0; i < bytes; ++i)
        if (b[i]) return false;
    return true;
}

void SyncAllBlocks();
void SoftSyncAllBlocks(int32_t* gm, uint64_t gmElems, uint64_t ubBytes, int32_t usedCores);
uint8_t* UserWorkspace(uint8_t* workspace);

template <typename T> constexpr const char* TypeName() {
    if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, half>) return "half";
    else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>) return "uint32_t";
    else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    else return "other";
}

inline float Bf16ToFloat(bfloat16_t v) {
    uint32_t u = uint32_t(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Round to nearest even, NaN kept quiet.
inline bfloat16_t FloatToBf16Rint(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16_t{uint16_t((u >> 16) | 0x40)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return bfloat16_t{uint16_t(u >> 16)};
}

}  // namespace twin
