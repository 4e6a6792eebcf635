// Helpers shared by airfuse's kernels: float views of half/bf16 data and the row partition
// (GM copies: gm_copy.h).
#pragma once
#include "kernel_operator.h"

namespace airfuse_kernel {
using namespace AscendC;

// Event ids: with TPipe/TQue an id must come from TPipe's FetchEventID/AllocEventID
// (SetFlag-WaitFlag(ISASI).md): queues hold ids of their own (a freed buffer keeps one until its
// next AllocTensor), so a literal id can be set twice. FetchEventID gives the lowest free id; it is
// used at once, before any queue call could take it.

// Kernel types ([ADK] 设置Kernel类型.md): 310P (__CCE_AICORE__ 200) has KERNEL_TYPE_AICORE; on A2 a
// vector kernel is AIV_ONLY, or MIX_AIV_1_0 when it calls the hardware SyncAll (the scheduler
// carrying cross-core flags is off in AIV_ONLY kernels, CrossCoreSetFlag(ISASI).md).
#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 200
#define AIRFUSE_VECTOR_KERNEL_TYPE KERNEL_TYPE_AICORE
#define AIRFUSE_SYNC_ALL_KERNEL_TYPE KERNEL_TYPE_AICORE
#else
#define AIRFUSE_VECTOR_KERNEL_TYPE KERNEL_TYPE_AIV_ONLY
#define AIRFUSE_SYNC_ALL_KERNEL_TYPE KERNEL_TYPE_MIX_AIV_1_0
#endif

template <typename T> constexpr bool kIsFloat = IsSameType<T, float>::value;

// src as float: float data is used in place; half/bf16 is cast into `work` (no bf16 arithmetic).
template <typename T>
__aicore__ inline LocalTensor<float> AsFloat(const LocalTensor<T>& src, const LocalTensor<float>& work, uint32_t n) {
    if constexpr (kIsFloat<T>) {
        return src;
    } else {
        Cast(work, src, RoundMode::CAST_NONE, n);
        PipeBarrier<PIPE_V>();
        return work;
    }
}

// float -> T: CAST_RINT is the only legal mode for bf16 on A2; CAST_NONE (RINT) for half.
template <typename T> __aicore__ inline void FromFloat(const LocalTensor<T>& dst, const LocalTensor<float>& src, uint32_t n) {
    if constexpr (IsSameType<T, bfloat16_t>::value) {
        Cast(dst, src, RoundMode::CAST_RINT, n);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, n);
    }
}

// Elements a count-form Gather of `count` elements needs in its source view to pass CANN's CPU-debug
// check (asc-tools api_check kernel_vec_gather_check.cpp, CheckAllLowLevel): it sizes the source as
// the span of a contiguous vector op with that mask and repeat count (blocks 1 and repeats 1 block
// apart: (repeats + 7) blocks; the tail call its own elements), though vgather reads only at the
// offsets. A kernel whose Gather source is shorter stops there under CANN's CPU debug.
template <typename T> __aicore__ constexpr uint32_t GatherSourceCount(uint32_t count) {
    constexpr uint32_t block = 32 / sizeof(T), perRepeat = 256 / sizeof(T);
    uint32_t repeats = count / perRepeat, tail = count % perRepeat;
    uint32_t forRepeats = repeats ? (repeats + 7) * block : 0;
    return forRepeats > tail ? forRepeats : tail;
}

// The scalar unit waits for the vector pipe's work issued so far (before it reads a vector result,
// or stores over UB a vector op wrote or reads).
__aicore__ inline void ScalarWaitsForVector() {
    int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
    SetFlag<HardEvent::V_S>(eventVS);
    WaitFlag<HardEvent::V_S>(eventVS);
}

// Vector result -> scalar unit: the read must wait for the vector pipe, and the next vector
// write must wait for the read.
template <typename T> __aicore__ inline T ReadScalar(const LocalTensor<T>& t) {
    ScalarWaitsForVector();
    T v = t.GetValue(0);
    int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);
    SetFlag<HardEvent::S_V>(eventSV);
    WaitFlag<HardEvent::S_V>(eventSV);
    return v;
}

struct RowRange {
    uint64_t start;
    uint32_t count;
};

// Rows of this core: rowsPerCore each, one more for the first `remainder` cores; cores from
// rowCores on get none (310P gives each core with rows at least one 32 B block of output).
__aicore__ inline RowRange MyRows(uint32_t rowsPerCore, uint32_t remainder, uint32_t rowCores) {
    uint64_t b = uint64_t(GetBlockIdx());
    if (b >= rowCores) return {0, 0};
    uint64_t extra = b < remainder ? b : remainder;
    return {b * rowsPerCore + extra, rowsPerCore + (b < remainder ? 1u : 0u)};
}

}  // namespace airfuse_kernel
