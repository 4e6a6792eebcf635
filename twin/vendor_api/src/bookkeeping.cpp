// The CPU-debug runtime's side of the vendor's headers: the globals asc-tools' stub_def.h declares
// (defined by its libregfwk in a CANN install), and the AscendCBuf* bookkeeping calls TPipe and
// TQue make in the headers' CPU-debug branch (impl/basic_api/kernel_tpipe_impl.h,
// kernel_tquebind_impl.h), whose implementation is not public. Here they tell the core model where
// the unified buffer is and keep each queue buffer's state.
#include <cstring>
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

// stub_def.h's globals: the launcher sets the block's; a vector kernel runs on an AIV core with one
// vector core per block (g_taskRation 1, sub_block_idx 0: GetBlockIdx() is block_idx).
int64_t block_idx = 0;
int64_t block_num = 1;
int64_t g_ubBase = 0;
uint64_t g_tilingKey = 0;
int32_t g_coreType = 2;
int32_t g_taskRation = 1;
int32_t sub_block_idx = 0;

namespace airfuse_vendor_twin {
namespace {
// Hardware::UB in impl/utils/common_types.h (GM, UB, L1, ...).
constexpr uint8_t kHardwareUb = 1;

const char* Name(BufState s) {
    switch (s) {
        case BufState::Free: return "free";
        case BufState::Allocated: return "allocated";
        case BufState::Enqueued: return "enqueued";
        case BufState::Dequeued: return "dequeued";
    }
    return "?";
}
long long UbOffset(uint64_t addr) { return (long long)(addr - uint64_t(uintptr_t(Cur().ub))); }

Core::QueueBuffer& Find(const char* call, uint64_t addr) {
    auto it = Cur().queueBuffers.find(addr);
    if (it == Cur().queueBuffers.end()) Fail(call, Fmt("no InitBuffer made a TQue buffer at UB offset %lld", UbOffset(addr)));
    return it->second;
}

void Move(const char* call, uint64_t addr, BufState from, BufState to) {
    Core::QueueBuffer& q = Find(call, addr);
    if (q.state != from) Fail(call, Fmt("the buffer at UB offset %lld is %s, not %s", UbOffset(addr), Name(q.state), Name(from)));
    q.state = to;
}
}  // namespace

void CheckQueueBuffersFree() {
    for (const auto& [addr, q] : Cur().queueBuffers)
        if (q.state != BufState::Free)
            Fail("kernel end", Fmt("the TQue buffer at UB offset %lld is still %s (FreeTensor after its last use)", UbOffset(addr), Name(q.state)));
}
}  // namespace airfuse_vendor_twin

using namespace airfuse_vendor_twin;

void AscendCBufAbsAddr(uint8_t hardware, uint64_t addr, uint32_t bytes) {
    if (hardware != kHardwareUb) return;  // L1, L0A/B/C, BIAS, FIXBUF: not on the vector core's path
    Core& c = Cur();
    // Each TPipe construction reports the unified buffer once; a kernel constructs one TPipe, as
    // the home-made twin requires.
    if (c.ub) Fail("AscendCBufAbsAddr (TPipe)", "a second TPipe: a kernel constructs one TPipe, which owns the unified buffer");
    c.ub = reinterpret_cast<uint8_t*>(uintptr_t(addr));
    c.ubBytes = bytes;
    WatchScalarAccesses(c.ub, bytes);
    // Every block's TPipe starts here. Fresh UB holds whatever was there: poisoned (NaN for float
    // types), as the home-made twin does, so a kernel that reads what it never wrote fails.
    std::memset(c.ub, 0xff, bytes);
    c.order.Reset(bytes);
}

// InitBuffer: `num` buffers of `bytes` (already rounded up to 32 B) one after another from `addr`
// (kernel_tpipe_impl.h InitBuffer); a TQue's start free, a TBuf's are the kernel's for good.
void AscendCBufInit(uint8_t position, uint8_t isTBuf, uint8_t num, uint64_t addr, uint32_t bytes) {
    CheckInsideUb("AscendCBufInit", "InitBuffer", reinterpret_cast<void*>(uintptr_t(addr)), uint64_t(num) * bytes);
    Cur().ubRegions[addr] = {uint64_t(num) * bytes, position};
    if (isTBuf) return;
    for (uint64_t i = 0; i < num; ++i) Cur().queueBuffers[addr + i * bytes] = {bytes, BufState::Free};
}

void AscendCQueCreate(uint8_t, uint8_t, int32_t) {}

void AscendCBufAlloc(uint8_t hardware, uint8_t, uint64_t addr, uint64_t bytes) {
    if (hardware == kHardwareUb) {
        // A buffer comes back holding whatever its last user left: poisoned and unwritten, as the
        // home-made twin does, so a kernel that reads it before writing fails.
        uint64_t offset = CheckInsideUb("AscendCBufAlloc", "AllocTensor", reinterpret_cast<void*>(uintptr_t(addr)), bytes);
        std::memset(Cur().ub + offset, 0xff, bytes);
        Cur().order.MarkUnwritten(offset, bytes);
    }
    Move("AscendCBufAlloc (AllocTensor)", addr, BufState::Free, BufState::Allocated);
}

// TBuf::Get: the whole buffer (or GetWithOffset's part), which stays the kernel's (no queue state).
void AscendCBufGet(uint8_t, uint8_t hardware, uint64_t addr, uint32_t bytes) {
    if (hardware == kHardwareUb) CheckInsideUb("AscendCBufGet", "TBuf::Get", reinterpret_cast<void*>(uintptr_t(addr)), bytes);
}

void AscendCBufEnque(uint8_t, uint8_t, uint8_t, uint64_t addr) { Move("AscendCBufEnque (EnQue)", addr, BufState::Allocated, BufState::Enqueued); }

void AscendCBufDeque(uint8_t, uint8_t, uint8_t, uint64_t addr) { Move("AscendCBufDeque (DeQue)", addr, BufState::Enqueued, BufState::Dequeued); }

void AscendCBufFree(uint8_t, uint8_t, uint64_t addr, uint64_t) {
    Core::QueueBuffer& q = Find("AscendCBufFree (FreeTensor)", addr);
    if (q.state == BufState::Free) Fail("AscendCBufFree (FreeTensor)", Fmt("the buffer at UB offset %lld is not in use", UbOffset(addr)));
    q.state = BufState::Free;
}

// TBufPool bookkeeping: airfuse's kernels use no TBufPool; TQue reports to it only when it has one.
void AscendCUpdateTbufPoolStatus(uint64_t pool, bool) {
    if (pool != 0) Fail("AscendCUpdateTbufPoolStatus", "TBufPool is not modelled");
}
void AscendCTBufPoolResetCheck(uint8_t, uint64_t, uint64_t, uint64_t pool) {
    if (pool != 0) Fail("AscendCTBufPoolResetCheck", "TBufPool is not modelled");
}
