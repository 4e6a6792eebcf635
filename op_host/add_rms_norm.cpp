// AirfuseAddRmsNorm: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs x1, x2, gamma; outputs y (x1's dtype and shape), rstd (float32, x1.shape[:-1] + (1,)),
// x (x1's dtype and shape); attr epsilon Float 1e-6. The dtype combinations follow
// airfuse/ops/add_rms_norm.py (checked by tests/kernels/test_consistency.py).
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/rms_norm.h"

namespace optiling {
static ge::graphStatus AirfuseAddRmsNormTiling(gert::TilingContext* ctx) {
    airfuse::ChipInfo chip;
    if (!airfuse::adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    auto* tilingData = ctx->GetTilingData<AirfuseRmsNormTilingData>();
    if (tilingData == nullptr) return ge::GRAPH_FAILED;  // the op's tiling buffer is smaller than the struct
    uint64_t rows;
    uint32_t cols;
    airfuse::adapter::RowsCols(ctx->GetInputShape(0)->GetStorageShape(), rows, cols);
    const float* eps = ctx->GetAttrs()->GetAttrPointer<float>(0);
    auto r = airfuse::tiling::AddRmsNorm(chip, rows, cols, airfuse::adapter::DTypeOf(ctx, 0), airfuse::adapter::DTypeOf(ctx, 2),
                                         eps ? *eps : 1e-6f, tilingData);
    return airfuse::adapter::Finish(ctx, r, false);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseAddRmsNormInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x1 = ctx->GetInputShape(0);
    gert::Shape* y = ctx->GetOutputShape(0);
    gert::Shape* rstd = ctx->GetOutputShape(1);
    gert::Shape* x = ctx->GetOutputShape(2);
    if (x1 == nullptr || y == nullptr || rstd == nullptr || x == nullptr || x1->GetDimNum() == 0) return GRAPH_FAILED;
    *y = *x1;
    *x = *x1;
    *rstd = *x1;
    rstd->SetDim(x1->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseAddRmsNormInferDataType(gert::InferDataTypeContext* ctx) {
    ctx->SetOutputDataType(0, ctx->GetInputDataType(0));
    ctx->SetOutputDataType(1, DT_FLOAT);
    ctx->SetOutputDataType(2, ctx->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AirfuseAddRmsNorm : public OpDef {
public:
    explicit AirfuseAddRmsNorm(const char* name) : OpDef(name) {
        // x1, x2, gamma -> y, rstd, x
        airfuse::opdef::AddChipConfigs(
            *this, {"x1", "x2", "gamma"}, {"y", "rstd", "x"},
            {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16}});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6f);
        this->SetInferShape(ge::AirfuseAddRmsNormInferShape).SetInferDataType(ge::AirfuseAddRmsNormInferDataType);
        this->AICore().SetTiling(optiling::AirfuseAddRmsNormTiling);
    }
};
OP_ADD(AirfuseAddRmsNorm);
}  // namespace ops
