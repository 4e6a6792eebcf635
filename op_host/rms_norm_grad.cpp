// AirfuseRmsNormGrad: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs dy, x, rstd, gamma; outputs dx (x's dtype and shape), dgamma (gamma's dtype and shape).
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/rms_norm_grad.h"

namespace optiling {
static ge::graphStatus AirfuseRmsNormGradTiling(gert::TilingContext* ctx) {
    airfuse::ChipInfo chip;
    if (!airfuse::adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    uint64_t rows;
    uint32_t cols;
    airfuse::adapter::RowsCols(ctx->GetInputShape(1)->GetStorageShape(), rows, cols);
    airfuse::tiling::RmsNormGradTilings tilings;
    auto r = airfuse::tiling::RmsNormGrad(chip, rows, cols, airfuse::adapter::DTypeOf(ctx, 1), airfuse::adapter::DTypeOf(ctx, 3),
                                          &tilings);
    if (!r.ok()) return ge::GRAPH_FAILED;
    // The chosen strategy's struct (a tiling buffer smaller than it fails the op).
    bool written = r.tilingKey == kRmsNormGradSlicesKey ? airfuse::adapter::WriteTiling(ctx, tilings.slices)
                                                       : airfuse::adapter::WriteTiling(ctx, tilings.rows);
    if (!written) return ge::GRAPH_FAILED;
    return airfuse::adapter::Finish(ctx, r, r.blockDim > 1);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseRmsNormGradInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(1);
    const gert::Shape* gamma = ctx->GetInputShape(3);
    gert::Shape* dx = ctx->GetOutputShape(0);
    gert::Shape* dgamma = ctx->GetOutputShape(1);
    if (x == nullptr || gamma == nullptr || dx == nullptr || dgamma == nullptr) return GRAPH_FAILED;
    *dx = *x;
    *dgamma = *gamma;
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseRmsNormGradInferDataType(gert::InferDataTypeContext* ctx) {
    ctx->SetOutputDataType(0, ctx->GetInputDataType(1));
    ctx->SetOutputDataType(1, ctx->GetInputDataType(3));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AirfuseRmsNormGrad : public OpDef {
public:
    explicit AirfuseRmsNormGrad(const char* name) : OpDef(name) {
        // dy, x, rstd, gamma -> dx, dgamma
        airfuse::opdef::AddChipConfigs(
            *this, {"dy", "x", "rstd", "gamma"}, {"dx", "dgamma"},
            {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT}});
        this->SetInferShape(ge::AirfuseRmsNormGradInferShape).SetInferDataType(ge::AirfuseRmsNormGradInferDataType);
        this->AICore().SetTiling(optiling::AirfuseRmsNormGradTiling);
    }
};
OP_ADD(AirfuseRmsNormGrad);
}  // namespace ops
