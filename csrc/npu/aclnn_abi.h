// The slice of CANN's aclnn C ABI the binding uses, declared here so that neither flavour needs
// CANN headers: torch_npu's wheel does not ship aclnn/acl_meta.h, and every function is looked up
// at run time (op_api_lookup.h). Values and prototypes follow CANN's acl_base_rt.h / acl_meta.h
// and the signatures opbuild generates for custom ops (aclnn<IrType>GetWorkspaceSize / aclnn<IrType>).
#pragma once
#include <cstdint>

extern "C" {
struct aclTensor;
struct aclOpExecutor;
typedef void* aclrtStream;
typedef int32_t aclnnStatus;  // 0 is success

enum AclDataType : int32_t { kAclFloat = 0, kAclFloat16 = 1, kAclBf16 = 27 };
enum AclFormat : int32_t { kAclFormatNd = 2 };

typedef aclTensor* (*AclCreateTensorFn)(const int64_t* viewDims, uint64_t viewDimsNum, int32_t dataType, const int64_t* stride,
                                        int64_t offset, int32_t format, const int64_t* storageDims, uint64_t storageDimsNum,
                                        void* tensorData);
typedef aclnnStatus (*AclDestroyTensorFn)(const aclTensor* tensor);
typedef const char* (*AclGetRecentErrMsgFn)();
// Phase 2 of every aclnn op; phase 1's type depends on the op (op_table.h).
typedef aclnnStatus (*AclnnRunFn)(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
}
