// AirfuseGelu: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: input x; output y (x's shape and dtype); attr approximate Str "tanh" (or "none"). The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseGeluTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "gelu", 0, airfuse::act::Attr::Approximate);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseGeluInferShape(gert::InferShapeContext* ctx) {
    return airfuse::act::SameShapes(ctx, 1, 1, 0);
}

static graphStatus AirfuseGeluInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 1); }
}  // namespace ge

namespace ops {
class AirfuseGelu : public OpDef {
public:
    explicit AirfuseGelu(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"x"}, {"y"}, airfuse::act::OneDtype(1 + 1));
        this->Attr("approximate").AttrType(OPTIONAL).String("tanh");
        this->SetInferShape(ge::AirfuseGeluInferShape).SetInferDataType(ge::AirfuseGeluInferDataType);
        this->AICore().SetTiling(optiling::AirfuseGeluTiling);
    }
};
OP_ADD(AirfuseGelu);
}  // namespace ops
