// Tiling of AirfuseAdd: element count, dtype and chip -> tiling data.
#pragma once
#include "tiling_common.h"
#include "add_tiling.h"

namespace airfuse::tiling {

inline constexpr uint64_t kAddAlign = 128;                  // elements: every core's start stays 256 B-aligned
inline constexpr uint64_t kAddSteps = 4;
inline constexpr uint64_t kAddMinTile = 1024;  // elements: below it a tile's vector latency and barriers outlast its copy
// One tile per core (half/bf16 with DataCopyPad): groups of about kAddGroupElems, each cast while
// the next loads (kernels/add.cpp ProcessGroups); at most kAddGroupsMax (each holds two MTE2 -> V
// event ids until it is cast, 8 ids per event); the last group stored in up to kAddPieces pieces
// of >= kAddPieceElems. Groups pay where a group's load outlasts a barrier window of vector work,
// i.e. where most of the chip's cores share HBM (twin cost model); with fewer, one group.
inline constexpr uint64_t kAddGroupElems = 192;
inline constexpr uint64_t kAddGroupsMax = 4;
inline constexpr uint64_t kAddPieces = 4;
inline constexpr uint64_t kAddPieceElems = 64;
inline constexpr uint64_t kAddGroupAlign = 16;  // elements: every group and piece starts 32 B-aligned
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
    uint64_t groupElems = 0, pieceElems = 0;
    if (steps == 1 && s == 2 && chip.hasDataCopyPad) {
        uint64_t groups = 2 * used > chip.vectorCores ? perCore / kAddGroupElems : 1;
        groups = groups < 1 ? 1 : groups > kAddGroupsMax ? kAddGroupsMax : groups;
        groupElems = RoundUp(CeilDiv(perCore, groups), kAddGroupAlign);
        uint64_t last = perCore - groupElems * (CeilDiv(perCore, groupElems) - 1);
        uint64_t pieces = CeilDiv(last, kAddPieceElems);
        pieceElems = RoundUp(CeilDiv(last, pieces < kAddPieces ? pieces : kAddPieces), kAddGroupAlign);
    }
    *out = AirfuseAddTilingData{elems, perCore, uint32_t(tile), buf, uint32_t(used), !chip.hasDataCopyPad, uint32_t(groupElems),
                                uint32_t(pieceElems)};
    return res;
}

}  // namespace airfuse::tiling
