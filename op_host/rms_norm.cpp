// AirfuseRmsNorm: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs x, gamma; outputs y (x's dtype, x's shape), rstd (float32, x.shape[:-1] + (1,));
// attr epsilon Float 1e-6. The dtype combinations follow airfuse/ops/rms_norm.py (checked by
// tests/kernels/test_consistency.py).
#include "opdef_common.h"
#include "rms_norm_common.h"

namespace ops {
class AirfuseRmsNorm : public OpDef {
public:
    explicit AirfuseRmsNorm(const char* name) : OpDef(name) {
        // x, gamma -> y, rstd
        airfuse::opdef::AddChipConfigs(*this, {"x", "gamma"}, {"y", "rstd"},
                                       {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
                                        {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT},
                                        {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT},
                                        {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT},
                                        {ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT}});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6f);
        this->SetInferShape(airfuse::rms_norm_host::InferShape<2>)
            .SetInferDataType(airfuse::rms_norm_host::InferDataType<2>);
        this->AICore().SetTiling(airfuse::rms_norm_host::Tiling<airfuse::tiling::RmsNorm, 1>);
    }
};
OP_ADD(AirfuseRmsNorm);
}  // namespace ops
