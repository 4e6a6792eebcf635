// AirfuseRope: prototype (OpDef), shape/dtype inference and the tiling adapter (rope_common.h).
// IR: inputs x, cos, sin; output y (x's shape and dtype); attr mode Str "half" ("half" or
// "interleave", airfuse/ops/rope.py; checked by tests/kernels/test_consistency.py).
#include "rope_common.h"

namespace optiling {
static ge::graphStatus AirfuseRopeTiling(gert::TilingContext* ctx) { return airfuse::adapter::RopeTiling(ctx, "AirfuseRope"); }
}  // namespace optiling

namespace ops {
class AirfuseRope : public OpDef {
public:
    explicit AirfuseRope(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"x", "cos", "sin"}, {"y"}, airfuse::adapter::RopeCombos());
        this->Attr("mode").AttrType(OPTIONAL).String("half");
        this->SetInferShape(airfuse::adapter::RopeInferShape).SetInferDataType(airfuse::adapter::RopeInferDataType);
        this->AICore().SetTiling(optiling::AirfuseRopeTiling);
    }
};
OP_ADD(AirfuseRope);
}  // namespace ops
