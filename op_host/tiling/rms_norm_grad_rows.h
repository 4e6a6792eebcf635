// AirfuseRmsNormGrad's rows planner (kernels/rms_norm/grad_resident.h, tiling key
// kRmsNormGradResidentKey, and grad_split.h, kRmsNormGradSplitKey): rows over cores, a step's rows
// whole in UB or a row in column chunks, and how dgamma's column sum is shared (grad_rows.h).
#pragma once
#include <string>
#include "rms_norm_rows.h"
#include "rms_norm/grad_rows_tiling.h"

namespace airfuse::tiling {
namespace detail {

// AirfuseRmsNormGrad without a hardware SyncAll, or with rows split in chunks: dgamma split into
// slices of `cols` columns, one per core, each summed over every row in steps of `rows` rows (kernels/rms_norm/grad_rows.h
// ColumnDgamma). A slice is whole 32 B blocks of x and of gamma (strided DataCopy) and a step
// reuses the kernel's buffers: its x and dy in a step's input buffer (rows * cols <= rowsPerLoop *
// rowStride), its rstd in the rstd buffers (grown from rowsPerLoop to `rows` floats, rounded up to 8,
// while the plan's `spare` UB bytes allow: fewer, longer steps), the float products,
// the rstd Gather's offsets and its block per row in the float work buffers and the input buffer, the slice's
// float sum in the gamma buffer, its cast in the dx buffer. cores = 0 when no split of >= 2 slices fits,
// or for one row (nothing to share: the second read of x and dy costs more than it saves,
// benchmarks/kernel_time.py).
struct ColumnSplit {
    uint32_t cores, cols, rows;
};

inline ColumnSplit SplitColumns(uint64_t rows, uint32_t cols, uint32_t s, uint32_t g, const Plan& p, uint32_t maxCores, uint64_t spare) {
    uint32_t unit = 32 / (s < g ? s : g);
    if (cols % unit != 0 || maxCores < 2 || rows < 2) return {};
    uint32_t width = uint32_t(RoundUp(CeilDiv(cols, maxCores), unit)), cores = uint32_t(CeilDiv(cols, width));
    uint64_t inElems = uint64_t(p.rowsPerLoop) * p.rowStride, step = inElems / width;
    uint64_t rstd = RoundUp(p.rowsPerLoop, 8) + spare / (4 * p.bufferNum) / 8 * 8;  // floats R32 keeps within spare
    step = step < rstd ? step : rstd;
    step = step < rows ? step : rows;
    step = step < kMaxBlockCount ? step : kMaxBlockCount;
    bool fits = cores >= 2 && step >= 1 && width <= p.chunk && uint64_t(width) * g <= inElems * s && (cols - width) * s / 32 <= 65535;
    if (!fits) return {};
    return {cores, width, uint32_t(step)};
}

// UB of the row strategies' buffers (the kernel's RmsNormGradRows::Init), per plan.
struct GradRowsUb {
    uint64_t rows;
    uint32_t cols, s, g, e;
    bool aligned, natural;

    // 310P, rows under 32 B: dx and dgamma staged, a whole block.
    uint32_t Stage(uint32_t rpl) const {
        uint32_t dx = StageBytes(uint64_t(rpl) * cols, s), dgamma = StageBytes(cols, g);
        return natural ? (dx > dgamma ? dx : dgamma) : 0u;
    }
    // Resident rows whose float stride a repeat stride (uint8 blocks) holds, in steps of at least
    // kVectorRstdMinRows rows: a step's per-row scalars on the vector unit (grad_resident.h RowVec):
    // rstd, rstd / d and the row means, n8 floats each, then a block per row of rstd and of
    // rstd * mean (310P: and two Gather offset tables for the blocks); else 0: the scalar unit.
    uint32_t RowVecBytes(uint32_t rpl, uint32_t chunk, uint32_t stride) const {
        if (natural || chunk < cols || stride / 8 > 255 || rpl < kVectorRstdMinRows || rpl > 8 * 255) return 0;  // Brcb: a uint8 repeat count
        return uint32_t(RoundUp(rpl, 8)) * (aligned ? 35 : 19) * 4;
    }
    // red_: a step's row sums and their scratch; a split row's chunk sums a block each, then the scratch.
    uint32_t RedBytes(uint32_t rpl, uint32_t chunk, uint32_t stride, uint32_t f) const {
        uint64_t chunkSums = chunk < cols ? (CeilDiv(cols, chunk) - 1) * 32 : 0;
        return uint32_t(detail::RedBytes(!aligned, false, rpl, RowSpan(aligned, natural, cols, chunk, stride), stride, f) + chunkSums);
    }
    // Queues x and dy (one buffer), dx and rstd (310P: with the room of its Gather, kRstdGatherSlack);
    // gamma as float; resident: a step's x and dy as float (half/bf16; float: its products
    // instead), the dgamma accumulator and the row scalars; split: a chunk of x and dy as float and of gamma.
    uint64_t Bytes(uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) const {
        uint64_t f = FloatCols(aligned, chunk, s), tile = R32(uint64_t(rpl) * stride * s);
        uint64_t rstd = R32(rpl * 4ull) + (aligned ? kRstdGatherSlack * 4 : 0);
        uint64_t b = 3 * buf * tile + buf * rstd + R32(f * 4) + Stage(rpl) + RedBytes(rpl, chunk, stride, uint32_t(f));
        if (chunk < cols) return b + 2 * R32(f * 4) + buf * R32(f * g);
        return b + (s == 4 ? 1 : 2) * R32(uint64_t(rpl) * stride * 4) + R32(f * 4) + RowVecBytes(rpl, chunk, stride);
    }
    // Split rows summing dgamma in UB (splitAcc): gamma's row (float32 gamma; else its dtype and a
    // float chunk), acc_, a_ and b_, red_, rstd twice; plus x and dy whole twice and dx chunks
    // twice (rowResident), else chunks of x and dy twice and of dx twice.
    uint64_t SplitAccBytes(uint32_t chunk, bool rowResident) const {
        uint32_t stride = rowResident ? uint32_t(RoundUp(cols, e)) : chunk;
        uint64_t f = FloatCols(aligned, chunk, s);
        uint64_t common = (g == 4 ? R32(uint64_t(cols) * 4) : R32(uint64_t(cols) * g) + R32(f * 4)) + R32(uint64_t(cols) * 4) + 2 * R32(f * 4) +
                          RedBytes(1, chunk, stride, uint32_t(f)) + 2 * R32(4);
        if (rowResident) return common + 4 * R32(uint64_t(stride) * s) + 2 * R32(uint64_t(chunk) * s);
        return common + 6 * R32(uint64_t(chunk) * s);
    }
};

// Split rows on 910B: chunks of at least kMinSplitAccChunk columns (below it a chunk's fixed
// costs, barriers and latencies, grow, as in ResidentChunks).
constexpr uint32_t kMinSplitAccChunk = 1024;

struct SplitAccPlan {
    uint32_t chunk = 0;
    bool rowResident = false;
};

// Split rows on 910B (and rows that fit only one at a time on one buffer, when a core has
// several): their dgamma terms summed in a float32 row of UB and gamma kept whole, so the rows'
// second read comes from L2 where the column split would read x and dy again from HBM. The largest
// chunk (a multiple of 64 under cols, >= kMinSplitAccChunk) whose UB fits, evened out over as
// many chunks; rowResident kept while its chunks are at least half as long as chunks read twice
// (each chunk costs its barriers and latencies twice a row). chunk 0 if none fits.
inline SplitAccPlan PlanSplitAcc(const ChipInfo& chip, const GradRowsUb& ub) {
    auto chunkFor = [&](bool rowResident) -> uint32_t {
        for (uint64_t chunk = RoundUp(ub.cols, 64) - 64; chunk >= kMinSplitAccChunk; chunk -= 64)
            if (ub.SplitAccBytes(uint32_t(chunk), rowResident) <= chip.ubBytes)
                return uint32_t(RoundUp(CeilDiv(ub.cols, CeilDiv(ub.cols, chunk)), 64));
        return 0;
    };
    uint32_t r = chunkFor(true), k = chunkFor(false);
    bool resident = r >= kMinSplitAccChunk && 2 * r >= k;
    uint32_t chunk = resident ? r : k;
    if (chunk < kMinSplitAccChunk || chunk >= ub.cols) return {};
    return {chunk, resident};
}

// The row strategies' tiling: every core as soon as there are rows for it (per-row vector and
// scalar work, not bytes, bounds a core); on 910B the fewest cores that keep the busiest core's
// row count, and resident steps evened out over a core's rows (the first load and the last store
// exposed are the shorter). dgamma: partial rows after the hardware SyncAll (910B), split rows
// summing theirs in UB (PlanSplitAcc) or, when that does not fit, by columns (their partial rows
// would go through GM row by row); on 310P by columns (no hardware SyncAll; its software one
// needs counters zeroed before the launch, [ADK] impl/basic_api/dav_m200/kernel_operator_sync_impl.h
// SoftSyncAllImpl, which op_host cannot give; its atomic add on GM copies would need dgamma zeroed
// first, the same dependency), or one core does everything.
inline Result PlanGradRows(const ChipInfo& chip, uint64_t rows, uint32_t cols, uint32_t s, uint32_t g, AirfuseRmsNormGradRowsTilingData* out,
                           uint32_t forceBlockDim, Result res) {
    const char* op = "AirfuseRmsNormGrad";
    uint32_t e = 32 / s;
    bool aligned = !chip.hasDataCopyPad;
    GradRowsUb ub{rows, cols, s, g, e, aligned, aligned && cols < e};
    uint64_t minRows = ub.natural ? CeilDiv(e, cols) : 1;
    auto bytes = [&](uint32_t buf, uint32_t rpl, uint32_t chunk, uint32_t stride) { return ub.Bytes(buf, rpl, chunk, stride); };
    uint32_t rowCores;
    Plan p = PlanRows(op, chip, rows, cols, e, forceBlockDim, minRows, bytes, res, rowCores);
    if (!res.ok()) return res;
    if (chip.hardSyncAll && !forceBlockDim) {
        res.blockDim = uint32_t(CeilDiv(rows, CeilDiv(rows, rowCores)));
        Partition(chip, rows, 0, minRows, res, rowCores);
    }
    uint64_t perCore = CeilDiv(rows, rowCores), steps = CeilDiv(perCore, p.rowsPerLoop);
    if (chip.hardSyncAll && p.chunk == cols && steps > 1 && steps <= kStepsPerCore) p.rowsPerLoop = uint32_t(CeilDiv(perCore, steps));
    SplitAccPlan acc;
    if (chip.hardSyncAll && (p.chunk < cols || (p.bufferNum == 1 && p.rowsPerLoop == 1 && rows > rowCores))) acc = PlanSplitAcc(chip, ub);
    if (acc.chunk) p = {2, 1, acc.chunk, acc.rowResident ? uint32_t(RoundUp(cols, e)) : acc.chunk};
    ColumnSplit split{};
    if (!chip.hardSyncAll || (p.chunk < cols && !acc.chunk)) {
        // 910B: the rstd buffers' Gather room (kRstdGatherSlack) comes out of the spare UB.
        uint64_t used = ub.Bytes(p.bufferNum, p.rowsPerLoop, p.chunk, p.rowStride) + (aligned ? 0 : p.bufferNum * kRstdGatherSlack * 4ull);
        if (used <= chip.ubBytes) split = SplitColumns(rows, cols, s, g, p, forceBlockDim ? forceBlockDim : chip.vectorCores, chip.ubBytes - used);
        if (split.cores == 0 && !chip.hardSyncAll) {
            if (forceBlockDim > 1)
                return {std::string(op) + ": block_dim " + std::to_string(forceBlockDim) + " needs a hardware SyncAll or dgamma split by " +
                        "columns (x's last dim a multiple of 32 bytes, >= 2 slices), which " + chip.socVersion + " and " +
                        std::to_string(cols) + " columns do not give; it runs on one core"};
            res.blockDim = 1;
            p = PlanRows(op, chip, rows, cols, e, 1, minRows, bytes, res, rowCores);
            if (!res.ok()) return res;
        } else if (split.cores > res.blockDim) {
            res.blockDim = split.cores;  // cores past rowCores only sum their columns
        }
    }
    uint32_t wsStride = aligned ? uint32_t(RoundUp(cols, e)) : cols;  // 310P: partial rows 32 B-aligned, in the windowed layout
    res.workspaceBytes = split.cores ? 0 : uint64_t(rowCores) * wsStride * sizeof(float);
    res.tilingKey = p.chunk == cols ? kRmsNormGradResidentKey : kRmsNormGradSplitKey;
    *out = AirfuseRmsNormGradRowsTilingData{};
    FillRowFields(out, rows, cols, p, rowCores, aligned, s);
    out->usedCores = rowCores;
    out->wsStride = wsStride;
    out->outStageBytes = ub.Stage(p.rowsPerLoop);
    out->workCols = p.rowsPerLoop * p.rowStride;
    out->redBytes = ub.RedBytes(p.rowsPerLoop, p.chunk, p.rowStride, out->floatCols);
    out->colCores = split.cores;
    out->colCols = split.cols;
    out->colRows = split.rows;
    out->splitAcc = acc.chunk != 0;
    out->rowVecBytes = ub.RowVecBytes(p.rowsPerLoop, p.chunk, p.rowStride);
    out->rowResident = acc.rowResident;
    return res;
}

}  // namespace detail
}  // namespace airfuse::tiling
