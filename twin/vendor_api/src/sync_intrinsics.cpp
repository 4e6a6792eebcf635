// Synchronisation, control registers and scalar bit operations. The model runs one core's
// instructions in program order, so flags and barriers order nothing here yet; what it checks is
// what would hang or lose a flag on the hardware. Semantics: CANN's SetFlag/WaitFlag(ISASI).md,
// PipeBarrier(ISASI).md, SetMaskCount.md / SetMaskNorm.md / SetVectorMask.md, and the callers in
// asc-devkit impl/basic_api (kernel_tpipe_impl.h's event-id pool for sff0/sbitset).
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

using namespace airfuse_vendor_twin;

namespace {
bool& Flag(const char* intrinsic, pipe_t from, pipe_t to, event_t id) {
    if (unsigned(from) >= 16 || unsigned(to) >= 16 || unsigned(id) >= 8)
        Fail(intrinsic, Fmt("pipe %d -> %d event %d is outside the modelled flags", int(from), int(to), int(id)));
    return Cur().flags[from][to][id];
}
}  // namespace

// A flag set again before its wait is lost (the later wait pairs with the earlier set).
void set_flag(pipe_t from, pipe_t to, event_t id) {
    bool& f = Flag("set_flag", from, to, id);
    if (f) Fail("set_flag", Fmt("pipe %d -> %d event %d is already set (a set flag set again is lost)", int(from), int(to), int(id)));
    f = true;
}

// Waiting for a flag nobody set never returns on the hardware.
void wait_flag(pipe_t from, pipe_t to, event_t id) {
    bool& f = Flag("wait_flag", from, to, id);
    if (!f) Fail("wait_flag", Fmt("pipe %d -> %d event %d was never set (the core would hang)", int(from), int(to), int(id)));
    f = false;
}

void pipe_barrier(pipe_t pipe) {
    if (unsigned(pipe) > unsigned(PIPE_FIX)) Fail("pipe_barrier", Fmt("pipe %d does not exist", int(pipe)));
}

void set_mask_norm() { Cur().counterMode = false; }
void set_mask_count() { Cur().counterMode = true; }
void set_vector_mask(uint64_t high, uint64_t low) {
    Core& c = Cur();
    c.maskHigh = high;
    c.maskLow = low;
}
void set_mov_pad_val(uint64_t bits) { Cur().padValue = bits; }
// Registers of the cube side's Load3D (padding value, L1 size) that TPipe's construction writes;
// no vector instruction reads them.
void set_padding(uint64_t) { Cur(); }
void set_l1_3d_size(uint64_t) { Cur(); }
// Atomic accumulation into GM off: the only mode the model implements (the set_atomic_add family refuses).
void set_atomic_none() { Cur(); }

// Clean-and-invalidate of the scalar data cache over the line holding `gm`: no data cache is
// modelled (scalar GM access reads and writes GM directly), so only the address is checked.
void dcci(void* gm, uint64_t) { CheckGm("dcci", "address", gm, 1); }

int64_t sff0(uint64_t bits) {
    for (int64_t i = 0; i < 64; ++i)
        if (!(bits >> i & 1)) return i;
    return -1;
}
uint64_t sbitset0(uint64_t bits, int64_t index) { return bits & ~(uint64_t(1) << index); }
uint64_t sbitset1(uint64_t bits, int64_t index) { return bits | uint64_t(1) << index; }
