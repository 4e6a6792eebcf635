// AirfuseAddRmsNorm: prototype (OpDef), shape/dtype inference and the tiling adapter.
// IR: inputs x1, x2, gamma; outputs y (x1's dtype and shape), rstd (float32, x1.shape[:-1] + (1,)),
// x (x1's dtype and shape); attr epsilon Float 1e-6. The dtype combinations follow
// airfuse/ops/add_rms_norm.py (checked by tests/kernels/test_consistency.py).
#include "opdef_common.h"
#include "rms_norm_common.h"

namespace ops {
class AirfuseAddRmsNorm : public OpDef {
public:
    explicit AirfuseAddRmsNorm(const char* name) : OpDef(name) {
        // x1, x2, gamma -> y, rstd, x
        airfuse::opdef::AddChipConfigs(
            *this, {"x1", "x2", "gamma"}, {"y", "rstd", "x"},
            {{ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16},
             {ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT16},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16},
             {ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_FLOAT, ge::DT_BF16}});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6f);
        this->SetInferShape(airfuse::rms_norm_host::InferShape<3>)
            .SetInferDataType(airfuse::rms_norm_host::InferDataType<3>);
        this->AICore().SetTiling(airfuse::rms_norm_host::Tiling<airfuse::tiling::AddRmsNorm, 2>);
    }
};
OP_ADD(AirfuseAddRmsNorm);
}  // namespace ops
