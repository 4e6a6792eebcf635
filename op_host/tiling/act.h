// Tiling of the elementwise activation kernels (kernels/act_kernel.h): [rows, cols] view, dtype and chip
// -> tiling data. Flat ops (silu_mul, gelu) are one row of every element; swiglu is [outer, half]
// with its gate and up halves gatedStride = 2 * half apart.
#pragma once
#include "tiling_common.h"
#include "act_tiling.h"

namespace airfuse::tiling {

inline constexpr uint64_t kActAlign = kActAlignElems;
inline constexpr uint64_t kActMinBytesPerCore = 16 * 1024;  // below this a core's copies are too short to pay off
inline constexpr uint64_t kActTileCost = 2048;             // elements of work a tile's fixed cost is worth (twin cost model)
// The activation kernels by op base name (the kernel file, kernels/<base>.cpp) and what each buffers.
struct ActOp {
    const char* base;
    const char* irType;
    AirfuseActBuffers buffers;
};
inline constexpr ActOp kActOps[] = {
    {"silu_mul", "AirfuseSiluMul", kSiluMulBuffers},   {"silu_mul_grad", "AirfuseSiluMulGrad", kSiluMulGradBuffers},
    {"swiglu", "AirfuseSwiglu", kSiluMulBuffers},      {"swiglu_grad", "AirfuseSwigluGrad", kSiluMulGradBuffers},
    {"gelu", "AirfuseGelu", kGeluBuffers},             {"gelu_grad", "AirfuseGeluGrad", kGeluGradBuffers},
};

inline const ActOp* FindActOp(const std::string& base) {
    for (const ActOp& op : kActOps)
        if (base == op.base) return &op;
    return nullptr;
}

inline Result Act(const ChipInfo& chip, const char* op, const AirfuseActBuffers& bufs, uint64_t rows, uint64_t cols, DType dtype,
                  uint32_t approximate, AirfuseActTilingData* out, uint32_t forceBlockDim = 0) {
    Result res;
    if (rows == 0 || cols == 0) res.error = std::string(op) + ": the input must not be empty";
    if (res.ok()) res.error = CheckChip(op, chip, dtype);
    if (res.ok()) res.error = CheckForcedBlockDim(op, chip, forceBlockDim);
    if (!res.ok()) return res;
    uint32_t s = SizeOf(dtype);
    uint64_t block = 32 / s;
    // 310P moves whole 32 B blocks: rows under one block have no window inside the row, so they are
    // moved in the natural layout, a row per tile, and stored by the scalar unit on one core (the
    // data cache writes back whole lines, which cores sharing a line would overwrite).
    bool natural = !chip.hasDataCopyPad && cols < block;
    uint64_t total = rows * cols;
    uint64_t cores = CeilDiv(total * s, kActMinBytesPerCore);
    if (cores > chip.vectorCores) cores = chip.vectorCores;
    if (forceBlockDim) cores = forceBlockDim;
    if (natural) cores = 1;  // a forced block_dim leaves the other cores idle
    // Queued inputs and outputs in the row dtype, float copies of them for half/bf16, float temporaries.
    uint64_t queued = uint64_t(bufs.inputs + bufs.outputs) * s;
    uint64_t floats = (s == 4 ? 0 : uint64_t(bufs.inputs + (bufs.resultsInTemps ? 0 : bufs.outputs)) * 4) + uint64_t(bufs.temps) * 4;
    uint32_t buf = chip.ubBytes / (2 * queued + floats) >= kActAlign ? 2 : 1;
    uint64_t tile = chip.ubBytes / (buf * queued + floats) / kActAlign * kActAlign;
    // A last unit under one block would put 310P's window into the unit before it (maybe another core's).
    auto chunksOf = [&](uint64_t chunk) { return cols % chunk != 0 && cols % chunk < block ? cols / chunk : CeilDiv(cols, chunk); };
    // Rows are cut into the units that give the busiest core the least work, counting each tile's
    // fixed cost (every vector op's latency and barrier) as kActTileCost elements: about
    // cores/rows units a row when rows are fewer than cores, a few when rows do not split evenly
    // over the cores and tiles stay long (128 rows on 40 cores: 5 units a row, 16 per core).
    uint64_t chunk = cols, busiest = ~0ull;
    for (uint64_t cut = 1; cut <= cores && cut <= CeilDiv(cols, kActAlign); ++cut) {
        uint64_t len = RoundUp(CeilDiv(cols, cut), kActAlign);
        if (len > cols) len = cols;
        uint64_t perCore = CeilDiv(rows * chunksOf(len), cores);
        uint64_t work = perCore * (len + CeilDiv(len, tile) * kActTileCost);
        if (work < busiest) busiest = work, chunk = len;
    }
    uint64_t chunks = chunksOf(chunk);
    uint64_t units = rows * chunks;
    uint64_t used = units < cores ? units : cores;
    res.blockDim = forceBlockDim ? forceBlockDim : uint32_t(used);
    uint64_t last = cols - (chunks - 1) * chunk;  // the last unit of a row, with a short tail merged in
    uint64_t longest = last > chunk ? last : chunk;
    // As few tiles per unit as UB allows (each tile pays every vector op's latency and barrier),
    // of even length (no short last tile).
    tile = RoundUp(CeilDiv(longest, CeilDiv(longest, tile)), kActAlign);
    *out = AirfuseActTilingData{rows, cols, 2 * cols, chunk, units / used, uint32_t(chunks), uint32_t(units % used), uint32_t(used),
                                uint32_t(tile), buf, !chip.hasDataCopyPad, natural, approximate};
    return res;
}

}  // namespace airfuse::tiling
