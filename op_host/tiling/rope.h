// Tiling of AirfuseRope and AirfuseRopeGrad: shapes, dtypes, mode and chip -> tiling data.
// The UB plan mirrors the kernel's InitBuffer calls (kernels/rope_rows.h) exactly.
#pragma once
#include <cstring>
#include <vector>
#include "tiling_common.h"
#include "rope_tiling.h"

namespace airfuse::tiling {

inline constexpr uint64_t kRopeSteps = 4;

namespace detail {

// x's row dims collapsed against cos's (kernels/rope_tiling.h): size-1 dims of x dropped,
// neighbours with the same broadcast flag merged. Returns false when more than kRopeMaxDims remain.
inline bool CollapseRopeDims(const std::vector<int64_t>& x, const std::vector<int64_t>& table, AirfuseRopeTilingData* out) {
    out->numDims = 0;
    out->tableRows = out->groupRows = 1;
    uint64_t stride = 1;
    for (size_t k = x.size() - 1; k-- > 0;) {  // innermost row dim first, D excluded
        uint64_t n = uint64_t(x[k]);
        bool broadcast = table[k] == 1;
        if (n != 1) {
            uint32_t& m = out->numDims;
            if (m > 0 && (out->dimBroadcast[m - 1] != 0) == broadcast) {
                out->dimSize[m - 1] *= n;
            } else {
                if (m == kRopeMaxDims) return false;
                out->dimSize[m] = n;
                out->dimStride[m] = stride;
                out->dimBroadcast[m] = broadcast;
                ++m;
            }
            (broadcast ? out->groupRows : out->tableRows) *= n;
        }
        stride *= n;
    }
    // Collected innermost first; the kernel walks them outermost first.
    for (uint32_t i = 0, j = out->numDims; i + 1 < j; ++i, --j) {
        std::swap(out->dimSize[i], out->dimSize[j - 1]);
        std::swap(out->dimStride[i], out->dimStride[j - 1]);
        std::swap(out->dimBroadcast[i], out->dimBroadcast[j - 1]);
    }
    return true;
}

// With broadcast a step ends where its run along the innermost broadcast dim ends (rope_rows.h), so
// rows per step that do not divide the run leave a short step in every run (32 heads in steps of
// 26: 26 + 6), each paying a step's fixed vector latencies and barriers and a pipeline fill: cut
// the run into equal steps of at most `rows` instead (32 heads: 2 x 16).
inline uint64_t EvenStepRows(const AirfuseRopeTilingData& t, bool shared, uint64_t rows) {
    uint64_t run = 0;
    for (uint32_t k = 0; k < t.numDims; ++k)
        if (t.dimBroadcast[k]) run = t.dimSize[k];  // dims are outermost first: the last one is innermost
    if (!shared || run <= rows) return rows;
    return CeilDiv(run, CeilDiv(run, rows));
}

inline std::string DimsText(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace detail

// `op` is AirfuseRope or AirfuseRopeGrad (x is then dy); `mode` "half" or "interleave".
inline Result Rope(const char* op, const ChipInfo& chip, const std::vector<int64_t>& x, const std::vector<int64_t>& table, DType xType,
                   DType tableType, const char* mode, AirfuseRopeTilingData* out, uint32_t forceBlockDim = 0) {
    std::string o = op;
    if (x.empty()) return {o + ": x must have at least 1 dimension"};
    uint64_t d = uint64_t(x.back());
    if (d == 0 || d % 2 != 0) return {o + ": x's last dim must be even and non-zero, got " + std::to_string(d)};
    bool shapesOk = table.size() == x.size() && table.back() == x.back();
    for (size_t k = 0; shapesOk && k + 1 < x.size(); ++k) shapesOk = table[k] == 1 || table[k] == x[k];
    if (!shapesOk)
        return {o + ": cos/sin must have x's rank and last dim, every other dim x's or 1; x " + detail::DimsText(x) + ", cos/sin " +
                detail::DimsText(table)};
    bool half = std::strcmp(mode, "half") == 0;
    if (!half && std::strcmp(mode, "interleave") != 0) return {o + ": mode must be \"half\" or \"interleave\", got \"" + mode + "\""};
    for (DType t : {xType, tableType}) {
        std::string error = CheckChip(op, chip, t);
        if (!error.empty()) return {error};
    }
    std::string error = CheckForcedBlockDim(op, chip, forceBlockDim);
    if (!error.empty()) return {error};
    uint32_t s = SizeOf(xType), tc = SizeOf(tableType);
    bool aligned = !chip.hasDataCopyPad;
    // Without DataCopyPad rows move as whole 32 B blocks; a row that is not whole blocks would need
    // windows reaching into the neighbouring row (not written: head dims are multiples of 16).
    if (aligned && ((d * s) % 32 != 0 || (d * tc) % 32 != 0))
        return {o + ": on " + chip.socVersion + " (no DataCopyPad) the last dim times each dtype's size must be a multiple of 32 bytes, got " +
                std::to_string(d)};
    *out = AirfuseRopeTilingData{};
    if (!detail::CollapseRopeDims(x, table, out))
        return {o + ": more than " + std::to_string(kRopeMaxDims) + " alternating broadcast groups in x " + detail::DimsText(x) + " against cos " +
                detail::DimsText(table)};
    uint64_t items = out->tableRows * out->groupRows;
    if (items == 0) return {o + ": x must not be empty"};
    bool shared = out->groupRows > 1;  // several x rows per table row: tables load one row at a time
    bool backward = o == "AirfuseRopeGrad";
    Result res;
    // A core that starts inside a group reloads that group's slice: keep it under 1/25 of its rows.
    res.blockDim = BlockDimForRows(items, chip.vectorCores, shared ? 2ull * d * tc : 0, 2ull * d * s);
    if (forceBlockDim) res.blockDim = forceBlockDim;
    uint64_t rowCores = items < res.blockDim ? items : res.blockDim;
    uint64_t n = RoundUp(d, 32 / s), nt = RoundUp(d, 32 / tc);
    auto bytes = [&](uint32_t buf, uint64_t rpl) {
        uint64_t rt = shared ? 1 : rpl;
        // x and y queues, cos and sin queues, ext_/rot_/acc_/offsets_/signs_, cosF_ and sinF_ when used.
        uint64_t b = 2 * buf * RoundUp(rpl * n * s, 32) + 2 * buf * RoundUp(rt * nt * tc, 32) + 5 * RoundUp(rpl * n * 4, 32);
        b += (uint64_t(tc != 4) + uint64_t(tc != 4 || backward)) * RoundUp(rt * nt * 4, 32);
        return b;
    };
    // kRopeSteps steps per core, so that loads overlap compute and stores: a step's rows go through
    // each vector op together, so shorter steps cost only their ops' latency and barriers.
    uint64_t maxRows = CeilDiv(CeilDiv(items, rowCores), kRopeSteps);
    if (maxRows > kMaxBlockCount) maxRows = kMaxBlockCount;
    for (uint32_t buf = 2; buf >= 1 && out->bufferNum == 0; --buf) {
        if (bytes(buf, 1) > chip.ubBytes) continue;
        uint64_t lo = 1, hi = maxRows;
        while (lo < hi) {  // largest rowsPerLoop that fits
            uint64_t mid = (lo + hi + 1) / 2;
            if (bytes(buf, mid) <= chip.ubBytes) lo = mid; else hi = mid - 1;
        }
        out->bufferNum = buf;
        out->rowsPerLoop = uint32_t(detail::EvenStepRows(*out, shared, lo));
    }
    if (out->bufferNum == 0) return {o + ": a row of " + std::to_string(d) + " elements does not fit in " + std::to_string(chip.ubBytes) + " bytes of UB"};
    out->itemsPerCore = items / rowCores;
    out->itemsRemainder = items % rowCores;
    out->headDim = uint32_t(d);
    out->rowStride = uint32_t(n);
    out->rotateStep = half ? uint32_t(d / 2) : 1;
    out->alignedCopy = aligned;
    out->rowCores = uint32_t(rowCores);
    return res;
}

}  // namespace airfuse::tiling
