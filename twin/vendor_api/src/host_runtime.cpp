// Pieces of CANN's CPU-debug runtime the headers link against and whose implementation is not
// public (libtikicpulib): the scalar bfloat16 conversions asc-tools' kernel_bf16.h declares, and
// the process lock impl/basic_api/kernel_process_lock.h declares (taken around the headers' log
// output; CANN's CPU debug runs blocks as processes, this twin runs them in one thread).
#include <cmath>
#include <cstring>
#include "kernel_bf16.h"
#include "kernel_process_lock.h"

namespace bfloat16 {

// Round to nearest even; a NaN stays a quiet NaN.
uint16_t Bf16T::FloatToBf16(const float& f) const {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

Bf16T& Bf16T::operator=(const Bf16T& other) {
    val = other.val;
    return *this;
}

Bf16T& Bf16T::operator=(const float& f) {
    val = FloatToBf16(f);
    return *this;
}

float Bf16T::ToFloat() const {
    uint32_t u = uint32_t(val) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

Bf16T::operator float() const { return ToFloat(); }

}  // namespace bfloat16

namespace AscendC {

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

}  // namespace AscendC
