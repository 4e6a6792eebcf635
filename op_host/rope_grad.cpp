// AirfuseRopeGrad: prototype (OpDef), shape/dtype inference and the tiling adapter (rope_common.h).
// IR: inputs dy, cos, sin; output dx (dy's shape and dtype); attr mode Str "half" ("half" or
// "interleave", airfuse/ops/rope.py; checked by tests/kernels/test_consistency.py).
#include "rope_common.h"

namespace optiling {
static ge::graphStatus AirfuseRopeGradTiling(gert::TilingContext* ctx) { return airfuse::adapter::RopeTiling(ctx, "AirfuseRopeGrad"); }
}  // namespace optiling

namespace ops {
class AirfuseRopeGrad : public OpDef {
public:
    explicit AirfuseRopeGrad(const char* name) : OpDef(name) {
        airfuse::opdef::AddChipConfigs(*this, {"dy", "cos", "sin"}, {"dx"}, airfuse::adapter::RopeCombos());
        this->Attr("mode").AttrType(OPTIONAL).String("half");
        this->SetInferShape(airfuse::adapter::RopeInferShape).SetInferDataType(airfuse::adapter::RopeInferDataType);
        this->AICore().SetTiling(optiling::AirfuseRopeGradTiling);
    }
};
OP_ADD(AirfuseRopeGrad);
}  // namespace ops
