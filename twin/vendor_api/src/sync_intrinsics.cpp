// Synchronisation, control registers and scalar bit operations. The model runs one core's
// instructions in program order; flags and barriers feed the per-pipe ordering checks
// (pipe_order.h), and what would hang or lose a flag on the hardware stops the launch.
// Semantics: CANN's SetFlag/WaitFlag(ISASI).md, PipeBarrier(ISASI).md, SetMaskCount.md /
// SetMaskNorm.md / SetVectorMask.md, and the callers in asc-devkit impl/basic_api
// (kernel_tpipe_impl.h's event-id pool for sff0/sbitset).
#include "blocks.h"
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"
#include <cstring>

using namespace airfuse_vendor_twin;

namespace {
// The pipes of the vector core the ordering checks follow (pipe_order.h); flags between other
// pipes (the cube's) are kept but order nothing here.
bool Modelled(pipe_t p, Pipe& out) {
    switch (p) {
        case PIPE_S: out = kPipeS; return true;
        case PIPE_V: out = kPipeV; return true;
        case PIPE_MTE2: out = kPipeMte2; return true;
        case PIPE_MTE3: out = kPipeMte3; return true;
        default: return false;
    }
}

bool& Flag(const char* intrinsic, pipe_t from, pipe_t to, event_t id) {
    if (unsigned(from) >= 16 || unsigned(to) >= 16 || unsigned(id) >= 8)
        Fail(intrinsic, Fmt("pipe %d -> %d event %d is outside the modelled flags", int(from), int(to), int(id)));
    return Cur().flags[from][to][id];
}
}  // namespace

namespace airfuse_vendor_twin {
std::string gDisabledSite;
std::set<std::string> gSitesSeen;
}  // namespace airfuse_vendor_twin

namespace {
// The kernel source line of the sync call this intrinsic carries out ("" for TQue's own flags,
// which the vendor's EnQue/DeQue/AllocTensor/FreeTensor set); `recorded`: a site the mutation test
// may remove (SetFlag, PipeBarrier; a WaitFlag goes with its SetFlag).
std::string TakeSite(bool recorded) {
    std::string site;
    site.swap(Cur().pendingSite);
    if (recorded && !site.empty()) gSitesSeen.insert(site);
    return site;
}

bool Removed(const std::string& site) { return !site.empty() && site == gDisabledSite; }
}  // namespace

extern "C" void airfuse_vendor_twin_sync_site(const char* file, int line) {
    Core& c = Cur();
    // Every SetFlag/WaitFlag/PipeBarrier is one set_flag/wait_flag/pipe_barrier in dav_c220's
    // kernel_operator_sync_impl.h; a site nothing took would be credited to the next one.
    if (!c.pendingSite.empty()) Fail("sync site", Fmt("the call at %s made no set_flag, wait_flag or pipe_barrier", c.pendingSite.c_str()));
    const char* slash = std::strrchr(file, '/');
    c.pendingSite = Fmt("%s:%d", slash ? slash + 1 : file, line);
}

// A flag set again before its wait is lost (the later wait pairs with the earlier set).
void set_flag(pipe_t from, pipe_t to, event_t id) {
    bool& f = Flag("set_flag", from, to, id);
    if (Removed(TakeSite(true))) {
        Cur().droppedWait[from][to][id] = true;
        return;
    }
    if (f) Fail("set_flag", Fmt("pipe %d -> %d event %d is already set (a set flag set again is lost)", int(from), int(to), int(id)));
    f = true;
    Pipe a, b;
    if (!Modelled(from, a) || !Modelled(to, b)) return;
    Cur().order.SetFlag(a, b, int(id));
    twin::CostSetFlag(Cur().cost, a, b, int(id));
}

// Waiting for a flag nobody set never returns on the hardware.
void wait_flag(pipe_t from, pipe_t to, event_t id) {
    bool& f = Flag("wait_flag", from, to, id);
    TakeSite(false);
    if (Cur().droppedWait[from][to][id]) {
        Cur().droppedWait[from][to][id] = false;
        return;
    }
    if (!f) Fail("wait_flag", Fmt("pipe %d -> %d event %d was never set (the core would hang)", int(from), int(to), int(id)));
    f = false;
    Pipe a, b;
    if (!Modelled(from, a) || !Modelled(to, b)) return;
    Cur().order.WaitFlag(a, b, int(id));
    twin::CostWaitFlag(Cur().cost, a, b, int(id));
}

void pipe_barrier(pipe_t pipe) {
    if (unsigned(pipe) > unsigned(PIPE_FIX)) Fail("pipe_barrier", Fmt("pipe %d does not exist", int(pipe)));
    if (Removed(TakeSite(true))) return;
    Pipe p;
    if (pipe == PIPE_ALL) {
        Cur().order.BarrierAll();
        twin::CostBarrier(Cur().cost, twin::kCostPipes);
    } else if (Modelled(pipe, p)) {
        Cur().order.Barrier(p);
        twin::CostBarrier(Cur().cost, p);
    }
}

// The CTRL register as far as the model has it: bit 56 is the mask mode, 1 counter, 0 normal
// (impl/basic_api/kernel_npu_debug.h IsMaskNorm; dav_c220/kernel_operator_vec_reduce_impl.h
// "set CTRL[56] as 1, for counter mask"); its other bits (saturation, ...) read as 0, and set_ctrl,
// which could change them, refuses.
int64_t get_ctrl() { return Cur().counterMode ? int64_t(1) << 56 : 0; }

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

// Cross-core flags, as SyncAll uses them (dav_c220 SyncAllImpl: PipeBarrier<PIPE_ALL>, then
// ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0, SYNC_AIV_ONLY_ALL)), then wait_flag_dev of that id;
// CrossCoreSetFlag(ISASI).md, SyncAll.md): in mode 0 every vector core of the launch sets the flag,
// and a core's wait returns once all of them have. Only mode 0 is modelled (modes 1 and 2 pair the
// cube core with its vector cores). The cores can meet only if all are resident at once: a launch
// with more blocks than the chip has vector cores would hang (SyncAll.md 约束说明).
void ffts_cross_core_sync(pipe_t pipe, uint64_t config) {
    Core& c = Cur();
    unsigned mode = unsigned(config >> 4 & 0x3), flag = unsigned(config >> 8 & 0xf);
    if ((config & 1) == 0 || mode != 0)
        Fail("ffts_cross_core_sync", Fmt("config 0x%llx: only mode 0 (every vector core of the launch) is modelled", (unsigned long long)config));
    if (pipe != PIPE_MTE3 && pipe != PIPE_S && pipe != PIPE_V && pipe != PIPE_MTE2)
        Fail("ffts_cross_core_sync", Fmt("pipe %d is not a vector core's pipe", int(pipe)));
    if (c.blockNum > int64_t(c.vectorCores))
        Fail("ffts_cross_core_sync", Fmt("%lld blocks on a chip of %u vector cores: blocks that are not resident cannot meet, the cores would hang",
                                         (long long)c.blockNum, c.vectorCores));
    ++c.crossCoreSets[flag];
    c.crossCoreArrivals[flag].push_back(twin::CostDrain(c.cost));  // the block arrives once all its work has completed
}

void wait_flag_dev(int64_t flagId) {
    Core& c = Cur();
    if (flagId < 0 || flagId >= kCrossCoreFlags) Fail("wait_flag_dev", Fmt("flag %lld is not one of the 16 cross-core flags", (long long)flagId));
    int64_t waits = ++c.crossCoreWaits[flagId];
    if (c.crossCoreSets[flagId] < waits)
        Fail("wait_flag_dev", Fmt("flag %lld: this block's wait %lld comes before its own set %lld; the wait needs every block's, its own too (the core would hang)",
                                  (long long)flagId, (long long)waits, (long long)waits));
    WaitForEveryBlock(int(flagId));
    // Every core goes on once the last has arrived, plus the barrier's own cost (the table's sync_all).
    twin::CostResume(c.cost, LatestCrossCoreArrival(int(flagId), waits) + c.cost.p->syncAll);
    ++c.syncEpoch;
}

// Clean-and-invalidate of the scalar data cache over the line holding `gm`: no data cache is
// modelled (scalar GM access reads and writes GM directly), so only the address is checked.
void dcci(void* gm, uint64_t) { CheckGm("dcci", "address", gm, 1); }

// The same with the cache_line_t operand: dav_m200's TPipe::Destroy cleans the entire data cache
// (kernel_tpipe_impl.h, `dcci((__gm__ int64_t*)0, ENTIRE_DATA_CACHE)`), whose address operand is
// not an address then; a single line's address is checked as above.
void dcci(void* gm, cache_line_t line) {
    if (line != cache_line_t::ENTIRE_DATA_CACHE) CheckGm("dcci", "address", gm, 1);
}

int64_t sff0(uint64_t bits) {
    for (int64_t i = 0; i < 64; ++i)
        if (!(bits >> i & 1)) return i;
    return -1;
}
uint64_t sbitset0(uint64_t bits, int64_t index) { return bits & ~(uint64_t(1) << index); }
uint64_t sbitset1(uint64_t bits, int64_t index) { return bits | uint64_t(1) << index; }
