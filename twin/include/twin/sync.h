// Pipes, events and barriers, and the happens-before check behind every UB and GM access.
// Every API is one instruction on the pipe that executes it (GM->UB copies MTE2, UB->GM MTE3,
// vector ops V, scalar Get/SetValue S); an access conflicting with an earlier one of another
// pipe (or of the same pipe, for V, MTE2 and MTE3) needs an ordering edge between them.
#pragma once
#include "core.h"

namespace AscendC {
enum class HardEvent : int32_t { MTE2_V, V_MTE3, MTE3_V, V_MTE2, S_V, V_S, MTE2_S, S_MTE2, MTE3_S, S_MTE3, MTE3_MTE2, V_V, MTE2_MTE3 };
enum pipe_t { PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };
using TEventID = int8_t;
}  // namespace AscendC

namespace twin {

const char* EventName(AscendC::HardEvent e);
const char* PipeName(int p);

// `api` and `buf` name who sets/waits: a kernel call site, or the framework itself (TQue, the A2
// ReduceSum, TPipe's destructor; site.file null) with the queue buffer concerned.
void SetFlagAt(AscendC::HardEvent e, int32_t id, const char* api, Site site, int32_t buf = -1);
void WaitFlagAt(AscendC::HardEvent e, int32_t id, const char* api, Site site, int32_t buf = -1);
void BarrierAt(AscendC::pipe_t p, Site site);
int32_t AllocEventId(AscendC::HardEvent e, const char* api);
void ReleaseEventId(AscendC::HardEvent e, int32_t id);
int32_t FetchEventId(AscendC::HardEvent e, const char* api);

// One instruction: numbered on its pipe at construction; each operand is checked against what
// that pipe knows to be complete, then recorded in the UB / GM shadow.
class Instr {
public:
    Instr(const char* api, Pipe pipe);
    // buf/gen: the queue buffer and generation of the tensor (-1 for TBuf memory).
    void Ub(const char* which, uint32_t off, uint64_t bytes, int32_t buf, uint32_t gen, bool write) const;
    // kind: what a write is to the soft SyncAll's kernel-side zeroing (SoftSyncAllBlocks).
    void Gm(const void* p, uint64_t bytes, bool write, GmWriteKind kind = GmWriteKind::kPlain) const;
    // A vector instruction's size for the cost model: elements of the widest operand.
    void Vector(uint64_t elems, uint32_t elemBytes) const;

private:
    const char* api_;
    Pipe pipe_;
    uint32_t seq_;
};

// The A2 ReduceSum count form ends on the scalar unit (asc-devkit dav_c220 ReduceSumImpl: vcadd,
// V_S, a scalar store of the accumulator into dst, S_V, S_MTE3): dst is written by S, after V.
void ScalarResultStore(const char* api, uint32_t dstOff, int32_t buf, uint32_t gen);
// The 310P ReduceSum count form reads each partial sum back on the scalar unit (asc-devkit
// kernel_operator_vec_reduce_intf_impl.h, the branch for chips other than A2/A3: ReduceImpl,
// V_S, dst.GetValue(0)): V_S, then a scalar load of `bytes` at dstOff.
void ScalarLoadAfterVector(const char* api, uint32_t dstOff, uint32_t bytes, int32_t buf, uint32_t gen);
// CreateVecIndex's first block (asc-devkit CreateVecIndexOneBlk, dav_c220 and dav_m200): scalar
// stores of `bytes` into dst, then S_V before the vector ops that continue from them.
void ScalarStoresThenVector(const char* api, uint32_t dstOff, uint32_t bytes, int32_t buf, uint32_t gen);

}  // namespace twin

namespace AscendC {

// The call site rides along as defaulted arguments, invisible to kernels (as CANN's signatures).
template <HardEvent e> void SetFlag(int32_t id, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    twin::SetFlagAt(e, id, "SetFlag", twin::Site{file, line});
}
template <HardEvent e> void WaitFlag(int32_t id, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    twin::WaitFlagAt(e, id, "WaitFlag", twin::Site{file, line});
}

template <pipe_t p> void PipeBarrier(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    static_assert(p != PIPE_S, "PipeBarrier<PIPE_S> is not allowed");
    twin::BarrierAt(p, twin::Site{file, line});
}

}  // namespace AscendC
