// Twin runtime: per-core state, the checks behind the API headers, and the launcher.
#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include "launcher_common.h"
#include "kernel_operator.h"

uint64_t g_tilingKey = 0;  // CPU debug's (asc-tools cpudebug regfwk), read by TILING_KEY_IS

namespace twin {
namespace {
thread_local Core* tCore = nullptr;
thread_local std::string tLeak;  // first end-of-kernel discipline error (set from destructors)

// One rendezvous per kind of SyncAll: the hardware one (every block) and the soft one (blocks
// 0..usedCores-1, which must agree on usedCores).
struct Rendezvous {
    uint32_t total = 0, arrived = 0, generation = 0;
};
struct Barrier {
    std::mutex m;
    std::condition_variable cv;
    Rendezvous hard, soft, softFirst;  // softFirst: every participant at its first soft SyncAll, before any counts
    std::vector<double> hardArrive, softArrive;  // per SyncAll: the latest core's modelled arrival
    std::vector<Core>* cores = nullptr;
    std::vector<double> firstSoftArrive;  // per block: modelled arrival at its first soft SyncAll
    std::vector<char> done;  // per block: returned from the kernel
    bool aborted = false;
};
Barrier* gBarrier = nullptr;

// The entry for SyncAll number `i` (under the barrier's lock).
double& Slot(std::vector<double>& v, size_t i) {
    if (v.size() <= i) v.resize(i + 1, 0.0);
    return v[i];
}

// Waits until the `total` first blocks arrive; a block of them returning first would hang the NPU.
void Meet(Rendezvous& r, std::unique_lock<std::mutex>& lk, const char* api) {
    Barrier& b = *gBarrier;
    uint32_t gen = r.generation;
    if (++r.arrived == r.total) {
        r.arrived = 0;
        ++r.generation;
        b.cv.notify_all();
        return;
    }
    auto gone = [&] {
        for (uint32_t i = 0; i < r.total; ++i)
            if (b.done[i]) return true;
        return false;
    };
    b.cv.wait(lk, [&] { return r.generation != gen || b.aborted || gone(); });
    if (r.generation != gen) return;
    if (b.aborted) throw Violation("aborted: another block failed");
    lk.unlock();
    Fail(api, "another block returned without calling SyncAll (the NPU would hang)");
}
}  // namespace

Core& Cur() {
    if (!tCore) throw Violation("Ascend C API called outside a twin launch");
    return *tCore;
}

namespace {
std::string Prefix(const char* api) {
    Core& c = Cur();
    return Fmt("kernel %s, block %lld/%lld: %s: ", c.kernel, (long long)c.blockIdx, (long long)c.blockNum, api);
}
}  // namespace

void Fail(const char* api, const std::string& what) { throw Violation(Prefix(api) + what); }

const char* Basename(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char* KernelTypeName(int type) {
    static const char* names[] = {"KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIV_1_0", "KERNEL_TYPE_MIX_AIC_1_0",
                                  "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_2", "KERNEL_TYPE_AICORE", "KERNEL_TYPE_MIX_VECTOR_CORE"};
    return type >= 0 && type < int(sizeof names / sizeof *names) ? names[type] : "none (KERNEL_TASK_TYPE_DEFAULT not called)";
}

void SetKernelType(int type) { Cur().kernelType = type; }

const GmBuffer& CheckGm(const char* api, const void* p, uint64_t bytes) {
    auto* q = static_cast<const uint8_t*>(p);
    for (const GmBuffer& g : *Cur().gm)
        if (q >= g.base && q < g.base + g.bytes + (g.name == kSystemWorkspace ? 0 : 1)) {
            if (g.name == kSystemWorkspace)
                Fail(api, Fmt("GM access at offset %llu of the workspace, inside the first %llu bytes: the system workspace the "
                              "library owns; a kernel reaches its own part through GetUserWorkspace",
                              (unsigned long long)(q - g.base), (unsigned long long)Cur().chip->systemWorkspaceBytes));
            uint64_t off = q - g.base;
            if (off + bytes > g.bytes)
                Fail(api, Fmt("GM access of %llu bytes at offset %llu of '%s' overruns its %llu bytes", (unsigned long long)bytes,
                              (unsigned long long)off, g.name.c_str(), (unsigned long long)g.bytes));
            return g;
        }
    Fail(api, Fmt("address %p is not inside any GM buffer of this launch", p));
}

uint8_t* UserWorkspace(uint8_t* workspace) {
    const char* api = "GetUserWorkspace";
    Core& c = Cur();
    for (const GmBuffer& g : *c.gm)
        if (g.name == kSystemWorkspace && g.base == workspace) {
            if (g.bytes < c.chip->systemWorkspaceBytes)
                Fail(api, Fmt("the workspace holds %llu bytes, less than the %u bytes of %s's system workspace that precede the user part; "
                              "size it as the tiling reports (system + user)",
                              (unsigned long long)g.bytes, c.chip->systemWorkspaceBytes, c.chip->socVersion));
            return workspace + g.bytes;
        }
    Fail(api, workspace ? "the argument is not the launch's workspace"
                        : "the launch has no workspace; pass one of the size the tiling reports (system + user)");
}

void RegisterTiling(const char* type) { Cur().tilingTypes.insert(type); }

void ReadTiling(void* dst, const uint8_t* tiling, uint64_t bytes, const char* type) {
    Core& c = Cur();
    if (!c.tilingTypes.count(type))
        Fail("GET_TILING_DATA_WITH_STRUCT", Fmt("the tiling struct %s was not registered with REGISTER_TILING_DEFAULT or "
                                                "REGISTER_TILING_FOR_TILINGKEY: CANN would not know the kernel's tiling is a standard "
                                                "C++ struct, nor how to parse it",
                                                type));
    const GmBuffer& g = CheckGm("GET_TILING_DATA", tiling, bytes);
    if (g.name != "tiling") Fail("GET_TILING_DATA", Fmt("reads from '%s', not the tiling buffer", g.name.c_str()));
    std::memcpy(dst, tiling, bytes);
}

uint32_t UbAlloc(const char* api, uint32_t num, uint32_t len, const char* kind) {
    Core& c = Cur();
    if (!c.pipeAlive) Fail(api, "no TPipe constructed");
    uint32_t cap = c.chip->ubBytes;
    if (len == 0 || len > cap) Fail(api, Fmt("buffer length is %u, must be > 0 and <= the UB size %u", len, cap));
    uint64_t rounded = (uint64_t(len) + 31) / 32 * 32;
    if (num * rounded > cap) Fail(api, Fmt("%u buffers of %llu bytes exceed the UB size %u", num, (unsigned long long)rounded, cap));
    if (c.ubUsed + num * rounded > cap)
        Fail(api, Fmt("UB over-allocated on %s: %u bytes in use + %u x %llu requested > %u", c.chip->socVersion, c.ubUsed, num,
                      (unsigned long long)rounded, cap));
    if (c.bufCount + num > 64) Fail(api, Fmt("more than 64 buffers in one TPipe (%u + %u)", c.bufCount, num));
    uint32_t off = c.ubUsed;
    c.ubUsed += uint32_t(num * rounded);
    c.bufCount += num;
    ++c.initBuffers;
    for (uint32_t i = 0; i < num; ++i) {
        bool queue = std::strncmp(kind, "TQue", 4) == 0;
        std::string name = Fmt("InitBuffer #%u (%s", c.initBuffers, kind) + (queue ? Fmt(" buffer %u)", i) : ")");
        c.sync.ranges.push_back({off + uint32_t(i * rounded), uint32_t(rounded), name});
    }
    return off;
}

int32_t NewQueueBuffer(uint32_t off, AscendC::HardEvent freeEvent) {
    SyncState& s = Cur().sync;
    BufEvents b;
    for (const UbRange& r : s.ranges)
        if (r.off == off) b.name = r.name;
    b.freeEvent = int8_t(freeEvent);
    s.bufs.push_back(b);
    return int32_t(s.bufs.size() - 1);
}

void RegisterQueue(QueueBase* q) { Cur().queues.push_back(q); }

const char* StateName(BufState s) {
    static const char* names[] = {"FREE", "OCCUPIED", "ENQUE", "DEQUE"};
    return names[int(s)];
}

int QueueBase::Find(const char* api, uint32_t ubOffset) const {
    if (!initialised) Fail(api, "queue used before TPipe::InitBuffer");
    for (size_t i = 0; i < offs.size(); ++i)
        if (offs[i] == ubOffset) return int(i);
    Fail(api, Fmt("tensor at UB offset %u does not belong to this queue", ubOffset));
}

namespace {
// TQue's events (asc-devkit impl/basic_api/kernel_tquebind_impl.h, kernel_event.h GetQueEvt):
// VECIN buffers are filled by MTE2 and consumed by V, VECOUT buffers filled by V, drained by MTE3.
AscendC::HardEvent EnQueEvent(AscendC::TPosition pos) {
    return pos == AscendC::TPosition::VECIN ? AscendC::HardEvent::MTE2_V : AscendC::HardEvent::V_MTE3;
}
}  // namespace

uint32_t QueueBase::Alloc() {
    const char* api = "TQue::AllocTensor";
    if (!initialised) Fail(api, "queue used before TPipe::InitBuffer");
    Core& c = Cur();
    for (size_t k = 0; k < state.size(); ++k) {
        uint32_t i = (next + k) % state.size();
        if (state[i] != BufState::FREE) continue;
        uint32_t& live = c.liveBufs[int(pos)];
        if (live + 1 > c.chip->maxBufsPerPosition)
            Fail(api, Fmt("%u buffers already allocated in this TPosition, the limit is %u", live, c.chip->maxBufsPerPosition));
        ++live;
        state[i] = BufState::OCCUPIED;
        next = (i + 1) % state.size();
        BufEvents& b = c.sync.bufs[ids[i]];
        if (b.freeId >= 0) {
            auto e = AscendC::HardEvent(b.freeEvent);
            WaitFlagAt(e, b.freeId, api, Site{}, ids[i]);
            ReleaseEventId(e, b.freeId);
            b.freeId = -1;
        }
        ++b.gen;
        b.free = false;
        // The buffer holds whatever it held before: poison it, so a read of unwritten data shows.
        if (!c.countOnly) std::memset(c.ub.data() + offs[i], 0xff, len);
        for (uint32_t blk = offs[i] / 32; blk < (offs[i] + len) / 32; ++blk) c.sync.ub[blk].unwritten = true;
        return i;
    }
    Fail(api, Fmt("no FREE buffer among %zu (the NPU would hang)", state.size()));
}

void QueueBase::EnQue(uint32_t ubOffset) {
    const char* api = "TQue::EnQue";
    int i = Find(api, ubOffset);
    if (state[i] != BufState::OCCUPIED && state[i] != BufState::DEQUE)
        Fail(api, Fmt("buffer %d is %s, EnQue needs OCCUPIED or DEQUE", i, StateName(state[i])));
    if (int32_t(fifo.size()) >= depth) Fail(api, Fmt("%zu tensors already enqueued, queue depth is %d", fifo.size(), depth));
    state[i] = BufState::ENQUE;
    fifo.push_back(uint32_t(i));
    BufEvents& b = Cur().sync.bufs[ids[i]];
    b.enqueId = AllocEventId(EnQueEvent(pos), api);
    SetFlagAt(EnQueEvent(pos), b.enqueId, api, Site{}, ids[i]);
}

uint32_t QueueBase::DeQue() {
    const char* api = "TQue::DeQue";
    if (!initialised) Fail(api, "queue used before TPipe::InitBuffer");
    if (fifo.empty()) Fail(api, "nothing enqueued");
    uint32_t i = fifo.front();
    fifo.erase(fifo.begin());
    state[i] = BufState::DEQUE;
    BufEvents& b = Cur().sync.bufs[ids[i]];
    WaitFlagAt(EnQueEvent(pos), b.enqueId, api, Site{}, ids[i]);
    ReleaseEventId(EnQueEvent(pos), b.enqueId);
    b.enqueId = -1;
    return i;
}

void QueueBase::Free(uint32_t ubOffset) {
    const char* api = "TQue::FreeTensor";
    int i = Find(api, ubOffset);
    if (state[i] == BufState::FREE) Fail(api, Fmt("buffer %d is already FREE", i));
    if (state[i] == BufState::ENQUE) Fail(api, Fmt("buffer %d is still enqueued", i));
    state[i] = BufState::FREE;
    --Cur().liveBufs[int(pos)];
    BufEvents& b = Cur().sync.bufs[ids[i]];
    auto e = AscendC::HardEvent(b.freeEvent);
    b.freeId = AllocEventId(e, api);
    SetFlagAt(e, b.freeId, api, Site{}, ids[i]);
    ++b.gen;
    b.free = true;
}

const char* PositionName(AscendC::TPosition p) {
    static const char* const kNames[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2", "VECIN", "VECOUT", "VECCALC", "SPM", "TSCM"};
    return kNames[int(p)];
}

QueueBase::~QueueBase() {
    if (!tCore || !tLeak.empty()) return;
    for (size_t i = 0; i < state.size(); ++i)
        if (state[i] != BufState::FREE) {
            tLeak = Prefix("kernel end") + Fmt("buffer %zu of a %s queue is %s at kernel end; every tensor must be freed", i,
                        PositionName(pos), StateName(state[i]));
            return;
        }
}

void CheckUbOperand(const char* api, const char* which, AscendC::TPosition pos, uint32_t ubOffset) {
    if (!AscendC::IsUb(pos)) Fail(api, Fmt("%s tensor is not in UB (VECIN/VECOUT/VECCALC)", which));
    if (ubOffset % 32 != 0) Fail(api, Fmt("%s UB address %u is not 32-byte aligned", which, ubOffset));
}

void CheckCopyPath(const char* api, const char* doc, const char* which, AscendC::TPosition pos,
                   std::initializer_list<AscendC::TPosition> allowed) {
    std::string list;
    for (AscendC::TPosition a : allowed) {
        if (a == pos) return;
        list += std::string(list.empty() ? "" : ", ") + PositionName(a);
    }
    Fail(api, Fmt("%s tensor is in TPosition %s; on %s the doc (%s) lists only %s for this direction", which, PositionName(pos),
                  Cur().chip->socVersion, doc, list.c_str()));
}

void CheckFits(const char* api, const char* which, uint64_t needBytes, uint32_t haveBytes) {
    if (needBytes > haveBytes)
        Fail(api, Fmt("%s tensor needs at least %llu bytes, it has %u", which, (unsigned long long)needBytes, haveBytes));
}

void CheckDataCopyLen(const char* api, uint64_t bytes) {
    if (bytes % 32 != 0)
        Fail(api, Fmt("length %llu bytes is not a multiple of 32 (the NPU would silently drop the last %llu bytes)",
                      (unsigned long long)bytes, (unsigned long long)(bytes % 32)));
}

void CheckGlobalSize(const char* api, uint64_t needElems, uint64_t haveElems) {
    if (needElems > haveElems)
        Fail(api, Fmt("GM access of %llu elements overruns the GlobalTensor's %llu", (unsigned long long)needElems, (unsigned long long)haveElems));
}

void CheckDataCopyPad(const char* api, uint32_t blockLen, uint32_t elemSize, uint16_t blockCount) {
    Core& c = Cur();
    if (!c.chip->hasDataCopyPad) Fail(api, Fmt("DataCopyPad is not supported on %s (CANN's headers declare it deprecated there and compile it to nothing)",
                                               c.chip->socVersion));
    if (blockLen % elemSize != 0) Fail(api, Fmt("blockLen %u bytes is not a multiple of the element size %u", blockLen, elemSize));
    if (blockLen > 2097151) Fail(api, Fmt("blockLen %u exceeds 2097151", blockLen));
    if (blockCount > 4095) Fail(api, Fmt("blockCount %u exceeds 4095", blockCount));
}

void CheckVecOperand(const char* api, const char* which, AscendC::TPosition pos, uint32_t ubOffset, uint64_t needBytes, uint32_t haveBytes) {
    CheckUbOperand(api, which, pos, ubOffset);
    CheckFits(api, which, needBytes, haveBytes);
}

void CheckCount(const char* api, int64_t count) {
    if (count < 0) Fail(api, Fmt("count %lld is negative", (long long)count));
}

uint32_t ReduceTmpElems(uint32_t count, uint32_t elemSize) {
    uint32_t perRepeat = 256 / elemSize, perBlock = 32 / elemSize;
    uint32_t first = std::max<uint32_t>(1, count / perRepeat);
    return (first + perBlock - 1) / perBlock * perBlock;
}

void CheckCastMode(const char* src, const char* dst, AscendC::RoundMode mode) {
    using AscendC::RoundMode;
    Core& c = Cur();
    std::string s = src, d = dst;
    bool ok = false;
    if ((s == "bfloat16_t" || d == "bfloat16_t") && !c.chip->hasBf16) Fail("Cast", Fmt("bfloat16_t does not exist on %s", c.chip->socVersion));
    if ((s == "half" || s == "bfloat16_t") && d == "float") ok = mode == RoundMode::CAST_NONE;
    else if (s == "float" && d == "half") ok = mode == RoundMode::CAST_NONE || (c.chip->hasDataCopyPad && mode == RoundMode::CAST_RINT);
    else if (s == "float" && d == "bfloat16_t") ok = mode == RoundMode::CAST_RINT;
    // Cast.md lists more modes for these pairs; the twin implements the ones it models exactly.
    else if (s == "int32_t" && d == "float") ok = mode == RoundMode::CAST_NONE;
    else if (s == "float" && d == "int32_t") ok = mode == RoundMode::CAST_FLOOR || mode == RoundMode::CAST_RINT;
    else Fail("Cast", Fmt("%s -> %s is not implemented in the twin", src, dst));
    if (!ok) Fail("Cast", Fmt("%s -> %s with round mode %d is not supported on %s (or not implemented in the twin)", src, dst, int(mode), c.chip->socVersion));
}

void SyncAllBlocks() {
    Core& c = Cur();
    if (!c.chip->hardSyncAll)
        Fail("SyncAll", Fmt("hardware SyncAll does not exist on %s (CANN compiles it to nothing there, so the blocks would race); use "
                            "SyncAll(gmWorkspace, ubWorkspace, usedCores)",
                            c.chip->socVersion));
    if (c.kernelType != kKernelTypeMixAiv10)
        Fail("SyncAll", Fmt("hardware SyncAll in a kernel of type %s: only KERNEL_TYPE_MIX_AIV_1_0 starts the scheduler that carries "
                            "cross-core flags for a vector kernel",
                            KernelTypeName(c.kernelType)));
    BarrierAt(AscendC::PIPE_ALL, Site{});
    double arrive = CostDrain(c.cost);
    if (uint64_t(c.blockNum) > c.chip->vectorCores)
        Fail("SyncAll", Fmt("block_dim %lld exceeds the %u vector cores; not all blocks would be resident", (long long)c.blockNum, c.chip->vectorCores));
    std::unique_lock<std::mutex> lk(gBarrier->m);
    double& latest = Slot(gBarrier->hardArrive, c.sync.epoch);
    latest = std::max(latest, arrive);
    Meet(gBarrier->hard, lk, "SyncAll");
    CostResume(c.cost, latest + c.cost.p->syncAll);
    ++c.sync.epoch;
}

namespace {
// SyncAll.md's second way to zero the soft SyncAll's region: in the kernel, every participating
// block zeroing all of it. Nothing orders one block's zeroing before another's first count but
// time: it holds when, with the cores of a batch-mode launch starting together (op_host sets
// SetScheduleMode(1) for kernels that sync), every block's zeroing has landed at least the
// assumed start skew (soft_sync_start_skew) before the first block counts. Called by the lowest
// participant once every participant has arrived (their early writes and arrivals are final).
// No early write into the region: the region was zeroed before the launch (the counts check it).
void CheckKernelZeroing(const uint8_t* region, uint64_t bytes, uint32_t total) {
    const char* api = "SyncAll(gmWorkspace, ubWorkspace, usedCores)";
    Core& c = Cur();
    const std::vector<Core>& cores = *gBarrier->cores;
    const uint8_t* end = region + bytes;
    int zeroer = -1;
    for (uint32_t b = 0; b < total && zeroer < 0; ++b)
        for (const Core::EarlyWrite& w : cores[b].earlyWrites)
            if (w.p < end && w.p + w.bytes > region) zeroer = int(b);
    if (zeroer < 0) return;
    int lateBlock = -1, firstBlock = -1;
    double late = 0, first = 0;
    for (uint32_t b = 0; b < total; ++b) {
        std::map<uint64_t, uint64_t> covered;  // byte ranges of the region this block wrote
        for (const Core::EarlyWrite& w : cores[b].earlyWrites) {
            if (w.p >= end || w.p + w.bytes <= region) continue;
            if (!c.countOnly && !w.zeros)
                Fail(api, Fmt("block %u's %s writes non-zero data into the soft SyncAll's gmWorkspace before its first SyncAll; "
                              "zeroing it in the kernel (SyncAll.md) is the only other write allowed there",
                              b, w.api));
            uint64_t lo = w.p > region ? uint64_t(w.p - region) : 0, hi = std::min<uint64_t>(bytes, uint64_t(w.p + w.bytes - region));
            covered[lo] = std::max(covered[lo], hi);
            if (lateBlock < 0 || w.lands > late) late = w.lands, lateBlock = int(b);
        }
        uint64_t reach = 0;
        for (const auto& r : covered) {
            if (r.first > reach) break;
            reach = std::max(reach, r.second);
        }
        if (reach < bytes)
            Fail(api, Fmt("block %d zeroes the soft SyncAll's gmWorkspace in the kernel, but block %u leaves bytes [%llu, %llu) of its "
                          "%llu unzeroed before its first SyncAll: every participating block must zero the whole region (SyncAll.md)",
                          zeroer, b, (unsigned long long)reach, (unsigned long long)bytes, (unsigned long long)bytes));
        double arrive = gBarrier->firstSoftArrive[b];
        if (firstBlock < 0 || arrive < first) first = arrive, firstBlock = int(b);
    }
    double skew = c.cost.p->softSyncSkew;
    if (late + skew > first)
        Fail(api, Fmt("block %d's zeroing of the soft SyncAll's gmWorkspace lands at cycle %.0f, block %d counts its first SyncAll at "
                      "cycle %.0f: less than the assumed start skew of %.0f cycles (soft_sync_start_skew) apart, so on the NPU the "
                      "zeroing may wipe that count and the barrier hang; zero the region earlier, or before the launch",
                      lateBlock, late, firstBlock, first, skew));
}
}  // namespace

// The soft SyncAll (SyncAll.md; [ADK] dav_m200 SoftSyncAllImpl): block i counts its SyncAlls in
// the int32 at gmWorkspace[8 i] and waits until the participants' counts add up. So the region
// must hold zeros before any block's first SyncAll: zeroed before the launch, or by every
// participant in the kernel early enough (CheckKernelZeroing).
void SoftSyncAllBlocks(int32_t* gm, uint64_t gmElems, uint64_t ubBytes, int32_t usedCores) {
    const char* api = "SyncAll(gmWorkspace, ubWorkspace, usedCores)";
    Core& c = Cur();
    uint64_t need = uint64_t(c.blockNum) * 32;
    if (usedCores < 0 || usedCores > c.blockNum) Fail(api, Fmt("usedCores %d outside 0..block_dim %lld", usedCores, (long long)c.blockNum));
    uint32_t total = usedCores ? uint32_t(usedCores) : uint32_t(c.blockNum);
    if (uint64_t(c.blockIdx) >= total) Fail(api, Fmt("block %lld calls it, but usedCores is %u", (long long)c.blockIdx, total));
    if (gmElems * 4 < need) Fail(api, Fmt("gmWorkspace holds %llu bytes, GetBlockNum() * 32 = %llu needed", (unsigned long long)gmElems * 4, (unsigned long long)need));
    if (ubBytes < need) Fail(api, Fmt("ubWorkspace holds %llu bytes, GetBlockNum() * 32 = %llu needed", (unsigned long long)ubBytes, (unsigned long long)need));
    BarrierAt(AscendC::PIPE_ALL, Site{});
    int32_t* slot = gm + c.blockIdx * 8;
    uint32_t k = ++c.softSyncs;
    if (k == 1) {  // every participant's zeroing done (in the twin's threads too) before anyone counts
        double arrive = CostDrain(c.cost);
        std::unique_lock<std::mutex> lk(gBarrier->m);
        Slot(gBarrier->firstSoftArrive, size_t(c.blockIdx)) = arrive;
        Rendezvous& r = gBarrier->softFirst;
        if (r.arrived == 0) r.total = total;
        Meet(r, lk, api);
        lk.unlock();
        if (c.blockIdx == 0) CheckKernelZeroing(reinterpret_cast<const uint8_t*>(gm), need, total);
    }
    Instr(api, kPipeMte3).Gm(slot, 4, true, GmWriteKind::kCount);
    if (!c.countOnly) {
        if (*slot != int32_t(k - 1))
            Fail(api, Fmt("this block's count in gmWorkspace is %d at its SyncAll #%u, not %u: the region was not zeroed before the launch "
                          "(the NPU barrier would pass early or never)",
                          *slot, k, k - 1));
        *slot = int32_t(k);
    }
    double arrive = CostDrain(c.cost);
    std::unique_lock<std::mutex> lk(gBarrier->m);
    Rendezvous& r = gBarrier->soft;
    if (r.arrived == 0 && r.total != total) r.total = total;
    if (r.total != total) Fail(api, Fmt("usedCores %u here, %u in another block", total, r.total));
    double& latest = Slot(gBarrier->softArrive, k);
    latest = std::max(latest, arrive);
    Meet(r, lk, api);
    CostResume(c.cost, latest + c.cost.p->softSyncAll);
    ++c.sync.epoch;
}

}  // namespace twin

namespace AscendC {

TPipe::TPipe() {
    twin::Core& c = twin::Cur();
    if (c.pipeAlive) twin::Fail("TPipe", "TPipe has already been constructed; one per kernel");
    c.pipeAlive = true;
    c.tpipe = this;
}

// As TPipe's Destroy: wait the flag of every freed queue buffer still pending, then PIPE_ALL.
// A violation here is reported at kernel end (a destructor must not throw).
TPipe::~TPipe() {
    twin::Core* c = twin::tCore;
    if (!c) return;
    c->pipeAlive = false;
    if (std::uncaught_exceptions() == 0 && twin::tLeak.empty()) {
        try {
            for (size_t i = 0; i < c->sync.bufs.size(); ++i) {
                twin::BufEvents& b = c->sync.bufs[i];
                if (b.free && b.freeId >= 0) twin::WaitFlagAt(HardEvent(b.freeEvent), b.freeId, "~TPipe", twin::Site{}, int32_t(i));
                b.freeId = -1;
            }
            twin::BarrierAt(PIPE_ALL, twin::Site{});
        } catch (const std::exception& ex) {
            twin::tLeak = ex.what();
        }
    }
    c->tpipe = nullptr;
}

}  // namespace AscendC

// ---- launcher (C ABI for airfuse/twin.py) ----

namespace {

void Call(void* fn, int n, uint8_t** a) {
    if (!airfuse_twin_launch::CallKernel(fn, n, a)) throw twin::Violation(twin::Fmt("the twin launches kernels with 3..8 parameters, got %d", n));
}

// The mutation test's controls (twin_disable_sync_site, twin_sync_sites); set between launches.
std::string gDisabledSite;
std::set<std::string> gSitesSeen;

void CopyErr(char* err, int len, const std::string& s) {
    if (len <= 0) return;
    std::snprintf(err, size_t(len), "%s", s.c_str());
}

}  // namespace

namespace {

int Launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args, const uint64_t* sizes,
           const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten, char* err, int errLen) {
    using namespace twin;
    const Chip* chip = airfuse::FindChip(soc);
    if (!chip) return CopyErr(err, errLen, Fmt("unknown chip '%s'", soc)), 1;
    const CostParams* cost = CostParamsFor(soc);
    if (!cost) return CopyErr(err, errLen, Fmt("the cost model has no parameters for '%s' (twin/src/cost.cpp)", soc)), 1;
    if (blockDim < 1 || blockDim > 65535) return CopyErr(err, errLen, Fmt("block_dim %u outside 1..65535", blockDim)), 1;
    std::vector<GmBuffer> gm;
    // Cross-core race shadows, one cell per byte: only where the launch moves real data. The
    // "workspace" argument starts with the chip's system workspace, which kernels must not touch.
    std::vector<std::unique_ptr<GmShadow>> shadows;
    for (int i = 0; i < nargs; ++i)
        if (args[i] && sizes[i]) {
            uint64_t skip = 0;
            if (std::strcmp(names[i], kWorkspace) == 0) {
                skip = std::min<uint64_t>(sizes[i], chip->systemWorkspaceBytes);
                gm.push_back({kSystemWorkspace, args[i], skip});
                if (skip == sizes[i]) continue;
            }
            gm.push_back({names[i], args[i] + skip, sizes[i] - skip});
            if (!countOnly) {
                shadows.push_back(std::make_unique<GmShadow>());
                shadows.back()->cells.resize(sizes[i] - skip);
                gm.back().shadow = shadows.back().get();
            }
        }
    std::vector<Core> cores(blockDim);
    Barrier barrier;
    barrier.hard.total = blockDim;
    barrier.done.assign(blockDim, 0);
    barrier.cores = &cores;
    gBarrier = &barrier;
    std::mutex errMutex;
    std::string firstErr;
    auto run = [&](uint32_t b) {
        Core& c = cores[b];
        c.chip = chip;
        c.kernel = kernel;
        c.blockIdx = b;
        c.blockNum = blockDim;
        c.countOnly = countOnly != 0;
        CostStart(c.cost, *cost, std::min<uint32_t>(blockDim, chip->vectorCores), b);
        // The early GM writes a copy made land with it (SoftSyncAllBlocks times them).
        c.cost.copyLandsContext = &c;
        c.cost.copyLands = [](void* core, double lands) {
            Core& k = *static_cast<Core*>(core);
            for (size_t i = k.earlyOpen; i < k.earlyWrites.size(); ++i) k.earlyWrites[i].lands = lands;
            k.earlyOpen = k.earlyWrites.size();
        };
        c.ub.assign(chip->ubBytes, 0xff);  // AllocTensor gives no defined contents: poison
        c.sync.ub.resize((chip->ubBytes + 31) / 32);
        c.disabledSite = gDisabledSite;
        c.gm = &gm;
        tCore = &c;
        tLeak.clear();
        std::string msg;
        try {
            Call(fn, nargs, args);
            if (!tLeak.empty()) throw Violation(tLeak);
            CheckEventsAtEnd();
            c.cost.end = CostDrain(c.cost);
        } catch (const std::exception& ex) {
            msg = ex.what();
        }
        tCore = nullptr;
        std::vector<uint8_t>().swap(c.ub);  // only the counters outlive the block
        decltype(c.sync.ub)().swap(c.sync.ub);
        std::lock_guard<std::mutex> lk(barrier.m);
        barrier.done[b] = 1;
        if (!msg.empty()) {
            barrier.aborted = true;
            std::lock_guard<std::mutex> ek(errMutex);
            if (firstErr.empty() || firstErr.rfind("aborted", 0) == 0) firstErr = msg;
        }
        barrier.cv.notify_all();
    };
    // Blocks run in waves of one per vector core, as the hardware schedules a block_dim above the
    // core count: thread count and UB memory stay bounded (a SyncAll then fails, as it must).
    uint32_t wave = std::max<uint32_t>(1, std::min<uint32_t>(blockDim, chip->vectorCores));
    for (uint32_t first = 0; first < blockDim && firstErr.empty(); first += wave) {
        std::vector<std::thread> threads;
        std::string startErr;
        for (uint32_t b = first; b < std::min<uint32_t>(blockDim, first + wave); ++b) {
            try {
                threads.emplace_back(run, b);
            } catch (const std::exception& ex) {  // std::system_error, or bad_alloc growing the list
                startErr = Fmt("could not start a thread for block %u of %u: %s", b, blockDim, ex.what());
                std::lock_guard<std::mutex> lk(barrier.m);
                barrier.aborted = true;  // started blocks waiting in SyncAll give up
                barrier.cv.notify_all();
                break;
            }
        }
        for (auto& t : threads) t.join();
        if (!startErr.empty()) firstErr = startErr;
    }
    gBarrier = nullptr;
    std::vector<const CoreCost*> costs;
    for (const Core& c : cores) costs.push_back(&c.cost);
    RecordLaunchCost(costs, chip->vectorCores, *cost);
    *bytesRead = *bytesWritten = 0;
    for (const Core& c : cores) {
        *bytesRead += c.gmRead;
        *bytesWritten += c.gmWritten;
        for (const auto& site : c.sitesSeen) gSitesSeen.insert(Fmt("%s:%d", Basename(site.first), site.second));
    }
    if (!firstErr.empty()) return CopyErr(err, errLen, firstErr), 1;
    return 0;
}

}  // namespace

// Nothing escapes into the caller's process: memory and thread failures are launch errors too.
extern "C" int twin_launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args,
                           const uint64_t* sizes, const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten,
                           char* err, int errLen) {
    try {
        return Launch(fn, kernel, soc, blockDim, nargs, args, sizes, names, countOnly, bytesRead, bytesWritten, err, errLen);
    } catch (const std::exception& ex) {
        twin::gBarrier = nullptr;
        return CopyErr(err, errLen, twin::Fmt("the twin could not run the launch: %s", ex.what())), 1;
    }
}

// The tiling key of the following launches (CPU debug's ICPU_SET_TILING_KEY, which sets the
// g_tilingKey TILING_KEY_IS reads): the key op_host's tiling set with SetTilingKey.
extern "C" void twin_set_tiling_key(uint64_t key) { g_tilingKey = key; }

// Mutation test: the SetFlag (with the WaitFlag that consumes it) or PipeBarrier called at
// "file:line" is skipped in the following launches; "" restores every site.
extern "C" void twin_disable_sync_site(const char* site) { gDisabledSite = site; }

// The SetFlag and PipeBarrier call sites executed since the last call, one "file:line" per
// line; returns the length needed (the list is cleared only when it fit).
extern "C" int twin_sync_sites(char* out, int len) { return airfuse_twin_launch::ReportSyncSites(gSitesSeen, out, len); }
