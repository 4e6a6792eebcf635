// What AirfuseRope and AirfuseRopeGrad share on the host: the tiling adapter (x's or dy's shape,
// cos's shape, dtypes and the mode attr into the tiling core), shape/dtype inference (the output
// is input 0's shape and dtype) and the dtype table (airfuse/ops/rope.py: tables in x's dtype or
// float32).
#pragma once
#include <vector>
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/rope.h"

namespace airfuse::adapter {

inline std::vector<int64_t> Dims(const gert::Shape& s) {
    std::vector<int64_t> d;
    for (size_t i = 0; i < s.GetDimNum(); ++i) d.push_back(s.GetDim(i));
    return d;
}

inline ge::graphStatus RopeTiling(gert::TilingContext* ctx, const char* op) {
    ChipInfo chip;
    if (!ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    auto* tilingData = ctx->GetTilingData<AirfuseRopeTilingData>();
    if (tilingData == nullptr) return ge::GRAPH_FAILED;  // the op's tiling buffer is smaller than the struct
    const char* mode = ctx->GetAttrs()->GetStr(0);
    auto r = tiling::Rope(op, chip, Dims(ctx->GetInputShape(0)->GetStorageShape()), Dims(ctx->GetInputShape(1)->GetStorageShape()),
                          DTypeOf(ctx, 0), DTypeOf(ctx, 1), mode ? mode : "half", tilingData);
    return Finish(ctx, r, false);
}

inline ge::graphStatus RopeInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(0);
    gert::Shape* y = ctx->GetOutputShape(0);
    if (x == nullptr || y == nullptr || x->GetDimNum() == 0) return ge::GRAPH_FAILED;
    *y = *x;
    return ge::GRAPH_SUCCESS;
}

inline ge::graphStatus RopeInferDataType(gert::InferDataTypeContext* ctx) {
    ctx->SetOutputDataType(0, ctx->GetInputDataType(0));
    return ge::GRAPH_SUCCESS;
}

// Rows: (input 0, cos, sin, output) dtypes, in the op definition's order.
inline const opdef::Combos& RopeCombos() {
    static const opdef::Combos combos = {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
                                         {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16},
                                         {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT16},
                                         {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16},
                                         {ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16}};
    return combos;
}

}  // namespace airfuse::adapter
