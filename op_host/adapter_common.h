// Thin CANN tiling adapter helpers: platform -> ChipInfo, context shapes/dtypes -> core inputs.
// Compiled by CANN on an NPU host, and here against tests/kernels/cann_standin/.
#pragma once
#include <cstdint>
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/chip.h"
#include "tiling/tiling_common.h"

namespace airfuse::adapter {

// The chip as the runtime reports it: UB bytes and AIV count from the platform, the rest by arch.
inline bool ChipFromPlatform(gert::TilingContext* ctx, ChipInfo& chip) {
    platform_ascendc::PlatformAscendC platform(ctx->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    bool a2 = platform.GetSocVersion() == platform_ascendc::SocVersion::ASCEND910B;
    bool p310 = platform.GetSocVersion() == platform_ascendc::SocVersion::ASCEND310P;
    if (!a2 && !p310) return false;
    chip = ChipInfo{a2 ? "Ascend910B" : "Ascend310P", a2 ? "ascend910b" : "ascend310p", uint32_t(ub), platform.GetCoreNumAiv(), 8, a2, a2, a2, a2,
                   platform.GetLibApiWorkSpaceSize()};
    return true;
}

inline uint64_t LibApiWorkspace(gert::TilingContext* ctx) {
    return platform_ascendc::PlatformAscendC(ctx->GetPlatformInfo()).GetLibApiWorkSpaceSize();
}

// Leading dims flattened into rows; the last dim is the row.
inline void RowsCols(const gert::Shape& s, uint64_t& rows, uint32_t& cols) {
    rows = 1;
    for (size_t i = 0; i + 1 < s.GetDimNum(); ++i) rows *= uint64_t(s.GetDim(i));
    cols = s.GetDimNum() ? uint32_t(s.GetDim(s.GetDimNum() - 1)) : 1;
}

inline tiling::DType DTypeOf(gert::TilingContext* ctx, size_t input) {
    return tiling::DType(int32_t(ctx->GetInputDesc(input)->GetDataType()));
}

// The tiling struct of the strategy chosen, into the context's tiling buffer; false when the
// buffer is smaller than the struct (GetTilingData<T> gives nullptr).
template <typename T> inline bool WriteTiling(gert::TilingContext* ctx, const T& data) {
    T* out = ctx->GetTilingData<T>();
    if (out == nullptr) return false;
    *out = data;
    return true;
}

inline ge::graphStatus Finish(gert::TilingContext* ctx, const tiling::Result& r, bool syncAll) {
    if (!r.ok()) return ge::GRAPH_FAILED;
    ctx->SetBlockDim(r.blockDim);
    ctx->SetTilingKey(r.tilingKey);
    if (syncAll) ctx->SetScheduleMode(1);  // SyncAll needs every block resident at once
    ctx->GetWorkspaceSizes(1)[0] = r.workspaceBytes + LibApiWorkspace(ctx);
    return ge::GRAPH_SUCCESS;
}

}  // namespace airfuse::adapter
