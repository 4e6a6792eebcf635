// AirfuseAdd: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs x, y; output z; same shape and dtype (float32, float16, bfloat16).
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/add.h"

namespace optiling {
static ge::graphStatus AirfuseAddTiling(gert::TilingContext* ctx) {
    airfuse::ChipInfo chip;
    if (!airfuse::adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    auto* tilingData = ctx->GetTilingData<AirfuseAddTilingData>();
    if (tilingData == nullptr) return ge::GRAPH_FAILED;  // the op's tiling buffer is smaller than the struct
    uint64_t elems = uint64_t(ctx->GetInputShape(0)->GetStorageShape().GetShapeSize());
    auto r = airfuse::tiling::Add(chip, elems, airfuse::adapter::DTypeOf(ctx, 0), tilingData);
    return airfuse::adapter::Finish(ctx, r, false);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseAddInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(0);
    const gert::Shape* y = ctx->GetInputShape(1);
    gert::Shape* z = ctx->GetOutputShape(0);
    if (x == nullptr || y == nullptr || z == nullptr || !(*x == *y)) return GRAPH_FAILED;
    *z = *x;
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseAddInferDataType(gert::InferDataTypeContext* ctx) {
    ctx->SetOutputDataType(0, ctx->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AirfuseAdd : public OpDef {
public:
    explicit AirfuseAdd(const char* name) : OpDef(name) {
        // x, y -> z
        airfuse::opdef::AddChipConfigs(*this, {"x", "y"}, {"z"},
                                       {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
                                        {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16},
                                        {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16}});
        this->SetInferShape(ge::AirfuseAddInferShape).SetInferDataType(ge::AirfuseAddInferDataType);
        this->AICore().SetTiling(optiling::AirfuseAddTiling);
    }
};
OP_ADD(AirfuseAdd);
}  // namespace ops
