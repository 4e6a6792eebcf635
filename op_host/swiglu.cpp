// AirfuseSwiglu: prototype (OpDef), shape/dtype inference and the tiling adapter (op_host/act_common.h).
// IR: input x; output y (x's shape with dim halved, x's dtype); attr dim Int -1. The dtype combinations follow airfuse/ops (tests/kernels/test_consistency.py).
#include "act_common.h"

namespace optiling {
static ge::graphStatus AirfuseSwigluTiling(gert::TilingContext* ctx) {
    return airfuse::act::Tiling(ctx, "swiglu", 0, airfuse::act::Attr::Dim);
}
}  // namespace optiling

namespace ge {
static graphStatus AirfuseSwigluInferShape(gert::InferShapeContext* ctx) {
    const gert::Shape* x = ctx->GetInputShape(0);
    gert::Shape* y = ctx->GetOutputShape(0);
    const int64_t* dim = ctx->GetAttrs()->GetAttrPointer<int64_t>(0);
    size_t d;
    if (x == nullptr || y == nullptr || dim == nullptr || !airfuse::act::WrapDim(*dim, x->GetDimNum(), d) || x->GetDim(d) % 2 != 0)
        return GRAPH_FAILED;
    *y = *x;
    y->SetDim(d, x->GetDim(d) / 2);
    return GRAPH_SUCCESS;
}

static graphStatus AirfuseSwigluInferDataType(gert::InferDataTypeContext* ctx) { return airfuse::act::SameDataType(ctx, 1); }
}  // namespace ge

namespace ops {
class AirfuseSwiglu : public OpDef {
public:
    explicit AirfuseSwiglu(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"x"}, {"y"}, airfuse::act::OneDtype(1 + 1));
        this->Attr("dim").AttrType(OPTIONAL).Int(-1);
        this->SetInferShape(ge::AirfuseSwigluInferShape).SetInferDataType(ge::AirfuseSwigluInferDataType);
        this->AICore().SetTiling(optiling::AirfuseSwigluTiling);
    }
};
OP_ADD(AirfuseSwiglu);
}  // namespace ops
