// AirfuseSiluMul: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: inputs a, b; output y; one shape and dtype. The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseSiluMulTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "silu_mul", 0, airfuse::act::Attr::None);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseSiluMulInferShape(gert::InferShapeContext* ctx) {
    return airfuse::act::SameShapes(ctx, 2, 1, 0);
}

static graphStatus AirfuseSiluMulInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 1); }
}  // namespace ge

namespace ops {
class AirfuseSiluMul : public OpDef {
public:
    explicit AirfuseSiluMul(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"a", "b"}, {"y"}, airfuse::act::OneDtype(2 + 1));
        this->SetInferShape(ge::AirfuseSiluMulInferShape).SetInferDataType(ge::AirfuseSiluMulInferDataType);
        this->AICore().SetTiling(optiling::AirfuseSiluMulTiling);
    }
};
OP_ADD(AirfuseSiluMul);
}  // namespace ops
