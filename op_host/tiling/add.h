// Tiling of AirfuseAdd: element count, dtype and chip -> tiling data.
#pragma once
#include "tiling_common.h"
#include "add_tiling.h"

namespace airfuse::tiling {

inline constexpr uint64_t kAddAlign = 128;                  // elements: every core's start stays 256 B-aligned
inline constexpr uint64_t kAddSteps = 4;
inline constexpr uint64_t kAddMinTile = 1024;  // elements: below it a tile's vector latency and barriers outlast its copy
// Every core that gets at least kAddAlign elements: the copies and vector ops of a core are
// latency-bound below a few KB, and cores run side by side (twin cost model), so one more core
// shortens the launch while it has a whole aligned range to take.

inline Result Add(const ChipInfo& chip, uint64_t elems, DType dtype, AirfuseAddTilingData* out, uint32_t forceBlockDim = 0) {
    Result res;
    if (elems == 0) res.error = "AirfuseAdd: x must not be empty";
    if (res.ok()) res.error = CheckChip("AirfuseAdd", chip, dtype);
    if (res.ok()) res.error = CheckForcedBlockDim("AirfuseAdd", chip, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(dtype);
    uint64_t cores = CeilDiv(elems, kAddAlign);
    if (cores > chip.vectorCores) cores = chip.vectorCores;
    if (forceBlockDim) cores = forceBlockDim;
    uint64_t perCore = RoundUp(CeilDiv(elems, cores), kAddAlign);
    uint64_t used = CeilDiv(elems, perCore);
    // 310P: the last core's range ends in a block that overlaps its own data (kernels/gm_copy.h),
    // so a remainder under 32 B joins the core before it.
    if (!chip.hasDataCopyPad && used > 1 && (elems - (used - 1) * perCore) * s < 32) --used;
    res.blockDim = forceBlockDim ? forceBlockDim : uint32_t(used);
    // x, y, z queues, plus two float work tiles for half/bf16.
    uint64_t perElem2 = 3ull * 2 * s + (s == 4 ? 0 : 8);
    uint64_t perElem1 = 3ull * s + (s == 4 ? 0 : 8);
    uint32_t buf = chip.ubBytes / perElem2 >= kAddAlign ? 2 : 1;
    uint64_t tile = chip.ubBytes / (buf == 2 ? perElem2 : perElem1) / kAddAlign * kAddAlign;
    // Even tiles, at least kAddSteps of them where each keeps kAddMinTile elements: a core's loads
    // then overlap its vector work and stores (one tile per core overlaps nothing).
    uint64_t steps = CeilDiv(perCore, tile), split = perCore / kAddMinTile;
    if (steps < kAddSteps && split > steps) steps = split < kAddSteps ? split : kAddSteps;
    tile = RoundUp(CeilDiv(perCore, steps), kAddAlign);
    *out = AirfuseAddTilingData{elems, perCore, uint32_t(tile), buf, uint32_t(used), !chip.hasDataCopyPad};
    return res;
}

}  // namespace airfuse::tiling
