// The happens-before model of one vector core (twin/README.md, "Pipes and events"): event
// flags and TPipe's id pool, barriers, and the UB / GM shadow every instruction is checked against.
#include <algorithm>
#include <mutex>
#include "kernel_operator.h"

namespace twin {

using AscendC::HardEvent;

namespace {

struct EventPipes {
    const char* name;
    Pipe src, dst;
};
const EventPipes kEvents[kHardEvents] = {
    {"MTE2_V", kPipeMte2, kPipeV},    {"V_MTE3", kPipeV, kPipeMte3},       {"MTE3_V", kPipeMte3, kPipeV},
    {"V_MTE2", kPipeV, kPipeMte2},    {"S_V", kPipeS, kPipeV},             {"V_S", kPipeV, kPipeS},
    {"MTE2_S", kPipeMte2, kPipeS},    {"S_MTE2", kPipeS, kPipeMte2},       {"MTE3_S", kPipeMte3, kPipeS},
    {"S_MTE3", kPipeS, kPipeMte3},    {"MTE3_MTE2", kPipeMte3, kPipeMte2}, {"V_V", kPipeV, kPipeV},
    {"MTE2_MTE3", kPipeMte2, kPipeMte3},
};

// The event whose SetFlag/WaitFlag pair orders pipe `from` before pipe `to`.
std::string Missing(int from, int to) {
    if (from == to) return Fmt("PipeBarrier<PIPE_%s>", PipeName(from));
    for (const EventPipes& e : kEvents)
        if (e.src == from && e.dst == to) return Fmt("%s -> %s ordering (SetFlag/WaitFlag<HardEvent::%s>)", PipeName(from), PipeName(to), e.name);
    return Fmt("%s -> %s ordering", PipeName(from), PipeName(to));
}

// Who set a flag: "SetFlag at file:line", or "TQue::FreeTensor of InitBuffer #1 (...)".
std::string Who(const EventSlot& s) {
    if (s.site.file) return Fmt("SetFlag at %s:%d", Basename(s.site.file), s.site.line);
    if (s.buf >= 0) return Fmt("%s of %s", s.setApi, Cur().sync.bufs[s.buf].name.c_str());
    return s.setApi;
}

SyncState& St() { return Cur().sync; }

// Pipes other than S start an instruction only after S issued it, so they inherit everything
// S has waited for; not S's own stores, which need an S_<pipe> flag.
void Dispatch(Pipe p) {
    SyncState& s = St();
    if (p == kPipeS) return;
    for (int q = 0; q < kPipes; ++q)
        if (q != kPipeS) s.known[p].t[q] = std::max(s.known[p].t[q], s.known[kPipeS].t[q]);
}

// Whether an access by pipe p may assume access `seq` of pipe q complete.
bool Ordered(Pipe p, uint8_t q, uint32_t seq, uint32_t mySeq) {
    if (q == kNoPipe || seq == 0) return true;
    if (q == p) return p == kPipeS || seq == mySeq || St().known[p].t[p] >= seq;
    return St().known[p].t[q] >= seq;
}

// "SetFlag<HardEvent::V_S>(0) at common.h:52", or for the framework's own flags
// "TQue::FreeTensor: SetFlag<HardEvent::V_MTE2>(0) for InitBuffer #1 (TQue<VECIN> buffer 0)".
std::string FlagCall(const char* op, const char* api, HardEvent e, int32_t id, Site site, int32_t buf) {
    std::string call = Fmt("%s<HardEvent::%s>(%d)", op, EventName(e), id);
    if (site.file) return call + Fmt(" at %s:%d", Basename(site.file), site.line);
    return Fmt("%s: ", api) + call + (buf >= 0 ? " for " + St().bufs[buf].name : "");
}

EventSlot& Slot(const char* op, const char* api, HardEvent e, int32_t id, Site site, int32_t buf) {
    if (id < 0 || id >= kEventIds)
        Fail(FlagCall(op, api, e, id, site, buf).c_str(), Fmt("id %d outside 0..%d", id, kEventIds - 1));
    return St().events[int(e)][id];
}

// Whether the launch switched this call site off (mutation test); SetFlag and PipeBarrier sites
// are recorded as the units a mutation removes (a WaitFlag goes with its SetFlag).
bool Disabled(const Site& site, bool record) {
    if (!site.file) return false;
    Core& c = Cur();
    if (record) c.sitesSeen.insert({site.file, site.line});
    return !c.disabledSite.empty() && c.disabledSite == Fmt("%s:%d", Basename(site.file), site.line);
}

}  // namespace

const char* EventName(HardEvent e) { return kEvents[int(e)].name; }

// Every flag set must have been waited on: a pending one is a set the hardware never consumes
// (TPipe's destructor has waited the freed queue buffers' flags by now).
void CheckEventsAtEnd() {
    for (int e = 0; e < kHardEvents; ++e)
        for (int id = 0; id < kEventIds; ++id) {
            const EventSlot& slot = St().events[e][id];
            if (slot.set)
                Fail("kernel end", Fmt("HardEvent::%s id %d set by %s is never waited on", EventName(HardEvent(e)), id, Who(slot).c_str()));
        }
}

const char* PipeName(int p) {
    static const char* names[] = {"S", "V", "MTE2", "MTE3"};
    return p < kPipes ? names[p] : "none";
}

void SetFlagAt(HardEvent e, int32_t id, const char* api, Site site, int32_t buf) {
    EventSlot& slot = Slot("SetFlag", api, e, id, site, buf);
    if (Disabled(site, true)) {
        slot.muted = true;
        return;
    }
    if (slot.set)
        Fail(FlagCall("SetFlag", api, e, id, site, buf).c_str(), Fmt("id %d is still set by %s and not yet waited on: the second set is lost (undefined behaviour; a later "
                               "WaitFlag or the TPipe destructor hangs). Take ids from TPipe::FetchEventID/AllocEventID",
                               id, Who(slot).c_str()));
    SyncState& s = St();
    Pipe src = kEvents[int(e)].src;
    CostSetFlag(Cur().cost, src, kEvents[int(e)].dst, id);
    Dispatch(src);
    slot.set = true;
    slot.token = s.known[src];
    slot.token.t[src] = s.seq[src];
    slot.setApi = api;
    slot.site = site;
    slot.buf = buf;
}

void WaitFlagAt(HardEvent e, int32_t id, const char* api, Site site, int32_t buf) {
    EventSlot& slot = Slot("WaitFlag", api, e, id, site, buf);
    if (slot.muted) {
        slot.muted = false;
        return;
    }
    if (Disabled(site, false)) return;
    if (!slot.set)
        Fail(FlagCall("WaitFlag", api, e, id, site, buf).c_str(),
             Fmt("waits on id %d, which is not set (never set, or its set was consumed by another WaitFlag): the NPU would wait forever", id));
    Pipe dst = kEvents[int(e)].dst;
    CostWaitFlag(Cur().cost, kEvents[int(e)].src, dst, id);
    Dispatch(dst);
    St().known[dst].Join(slot.token);
    slot.set = false;
}

void BarrierAt(AscendC::pipe_t p, Site site) {
    if (Disabled(site, true)) return;
    SyncState& s = St();
    if (p == AscendC::PIPE_ALL) {
        CostBarrier(Cur().cost, kCostPipes);
        for (int q = 0; q < kPipes; ++q)
            for (int r = 0; r < kPipes; ++r) s.known[q].t[r] = s.seq[r];
        return;
    }
    Pipe pipe = p == AscendC::PIPE_V ? kPipeV : p == AscendC::PIPE_MTE2 ? kPipeMte2 : kPipeMte3;
    CostBarrier(Cur().cost, pipe);
    Dispatch(pipe);
    s.known[pipe].t[pipe] = s.seq[pipe];
}

namespace {
int32_t LowestFree(const char* api, HardEvent e) {
    uint8_t occ = St().occupied[int(e)];
    for (int32_t i = 0; i < kEventIds; ++i)
        if (!(occ & (1u << i))) return i;
    Fail(api, Fmt("all %d ids of HardEvent::%s are in use (each enqueued or freed queue buffer holds one until its DeQue or next "
                  "AllocTensor; AllocEventID holds one until ReleaseEventID)",
                  kEventIds, EventName(e)));
}
}  // namespace

int32_t AllocEventId(HardEvent e, const char* api) {
    int32_t id = LowestFree(api, e);
    St().occupied[int(e)] |= uint8_t(1u << id);
    return id;
}

void ReleaseEventId(HardEvent e, int32_t id) {
    if (id < 0 || id >= kEventIds) Fail("TPipe::ReleaseEventID", Fmt("HardEvent::%s id %d outside 0..%d", EventName(e), id, kEventIds - 1));
    // ReleaseEventID.md: "ReleaseEventID传入的TEventID需由对应的AllocEventID申请而来": an id not held
    // (a FetchEventID one, or released twice) would free an id a queue buffer or AllocEventID holds.
    if (!(St().occupied[int(e)] & (1u << id)))
        Fail("TPipe::ReleaseEventID", Fmt("HardEvent::%s id %d is not held: ReleaseEventID takes an id AllocEventID returned and not yet released",
                                          EventName(e), id));
    St().occupied[int(e)] &= uint8_t(~(1u << id));
}

int32_t FetchEventId(HardEvent e, const char* api) {
    if (!Cur().tpipe) Fail(api, "no TPipe constructed");
    return LowestFree(api, e);
}

static_assert(kPipeS == kCostPipeS && kPipeV == kCostPipeV && kPipeMte2 == kCostPipeMte2 && kPipeMte3 == kCostPipeMte3 && kPipes == kCostPipes,
              "the cost model takes the twin's pipe numbers");

Instr::Instr(const char* api, Pipe pipe) : api_(api), pipe_(pipe) {
    CostOpen(Cur().cost, pipe);
    Dispatch(pipe);
    seq_ = ++St().seq[pipe];
}

namespace {
// The cost model's latency class of a vector API, by its name (the table's vec_latency_* rows).
VecClass ApiVecClass(const std::string& a) {
    if (a == "Add" || a == "Sub" || a == "Adds") return VecClass::kAdd;
    if (a == "Mul" || a == "Muls") return VecClass::kMul;
    if (a == "Div") return VecClass::kDiv;
    if (a == "Max" || a == "Min" || a == "Maxs" || a == "Mins") return VecClass::kMax;
    if (a == "ReduceSum" || a == "WholeReduceSum") return VecClass::kReduce;
    if (a == "Exp") return VecClass::kExp;
    if (a == "Sqrt") return VecClass::kSqrt;
    return VecClass::kOther;
}
}  // namespace

void Instr::Vector(uint64_t elems, uint32_t elemBytes) const { CostVector(Cur().cost, ApiVecClass(api_), elems, elemBytes, api_); }

namespace {
std::string BufferAt(uint32_t off) {
    for (const UbRange& r : St().ranges)
        if (off >= r.off && off < r.off + r.bytes) return r.name;
    return "memory outside any InitBuffer";
}

// Ordering problem of access (p, seq) with one cell, or an empty string.
std::string Conflict(const UbCell& u, Pipe p, uint32_t seq, bool write) {
    if (!write && u.unwritten) return "reads memory never written since its AllocTensor (or the launch, for TBuf memory)";
    if (!Ordered(p, u.writer, u.writeSeq, seq))
        return Fmt("%s memory last written by %s (%s) with no ordering between them: missing %s", write ? "overwrites" : "reads",
                   u.writeApi, PipeName(u.writer), Missing(u.writer, p).c_str());
    if (write)
        for (int q = 0; q < kPipes; ++q)
            if (!Ordered(p, uint8_t(q), u.readSeq[q], seq))
                return Fmt("overwrites memory still being read by %s (%s) with no ordering between them: missing %s", u.readApi[q],
                           PipeName(q), Missing(q, p).c_str());
    return {};
}
}  // namespace

void Instr::Ub(const char* which, uint32_t off, uint64_t bytes, int32_t buf, uint32_t gen, bool write) const {
    SyncState& s = St();
    if (buf >= 0 && s.bufs[buf].gen != gen)
        Fail(api_, Fmt("%s tensor at UB %u of %s is used after TQue::FreeTensor released it", which, off, s.bufs[buf].name.c_str()));
    if (bytes == 0) return;
    uint64_t end = off + bytes;
    for (uint64_t b = off / 32; b * 32 < end; ++b) {
        UbCell& u = s.ub[b];
        std::string why = Conflict(u, pipe_, seq_, write);
        if (!why.empty()) {
            uint64_t last = b;  // the run of blocks with the same problem, for the message
            while ((last + 1) * 32 < end && Conflict(s.ub[last + 1], pipe_, seq_, write) == why) ++last;
            uint64_t lo = std::max<uint64_t>(off, b * 32), hi = std::min<uint64_t>(end, (last + 1) * 32);
            Fail(api_, Fmt("(%s) %s UB [%llu, %llu) of %s %s", PipeName(pipe_), which, (unsigned long long)lo, (unsigned long long)hi,
                           BufferAt(uint32_t(lo)).c_str(), why.c_str()));
        }
        if (write) {
            u.writer = pipe_;
            u.writeSeq = seq_;
            u.writeApi = api_;
            u.unwritten = false;
            for (int q = 0; q < kPipes; ++q) u.readSeq[q] = 0;
        } else {
            u.readSeq[pipe_] = seq_;
            u.readApi[pipe_] = api_;
        }
    }
}

namespace {
std::string GmConflict(const GmCell& g, int16_t me, uint32_t epoch, Pipe p, uint32_t seq, bool write, GmWriteKind kind) {
    // Zeros over another block's early zeros, or a soft SyncAll's count over them: the soft
    // SyncAll's kernel-side zeroing, judged by its timing in SoftSyncAllBlocks.
    bool zeroing = write && kind != GmWriteKind::kPlain && g.zeroFill;
    if (g.writer >= 0 && g.writer != me && g.writeEpoch == epoch && !zeroing)
        return Fmt("%s bytes block %d wrote (%s) with no SyncAll between them: cross-core race", write ? "overwrites" : "reads", g.writer,
                   g.writeApi);
    if (write && g.reader != kNoBlock && g.reader != me && g.readEpoch == epoch)
        return g.reader == kManyBlocks ? "overwrites bytes several blocks read with no SyncAll between them: cross-core race"
                                       : Fmt("overwrites bytes block %d read with no SyncAll between them: cross-core race", g.reader);
    if (g.writer == me && !Ordered(p, g.writePipe, g.writeSeq, seq))
        return Fmt("%s bytes this block wrote by %s (%s) with no ordering between them: missing %s", write ? "overwrites" : "reads",
                   g.writeApi, PipeName(g.writePipe), Missing(g.writePipe, p).c_str());
    if (write && g.lastReader == me && !Ordered(p, g.readPipe, g.readSeq, seq))
        return Fmt("overwrites bytes this block is still reading by %s (%s) with no ordering between them: missing %s", g.readApi,
                   PipeName(g.readPipe), Missing(g.readPipe, p).c_str());
    return {};
}
}  // namespace

void Instr::Gm(const void* p, uint64_t bytes, bool write, GmWriteKind kind) const {
    const GmBuffer& buf = CheckGm(api_, p, bytes);
    CostGm(Cur().cost, buf.base, static_cast<const uint8_t*>(p) - buf.base, bytes, write);
    Core& c = Cur();
    bool early = write && pipe_ == kPipeMte3 && kind != GmWriteKind::kCount && c.sync.epoch == 0;
    if (early) c.earlyWrites.push_back({static_cast<const uint8_t*>(p), bytes, kind == GmWriteKind::kZeros, 0.0, api_});
    if (!early && kind == GmWriteKind::kZeros) kind = GmWriteKind::kPlain;  // zeros after a SyncAll are ordinary data
    if (!buf.shadow) return;
    int16_t me = int16_t(c.blockIdx);
    uint32_t epoch = c.sync.epoch;
    std::lock_guard<std::mutex> lock(buf.shadow->m);
    uint64_t off = static_cast<const uint8_t*>(p) - buf.base, end = off + bytes;
    for (uint64_t i = off; i < end; ++i) {
        GmCell& g = buf.shadow->cells[i];
        std::string why = GmConflict(g, me, epoch, pipe_, seq_, write, kind);
        if (!why.empty()) {
            uint64_t last = i;
            while (last + 1 < end && GmConflict(buf.shadow->cells[last + 1], me, epoch, pipe_, seq_, write, kind) == why) ++last;
            Fail(api_, Fmt("(%s) %s GM bytes [%llu, %llu) of '%s' %s", PipeName(pipe_), write ? "writes" : "reads", (unsigned long long)i,
                           (unsigned long long)(last + 1), buf.name.c_str(), why.c_str()));
        }
        if (write) {
            g.writer = me;
            g.writeEpoch = epoch;
            g.writePipe = pipe_;
            g.writeSeq = seq_;
            g.writeApi = api_;
            g.zeroFill = kind == GmWriteKind::kZeros;
            g.reader = kNoBlock;
            g.lastReader = kNoBlock;
            continue;
        }
        if (g.reader == kNoBlock || g.readEpoch != epoch) {
            g.reader = me;
            g.readEpoch = epoch;
        } else if (g.reader != me) {
            g.reader = kManyBlocks;
        }
        g.lastReader = me;
        g.readPipe = pipe_;
        g.readSeq = seq_;
        g.readApi = api_;
    }
}

void ScalarResultStore(const char* api, uint32_t dstOff, int32_t buf, uint32_t gen) {
    int32_t vs = FetchEventId(HardEvent::V_S, api);
    SetFlagAt(HardEvent::V_S, vs, api, Site{});
    WaitFlagAt(HardEvent::V_S, vs, api, Site{});
    Instr(api, kPipeS).Ub("dst", dstOff, 4, buf, gen, true);
    for (HardEvent e : {HardEvent::S_V, HardEvent::S_MTE3}) {
        int32_t id = FetchEventId(e, api);
        SetFlagAt(e, id, api, Site{});
        WaitFlagAt(e, id, api, Site{});
    }
}

void ScalarLoadAfterVector(const char* api, uint32_t dstOff, uint32_t bytes, int32_t buf, uint32_t gen) {
    int32_t vs = FetchEventId(HardEvent::V_S, api);
    SetFlagAt(HardEvent::V_S, vs, api, Site{});
    WaitFlagAt(HardEvent::V_S, vs, api, Site{});
    Instr(api, kPipeS).Ub("dst", dstOff, bytes, buf, gen, false);
}

void ScalarStoresThenVector(const char* api, uint32_t dstOff, uint32_t bytes, int32_t buf, uint32_t gen) {
    Instr(api, kPipeS).Ub("dst", dstOff, bytes, buf, gen, true);
    int32_t id = FetchEventId(HardEvent::S_V, api);
    SetFlagAt(HardEvent::S_V, id, api, Site{});
    WaitFlagAt(HardEvent::S_V, id, api, Site{});
}

}  // namespace twin
