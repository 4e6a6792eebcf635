// One row per op of airfuse's op definitions (airfuse/ops, ALL_OPS): the torch op, its aclnn entry
// and phase 1's parameters in generated order (IR inputs, IR attrs, IR outputs). Everything else
// (argument checks, output shapes and dtypes) comes from the op's registered fake impl.
// tests/npu/test_binding_consistency.py checks every row against the op definitions and op_host's
// OpDef, and that every op has one.
#pragma once
#include "aclnn_call.h"

namespace airfuse::npu {

// ROW(torch op, aclnn entry, parameter kinds...): an X-macro so that the vendor check can expand
// the same rows into compile-time checks against opbuild's generated prototypes
// (vendor_check/aclnn_table_check.cpp).
#define AIRFUSE_NPU_OP_ROWS(ROW) \
    ROW(rms_norm, aclnnAirfuseRmsNorm, TensorIn, TensorIn, double, TensorOut, TensorOut) \
    ROW(rms_norm_backward, aclnnAirfuseRmsNormGrad, TensorIn, TensorIn, TensorIn, TensorIn, TensorOut, TensorOut) \
    ROW(add, aclnnAirfuseAdd, TensorIn, TensorIn, TensorOut) \
    ROW(add_rms_norm, aclnnAirfuseAddRmsNorm, TensorIn, TensorIn, TensorIn, double, TensorOut, TensorOut, TensorOut) \
    ROW(silu_mul, aclnnAirfuseSiluMul, TensorIn, TensorIn, TensorOut) \
    ROW(silu_mul_backward, aclnnAirfuseSiluMulGrad, TensorIn, TensorIn, TensorIn, TensorOut, TensorOut) \
    ROW(swiglu, aclnnAirfuseSwiglu, TensorIn, int64_t, TensorOut) \
    ROW(swiglu_backward, aclnnAirfuseSwigluGrad, TensorIn, TensorIn, int64_t, TensorOut) \
    ROW(rope, aclnnAirfuseRope, TensorIn, TensorIn, TensorIn, char*, TensorOut) \
    ROW(rope_backward, aclnnAirfuseRopeGrad, TensorIn, TensorIn, TensorIn, char*, TensorOut) \
    ROW(gelu, aclnnAirfuseGelu, TensorIn, char*, TensorOut) \
    ROW(gelu_backward, aclnnAirfuseGeluGrad, TensorIn, TensorIn, char*, TensorOut)

inline const std::vector<OpRow>& OpTable() {
#define AIRFUSE_NPU_TABLE_ROW(op, aclnn, ...) Row<__VA_ARGS__>(#op, #aclnn),
    static const std::vector<OpRow> rows = {AIRFUSE_NPU_OP_ROWS(AIRFUSE_NPU_TABLE_ROW)};
#undef AIRFUSE_NPU_TABLE_ROW
    return rows;
}

}  // namespace airfuse::npu
