// AirfuseSwigluGrad: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: inputs dy (x's shape with dim halved), x; output dx (x's shape and dtype); attr dim Int -1. The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseSwigluGradTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "swiglu_grad", 1, airfuse::act::Attr::Dim);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseSwigluGradInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* dy = ctx->GetInputShape(0);
    const gert::Shape* x = ctx->GetInputShape(1);
    gert::Shape* dx = ctx->GetOutputShape(0);
    const int64_t* dim = ctx->GetAttrs()->GetAttrPointer<int64_t>(0);
    size_t d;
    if (dy == nullptr || x == nullptr || dx == nullptr || dim == nullptr || !airfuse::act::WrapDim(*dim, x->GetDimNum(), d) ||
        x->GetDim(d) % 2 != 0)
        return GRAPH_FAILED;
    gert::Shape half = *x;
    half.SetDim(d, x->GetDim(d) / 2);
    if (!(half == *dy)) return GRAPH_FAILED;
    *dx = *x;
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseSwigluGradInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 1); }
}  // namespace ge

namespace ops {
class AirfuseSwigluGrad : public OpDef {
public:
    explicit AirfuseSwigluGrad(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"dy", "x"}, {"dx"}, airfuse::act::OneDtype(2 + 1));
        this->Attr("dim").AttrType(OPTIONAL).Int(-1);
        this->SetInferShape(ge::AirfuseSwigluGradInferShape).SetInferDataType(ge::AirfuseSwigluGradInferDataType);
        this->AICore().SetTiling(optiling::AirfuseSwigluGradTiling);
    }
};
OP_ADD(AirfuseSwigluGrad);
}  // namespace ops
