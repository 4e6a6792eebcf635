// Stand-in for CANN's libopapi.so: the aclTensor API the binding resolves at run time, with a
// live-object counter, and aclGetRecentErrMsg (in CANN, libascendcl.so's).
#include <atomic>
#include <cstdio>
#include <string>

#include "acl_tensor.h"

namespace {
std::atomic<int64_t> gLiveTensors{0};
thread_local std::string tError;
}  // namespace

extern "C" {

void emulated_acl_set_error(const char* message) { tError = message; }

int64_t emulated_acl_itemsize(int32_t dtype) {
    switch (dtype) {
        case 0: return 4;   // ACL_FLOAT
        case 1: return 2;   // ACL_FLOAT16
        case 27: return 2;  // ACL_BF16
        default: return 0;
    }
}

const char* aclGetRecentErrMsg() { return tError.c_str(); }

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, int32_t dataType, const int64_t* stride, int64_t offset,
                           int32_t format, const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
    if ((viewDimsNum && (!viewDims || !stride)) || !storageDims || storageDimsNum == 0) {
        tError = "aclCreateTensor: null dims, strides or storage dims";
        return nullptr;
    }
    // The view must lie inside the storage (1-D storage dims, as op-plugin passes them).
    int64_t last = offset, storageElems = 1;
    for (uint64_t i = 0; i < viewDimsNum; ++i) {
        if (viewDims[i] < 0 || stride[i] < 0) {
            tError = "aclCreateTensor: negative dim or stride";
            return nullptr;
        }
        if (viewDims[i] == 0) last = offset - 1;
        else if (last >= offset) last += (viewDims[i] - 1) * stride[i];
    }
    for (uint64_t i = 0; i < storageDimsNum; ++i) storageElems *= storageDims[i];
    if (offset < 0 || last >= storageElems) {
        tError = "aclCreateTensor: the view (offset " + std::to_string(offset) + ", last element " + std::to_string(last) +
                 ") lies outside the storage of " + std::to_string(storageElems) + " elements";
        return nullptr;
    }
    ++gLiveTensors;
    return new aclTensor{{viewDims, viewDims + viewDimsNum}, {stride, stride + viewDimsNum}, offset, dataType, format,
                         {storageDims, storageDims + storageDimsNum}, tensorData};
}

int32_t aclDestroyTensor(const aclTensor* tensor) {
    if (!tensor) return 161001;  // ACLNN_ERR_PARAM_NULLPTR
    delete tensor;
    --gLiveTensors;
    return 0;
}

int64_t emulated_acl_live_tensors() { return gLiveTensors.load(); }

}  // extern "C"
