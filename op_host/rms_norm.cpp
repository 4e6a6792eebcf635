// AirfuseRmsNorm: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs x, gamma; outputs y (x's dtype, x's shape), rstd (float32, x.shape[:-1] + (1,));
// attr epsilon Float 1e-6. The dtype combinations follow airfuse/ops/rms_norm.py (checked by
// tests/kernels/test_consistency.py).
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/rms_norm.h"

namespace optiling {
static ge::graphStatus AirfuseRmsNormTiling(gert::TilingContext* ctx) {
    airfuse::ChipInfo chip;
    if (!airfuse::adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    auto* tilingData = ctx->GetTilingData<AirfuseRmsNormTilingData>();
    if (tilingData == nullptr) return ge::GRAPH_FAILED;  // the op's tiling buffer is smaller than the struct
    uint64_t rows;
    uint32_t cols;
    airfuse::adapter::RowsCols(ctx->GetInputShape(0)->GetStorageShape(), rows, cols);
    const float* eps = ctx->GetAttrs()->GetAttrPointer<float>(0);
    auto r = airfuse::tiling::RmsNorm(chip, rows, cols, airfuse::adapter::DTypeOf(ctx, 0), airfuse::adapter::DTypeOf(ctx, 1),
                                      eps ? *eps : 1e-6f, tilingData);
    return airfuse::adapter::Finish(ctx, r, false);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseRmsNormInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(0);
    gert::Shape* y = ctx->GetOutputShape(0);
    gert::Shape* rstd = ctx->GetOutputShape(1);
    if (x == nullptr || y == nullptr || rstd == nullptr || x->GetDimNum() == 0) return GRAPH_FAILED;
    *y = *x;
    *rstd = *x;
    rstd->SetDim(x->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseRmsNormInferDataType(gert::InferDataTypeContext* ctx) {
    ctx->SetOutputDataType(0, ctx->GetInputDataType(0));
    ctx->SetOutputDataType(1, DT_FLOAT);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AirfuseRmsNorm : public OpDef {
public:
    explicit AirfuseRmsNorm(const char* name) : OpDef(name) {
        // x, gamma -> y, rstd
        airfuse::opdef::AddChipConfigs(*this, {"x", "gamma"}, {"y", "rstd"},
                                       {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
                                        {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT},
                                        {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT},
                                        {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT},
                                        {ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT}});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6f);
        this->SetInferShape(ge::AirfuseRmsNormInferShape).SetInferDataType(ge::AirfuseRmsNormInferDataType);
        this->AICore().SetTiling(optiling::AirfuseRmsNormTiling);
    }
};
OP_ADD(AirfuseRmsNorm);
}  // namespace ops
