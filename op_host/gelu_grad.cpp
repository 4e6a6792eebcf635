// AirfuseGeluGrad: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: inputs dy, x; output dx (x's shape and dtype); attr approximate Str "tanh" (or "none"). The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseGeluGradTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "gelu_grad", 1, airfuse::act::Attr::Approximate);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseGeluGradInferShape(gert::InferShapeContext* ctx) {
    return airfuse::act::SameShapes(ctx, 2, 1, 1);
}

static graphStatus AirfuseGeluGradInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 1); }
}  // namespace ge

namespace ops {
class AirfuseGeluGrad : public OpDef {
public:
    explicit AirfuseGeluGrad(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"dy", "x"}, {"dx"}, airfuse::act::OneDtype(2 + 1));
        this->Attr("approximate").AttrType(OPTIONAL).String("tanh");
        this->SetInferShape(ge::AirfuseGeluGradInferShape).SetInferDataType(ge::AirfuseGeluGradInferDataType);
        this->AICore().SetTiling(optiling::AirfuseGeluGradTiling);
    }
};
OP_ADD(AirfuseGeluGrad);
}  // namespace ops
