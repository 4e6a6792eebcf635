// Per-chip facts the tiling core and the twin need (ascendc_facts §1.2, §2, perf_anchors §1).
#pragma once
#include <cstdint>
#include <cstring>

namespace airfuse {

struct ChipInfo {
    const char* socVersion;        // platform SoC name
    const char* computeUnit;       // OpDef AddConfig / ASCEND_COMPUTE_UNIT name
    uint32_t ubBytes;              // usable UB per vector core (runtime GetCoreMemSize(UB))
    uint32_t vectorCores;          // GetCoreNumAiv()
    uint32_t maxBufsPerPosition;   // live queue buffers per TPosition (hardware event ids)
    bool hasDataCopyPad;
    bool hasBf16;
    bool reduceSumSequential;      // ReduceSum count form: repeats added in order (A2) or as a tree
    bool hardSyncAll;              // SyncAll() exists (A2); else only SyncAll(gm, ub, usedCores)
    uint32_t systemWorkspaceBytes; // RESERVED_WORKSPACE before the user workspace (GetUserWorkspace)
};

inline constexpr ChipInfo kChips[] = {
    {"Ascend910B2", "ascend910b", 196352, 48, 8, true, true, true, true, 16u << 20},
    {"Ascend910B3", "ascend910b", 196352, 40, 8, true, true, true, true, 16u << 20},
    {"Ascend310P3", "ascend310p", 253952, 8, 8, false, false, false, false, 2u << 20},
};

inline const ChipInfo* FindChip(const char* soc) {
    for (const ChipInfo& c : kChips)
        if (std::strcmp(c.socVersion, soc) == 0) return &c;
    return nullptr;
}

}  // namespace airfuse
