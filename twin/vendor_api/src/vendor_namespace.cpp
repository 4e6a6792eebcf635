// What CANN's CPU-debug headers expect to find defined in namespace AscendC and whose definition is
// not public (CANN's libtikicpulib and libcpudebug_model): the kernel types of stub_def.h, the
// atomic flag, the process lock impl/basic_api/kernel_process_lock.h declares (taken around the
// headers' log output; CANN's CPU debug runs blocks as processes, this twin runs them in one
// thread) and the model hook of the CPU-debug Gather. build.cmake compiles this file once per
// chip, under that chip's name for the namespace (VENDOR_TWIN_NAMESPACE_<chip>), so each chip's
// kernels find it; the state behind it is the one core model's.
#include "kernel_process_lock.h"
#include "core_model.h"

namespace AscendC {

extern const int MIX_TYPE = 0;
extern const int AIC_TYPE = 1;
extern const int AIV_TYPE = 2;
bool g_isAtomic = false;

ProcessLock* ProcessLock::processLock = nullptr;

ProcessLock::ProcessLock() { Init(); }
ProcessLock::~ProcessLock() { UnInit(); }

inline void ProcessLock::Init() {
    pthread_rwlockattr_init(&attr);
    pthread_rwlock_init(&lock, &attr);
}

void ProcessLock::UnInit() {
    pthread_rwlock_destroy(&lock);
    pthread_rwlockattr_destroy(&attr);
}

int ProcessLock::Read() { return pthread_rwlock_rdlock(&lock); }
int ProcessLock::Write() { return pthread_rwlock_wrlock(&lock); }
int ProcessLock::Unlock() { return pthread_rwlock_unlock(&lock); }

ProcessLock* ProcessLock::CreateLock() {
    if (processLock == nullptr) processLock = new ProcessLock();
    return processLock;
}

void ProcessLock::FreeLock() {
    delete processLock;
    processLock = nullptr;
}

// The model hook of the CPU-debug Gather (impl/utils/kernel_utils_constants.h): vgather's source.
void SetModelGatherbSrc0Tensor(uint64_t src, const uint32_t length) { airfuse_vendor_twin::SetGatherSource(src, length); }

}  // namespace AscendC
