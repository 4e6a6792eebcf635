// One row per op of airfuse's op definitions (airfuse/ops, ALL_OPS): the torch op, its aclnn entry
// and phase 1's parameters in generated order (IR inputs, IR attrs, IR outputs). Everything else
// (argument checks, output shapes and dtypes) comes from the op's registered fake impl.
// tests/npu/test_binding_consistency.py checks every row against the op definitions and op_host's
// OpDef, and that every op has one.
#pragma once
#include "aclnn_call.h"

namespace airfuse::npu {

inline const std::vector<OpRow>& OpTable() {
    static const std::vector<OpRow> rows = {
        Row<TensorIn, TensorIn, double, TensorOut, TensorOut>("rms_norm", "aclnnAirfuseRmsNorm"),
        Row<TensorIn, TensorIn, TensorIn, TensorIn, TensorOut, TensorOut>("rms_norm_backward", "aclnnAirfuseRmsNormGrad"),
        Row<TensorIn, TensorIn, TensorOut>("add", "aclnnAirfuseAdd"),
        Row<TensorIn, TensorIn, TensorIn, double, TensorOut, TensorOut, TensorOut>("add_rms_norm", "aclnnAirfuseAddRmsNorm"),
        Row<TensorIn, TensorIn, TensorOut>("silu_mul", "aclnnAirfuseSiluMul"),
        Row<TensorIn, TensorIn, TensorIn, TensorOut, TensorOut>("silu_mul_backward", "aclnnAirfuseSiluMulGrad"),
        Row<TensorIn, int64_t, TensorOut>("swiglu", "aclnnAirfuseSwiglu"),
        Row<TensorIn, TensorIn, int64_t, TensorOut>("swiglu_backward", "aclnnAirfuseSwigluGrad"),
        Row<TensorIn, TensorIn, TensorIn, char*, TensorOut>("rope", "aclnnAirfuseRope"),
        Row<TensorIn, TensorIn, TensorIn, char*, TensorOut>("rope_backward", "aclnnAirfuseRopeGrad"),
        Row<TensorIn, char*, TensorOut>("gelu", "aclnnAirfuseGelu"),
        Row<TensorIn, TensorIn, char*, TensorOut>("gelu_backward", "aclnnAirfuseGeluGrad"),
    };
    return rows;
}

}  // namespace airfuse::npu
