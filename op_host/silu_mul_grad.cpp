// AirfuseSiluMulGrad: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: inputs dy, a, b; outputs da, db; one shape and dtype. The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseSiluMulGradTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "silu_mul_grad", 1, airfuse::act::Attr::None);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseSiluMulGradInferShape(gert::InferShapeContext* ctx) {
    return airfuse::act::SameShapes(ctx, 3, 2, 1);
}

static graphStatus AirfuseSiluMulGradInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 2); }
}  // namespace ge

namespace ops {
class AirfuseSiluMulGrad : public OpDef {
public:
    explicit AirfuseSiluMulGrad(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"dy", "a", "b"}, {"da", "db"}, airfuse::act::OneDtype(3 + 2));
        this->SetInferShape(ge::AirfuseSiluMulGradInferShape).SetInferDataType(ge::AirfuseSiluMulGradInferDataType);
        this->AICore().SetTiling(optiling::AirfuseSiluMulGradTiling);
    }
};
OP_ADD(AirfuseSiluMulGrad);
}  // namespace ops
