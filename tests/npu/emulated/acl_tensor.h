// The emulated CANN runtime's aclTensor, shared by the stand-in libopapi.so (which creates them)
// and the stand-in vendor libcust_opapi.so (which reads them), as CANN's own libraries share it.
#pragma once
#include <cstdint>
#include <vector>

struct aclTensor {
    std::vector<int64_t> viewDims;
    std::vector<int64_t> strides;
    int64_t offset;  // elements from the storage base to the view's first element
    int32_t dtype;   // aclDataType
    int32_t format;  // aclFormat
    std::vector<int64_t> storageDims;
    void* storage;  // the storage base pointer
};

extern "C" {
// Sets what aclGetRecentErrMsg returns next on this thread.
void emulated_acl_set_error(const char* message);
// Bytes per element of an aclDataType the emulated kernels take (float, float16, bf16), else 0.
int64_t emulated_acl_itemsize(int32_t dtype);
}
