// Pure C++, header-only tiling helpers: no CANN headers, so the twin launcher and the CANN adapter
// (compiled inside CANN's op project) share them unchanged.
#pragma once
#include <cstdint>
#include <string>
#include "chip.h"

namespace airfuse::tiling {

// ge::DataType numbering, so the CANN adapter can pass GetDataType() through unchanged.
enum class DType : int32_t { Float = 0, Float16 = 1, BFloat16 = 27 };

// Bytes per element; 0 for a dtype the kernels do not take.
inline uint32_t SizeOf(DType t) {
    switch (t) {
        case DType::Float: return 4;
        case DType::Float16:
        case DType::BFloat16: return 2;
    }
    return 0;
}

struct Result {
    std::string error;        // empty on success; otherwise names the op, argument and expectation
    uint32_t blockDim = 0;
    uint64_t workspaceBytes = 0;  // user workspace; the system part (ChipInfo) comes before it
    uint64_t tilingKey = 0;       // the kernel's TILING_KEY_IS branch, for an op with several strategies
    bool ok() const { return error.empty(); }
};

constexpr uint64_t RoundUp(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }
constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Per-core overhead (bytes every core reads besides its own rows, e.g. gamma) is kept under
// 1/kOverheadDivisor of the core's row traffic by giving each core enough rows.
constexpr uint64_t kOverheadDivisor = 25;
constexpr uint32_t kMaxBlockCount = 4095;  // DataCopyPad blockCount limit: rows per copy

inline uint32_t BlockDimForRows(uint64_t rows, uint32_t cores, uint64_t overheadPerCore, uint64_t bytesPerRow) {
    uint64_t minRows = overheadPerCore == 0 ? 1 : CeilDiv(overheadPerCore * kOverheadDivisor, bytesPerRow);
    uint64_t bd = CeilDiv(rows, minRows < 1 ? 1 : minRows);
    if (bd > cores) bd = cores;
    return uint32_t(bd < 1 ? 1 : bd);
}

// Rows per copy step of a core with `rowsPerCore` rows of `rowBytes`: enough steps that the
// double-buffered loads overlap compute and stores (one step per core overlaps nothing; the
// twin's cost model, benchmarks/kernel_time.py, shows the first load and last store exposed
// for a whole core's rows), but copies of at least 16 KB, which reach near-peak bandwidth
// (ascendc_facts.md, "Transfers of >= 16 KB per DataCopy").
constexpr uint64_t kStepsPerCore = 4;
constexpr uint64_t kMinCopyBytes = 16 * 1024;

inline uint64_t StepRows(uint64_t rowsPerCore, uint64_t rowBytes) {
    uint64_t r = CeilDiv(rowsPerCore, kStepsPerCore), floor = CeilDiv(kMinCopyBytes, rowBytes < 1 ? 1 : rowBytes);
    if (r < floor) r = floor;
    return r < rowsPerCore ? r : rowsPerCore;
}

// ReduceSum's documented sharedTmpBuffer size for `count` float elements, in bytes.
inline uint32_t ReduceTmpBytes(uint32_t count) {
    uint32_t first = count / 64 < 1 ? 1 : count / 64;
    return uint32_t(RoundUp(first, 8) * 4);
}

inline std::string CheckChip(const char* op, const ChipInfo& chip, DType dtype) {
    if (SizeOf(dtype) == 0) return std::string(op) + ": unsupported dtype code " + std::to_string(int(dtype));
    if (dtype == DType::BFloat16 && !chip.hasBf16) return std::string(op) + ": bfloat16 does not exist on " + chip.socVersion;
    return {};
}

// forceBlockDim (tests: every partition of rows over cores) must not exceed the vector cores.
inline std::string CheckForcedBlockDim(const char* op, const ChipInfo& chip, uint32_t forceBlockDim) {
    if (forceBlockDim > chip.vectorCores)
        return std::string(op) + ": block_dim " + std::to_string(forceBlockDim) + " exceeds the " + std::to_string(chip.vectorCores) +
               " vector cores of " + chip.socVersion;
    return {};
}

}  // namespace airfuse::tiling
