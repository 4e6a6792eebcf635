// AirfuseRmsNormGrad's slices planner (kernels/rms_norm/grad_slices.h, tiling key
// kRmsNormGradSlicesKey): 910B with few rows a core.
#pragma once
#include <utility>
#include "rms_norm_rows.h"
#include "rms_norm/grad_slices_tiling.h"

namespace airfuse::tiling {
namespace detail {

// AirfuseRmsNormGrad on 910B with few rows a core: each core takes a slice of columns of every
// row (kernels/rms_norm/grad_slices.h) instead of whole rows. A row's sum then has a part
// on every core: each core stores its parts (4 bytes a row) and after one SyncAll reads every
// core's (4 x rows x cores bytes: 22 KB at 128 x 16384 bf16 on 910B2), where rows over cores
// store a float32 partial dgamma row per core and read a slice of all of them (8 x hidden bytes a
// core: 128 KB there, 43 cores of 3 rows); dgamma needs no exchange, a slice's column sums are
// whole on its core. Slices are whole 128 B of a row (ascendc_facts.md: GM is accessed in
// 128/256/512 B bursts), at most kMaxSliceCols (a level-0 repeat stride of float blocks), on at
// least half the cores (the vector work of a row is spread over the slices' cores only); a step
// is rowsPerLoop rows of the slice (a multiple of 8 rows: each step's sums pack into whole
// blocks), double-buffered. UB holds every core's partial sums: rows <= kSliceMaxRows. The last
// `held` steps keep x and dy as float in UB across the SyncAll, so pass 2 neither reads nor
// casts them again (SliceHeldSteps).
struct Slices {
    uint32_t cores = 0, cols = 0, stride = 0, stepRows = 0, redBytes = 0, rowVecBytes = 0, held = 0;
};

constexpr uint32_t kSliceUnitBytes = 128, kMaxSliceCols = 255 * 8;
constexpr uint64_t kSliceMaxRows = 256, kSliceMinStepRows = 16;

// The slices' steps of k rows, the last one what is left (grad_slices.h SliceSteps, SliceStep).
struct SliceSteps {
    uint64_t rows, k, count;
    SliceSteps(uint64_t rows_, uint64_t k_) : rows(rows_), k(k_), count(CeilDiv(rows_, k_)) {}
    uint64_t Row(uint64_t i) const { return i * k < rows ? i * k : rows; }
};

// Bytes of the slices' RowSums scratch for steps of k rows (tiling redBytes), at least a block.
inline uint64_t SliceRedBytes(uint32_t k, uint32_t c, uint32_t stride) {
    uint64_t red = RowSumsScratch(true, true, k, c, stride, 0) * 4;
    return red < 32 ? 32 : R32(red);
}

// Bytes of the slices' row scalars (tiling rowVecBytes, the kernel's SliceVec): a float a row,
// then a block per row of rstd and, unless every step is held, of dx's factor.
inline uint64_t SliceRowVecBytes(uint64_t rows, bool allHeld) {
    uint64_t r8 = RoundUp(rows, 8);
    return r8 * 4 + (allHeld ? 1 : 2) * r8 * 32;
}

// UB of the slices (grad_slices.h Init): per step of k rows, x and dy (two buffers), dx (two), two
// float buffers (a streamed step's x and dy, or two held steps' products; all held: every core's
// partial sums after pass 1, when larger), dgamma's terms, RowSums' scratch; once: gamma as float
// and its stage, dgamma's float sum, rstd and (some steps streamed) every core's partial sums,
// this core's, the row scalars (SliceRowVecBytes); the held steps' rows of x and dy as float.
inline uint64_t SliceBytes(uint32_t cores, uint64_t rows, uint32_t c, uint32_t stride, uint32_t k, uint32_t s, uint32_t g, uint64_t held) {
    SliceSteps st(rows, k);
    bool all = held == st.count;
    uint64_t r8 = RoundUp(rows, 8), tile = R32(uint64_t(k) * stride * s), step = R32(uint64_t(k) * stride * 4), parts = R32(cores * r8 * 4);
    uint64_t heldRows = rows - st.Row(st.count - held);
    return 4 * tile + 2 * tile + (all && parts > 2 * step ? parts : 2 * step) + step + SliceRedBytes(k, c, stride) + R32(stride * 4ull) +
           (g == 4 ? 0 : R32(uint64_t(c) * g)) + R32(stride * 4ull) + R32(r8 * 4 * (all ? 1 : 1 + cores)) + R32(r8 * 4) +
           SliceRowVecBytes(rows, all) + R32(2 * heldRows * stride * 4);
}

// Steps and held steps: every step held, in steps of the most rows that allows, from steps of >= 16
// KB of x and dy down (x and dy read once, pass 2 three vector passes a step; 910B bf16 128 x 4096:
// 16 rows of 256 B, 4 KB copies); else the steps that hold the most rows (at least the last step).
// {0, 0} when not even that fits.
inline std::pair<uint64_t, uint64_t> SliceHeldSteps(const ChipInfo& chip, uint32_t cores, uint64_t rows, uint32_t c, uint32_t stride, uint32_t s,
                                                    uint32_t g) {
    uint64_t k0 = RoundUp(CeilDiv(kMinCopyBytes, 2ull * c * s), 8);
    if (k0 >= rows) k0 = rows;
    auto fits = [&](uint64_t k, uint64_t held) { return SliceBytes(cores, rows, c, stride, uint32_t(k), s, g, held) <= chip.ubBytes; };
    // Every step starts at a whole block of the packed sums (8 rows): the kernel's vector
    // operands there (sums, the row factors and their Brcb) start 32 B-aligned (ascendc_facts.md
    // 1.3), and the parts of each group of steps fill their rows per core. So k is a multiple of 8
    // or every row (one step); 3 float rows of 79909 columns once got k = 2 (the twin refused the
    // launch: parts past their buffer).
    auto next = [](uint64_t k) { return k > 8 ? (k - 1) / 8 * 8 : 0; };
    for (uint64_t k = k0; k > 0; k = next(k)) {
        uint64_t count = SliceSteps(rows, k).count;
        if (fits(k, count)) return {k, count};
    }
    // Most rows held, over steps of >= 16 rows where one fits (fewer rows a step pay their
    // barriers twice as often: 910B3 bf16 128 x 8192, 16 rows a step 5.93 us, 8 rows 6.21 us).
    uint64_t best = 0, bestHeld = 0, bestRows = 0;
    for (uint64_t k = k0; k > 0 && (best == 0 || k >= kSliceMinStepRows); k = next(k)) {
        SliceSteps st(rows, k);
        uint64_t held = 0;
        while (held < st.count && fits(k, held + 1)) ++held;
        if (held > 0 && rows - st.Row(st.count - held) > bestRows) best = k, bestHeld = held, bestRows = rows - st.Row(st.count - held);
    }
    return {best, bestHeld};
}

inline Slices SliceColumns(const ChipInfo& chip, uint64_t rows, uint32_t cols, uint32_t s, uint32_t g) {
    uint32_t unit = kSliceUnitBytes / s;
    if (!chip.hasDataCopyPad || !chip.hardSyncAll || rows > kSliceMaxRows || cols < 2 * unit) return {};
    uint32_t c = uint32_t(RoundUp(CeilDiv(cols, chip.vectorCores), unit));
    if (c > kMaxSliceCols) return {};
    uint32_t cores = uint32_t(CeilDiv(cols, c)), stride = uint32_t(RoundUp(c, 32 / s));
    if (2 * cores < chip.vectorCores) return {};
    auto [k, held] = SliceHeldSteps(chip, cores, rows, c, stride, s, g);
    if (k == 0) return {};
    bool all = held == SliceSteps(rows, k).count;
    return {cores, c, stride, uint32_t(k), uint32_t(SliceRedBytes(uint32_t(k), c, stride)), uint32_t(SliceRowVecBytes(rows, all)), uint32_t(held)};
}

// The slices' tiling data and workspace (every core's partial row sums), when slices fit.
inline bool PlanSlices(const ChipInfo& chip, uint64_t rows, uint32_t cols, uint32_t s, uint32_t g, AirfuseRmsNormGradSlicesTilingData* out,
                       Result& res) {
    Slices sl = SliceColumns(chip, rows, cols, s, g);
    if (!sl.cores) return false;
    uint64_t r8 = RoundUp(rows, 8);
    res.blockDim = sl.cores;
    res.workspaceBytes = uint64_t(sl.cores) * r8 * 4;
    res.tilingKey = kRmsNormGradSlicesKey;
    *out = AirfuseRmsNormGradSlicesTilingData{};
    out->numRows = rows;
    out->numCols = cols;
    out->sliceCols = sl.cols;
    out->rowStride = sl.stride;
    out->rowsPerLoop = sl.stepRows;
    out->sliceHeld = sl.held;
    out->usedCores = sl.cores;
    out->wsStride = uint32_t(r8);
    out->redBytes = sl.redBytes;
    out->rowVecBytes = sl.rowVecBytes;
    out->avgFactor = 1.0f / float(cols);
    return true;
}

}  // namespace detail
}  // namespace airfuse::tiling
