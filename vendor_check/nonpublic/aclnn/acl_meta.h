// Stands for CANN's aclnn/acl_meta.h (nnopbase, not in the open-source repositories), which every
// header opbuild generates includes: the opaque aclnn handle types, aclnnStatus and aclrtStream,
// as CANN's documentation of the aclnn C API declares them. Written here apart from the
// binding's csrc/npu/aclnn_abi.h on purpose: a translation unit including both (the vendor
// check's table check) refuses to compile if the binding declares any of them differently.
#pragma once
#include <cstdint>

extern "C" {
typedef int32_t aclnnStatus;
typedef void* aclrtStream;
struct aclOpExecutor;
struct aclTensor;
struct aclScalar;
struct aclIntArray;
struct aclFloatArray;
struct aclBoolArray;
struct aclTensorList;
struct aclScalarList;
}
