// What AirfuseRmsNorm and AirfuseAddRmsNorm share on the host: one tiling adapter (both normalize
// rows of their first input with a gamma and an epsilon attr, into the tiling struct of the strategy
// their selector chose, op_host/tiling/rms_norm.h) and
// one shape/dtype rule (every output has input 0's shape and dtype except rstd, output 1, which is
// float32 with the last dim 1).
#pragma once
#include "adapter_common.h"
#include "tiling/rms_norm.h"

namespace airfuse::rms_norm_host {

using RowTiling = tiling::Result (*)(const ChipInfo&, uint64_t, uint32_t, tiling::DType, tiling::DType, float,
                                     tiling::RmsNormTilings*, uint32_t);
constexpr size_t kRstdOutput = 1;

template <RowTiling Plan, size_t GammaInput>
ge::graphStatus Tiling(gert::TilingContext* ctx) {
    ChipInfo chip;
    if (!adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    uint64_t rows;
    uint32_t cols;
    adapter::RowsCols(ctx->GetInputShape(0)->GetStorageShape(), rows, cols);
    const float* eps = ctx->GetAttrs()->GetAttrPointer<float>(0);
    tiling::RmsNormTilings tilings;
    auto r = Plan(chip, rows, cols, adapter::DTypeOf(ctx, 0), adapter::DTypeOf(ctx, GammaInput), eps ? *eps : 1e-6f, &tilings, 0);
    if (!r.ok()) return ge::GRAPH_FAILED;
    // The chosen strategy's struct (a tiling buffer smaller than it fails the op).
    bool written = r.tilingKey == kRmsNormResidentKey ? adapter::WriteTiling(ctx, tilings.resident) : adapter::WriteTiling(ctx, tilings.chunks);
    if (!written) return ge::GRAPH_FAILED;
    return adapter::Finish(ctx, r, false);
}

template <size_t Outputs>
ge::graphStatus InferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(0);
    if (x == nullptr || x->GetDimNum() == 0) return ge::GRAPH_FAILED;
    for (size_t i = 0; i < Outputs; ++i) {
        gert::Shape* out = ctx->GetOutputShape(i);
        if (out == nullptr) return ge::GRAPH_FAILED;
        *out = *x;
    }
    ctx->GetOutputShape(kRstdOutput)->SetDim(x->GetDimNum() - 1, 1);
    return ge::GRAPH_SUCCESS;
}

template <size_t Outputs>
ge::graphStatus InferDataType(gert::InferDataTypeContext* ctx) {
    for (size_t i = 0; i < Outputs; ++i) ctx->SetOutputDataType(i, i == kRstdOutput ? ge::DT_FLOAT : ctx->GetInputDataType(0));
    return ge::GRAPH_SUCCESS;
}

}  // namespace airfuse::rms_norm_host
