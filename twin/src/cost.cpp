// The per-pipe time model (twin/include/twin/cost.h, twin/README.md "Cost model"), one copy
// compiled into both twins; it includes nothing of either twin's API.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "../include/twin/cost.h"

namespace twin {

// Every number the model uses, per chip ("910B" rows serve Ascend910B2 and Ascend910B3).
// [PYPTO] = Huawei's own instruction cost table of its tile compiler, gitcode cann/pypto
// framework/src/interface/operation/cycles.{h,cpp} (INTRIN_LATENCY_IN_OP, INTRIN_PARALLELISM_IN_OP,
// SYNC_OP_CYCLES, DEFAULT_LATENCY); [LLS] = JiusiServe/light-llm-simulator conf/hardware_config.py;
// [PTO] = huawei-csl/pto-kernels .skills/npu_kernel_general/skills.md; [ABC] = Ascend
// ascend-boost-comm example/ops/include/hardware.h (HardwareInfo<ASCEND_V220>).
const CostRow kCostTable[] = {
    {"Ascend910B2", "clock_ghz", 1.8, "GHz", false, "[PTO] cube_freq=1800; = 22 TFLOPS fp16 vector [LLS] / (48 cores x 128 lanes x 2)"},
    {"Ascend910B3", "clock_ghz", 1.8, "GHz", false, "derived: 18.4 TFLOPS fp16 vector [LLS] / (40 cores x 128 lanes x 2) = 1.797"},
    {"Ascend310P3", "clock_ghz", 1.0, "GHz", true, "no public figure found"},
    {"Ascend910B2", "hbm_gbps", 1600, "GB/s", false, "[LLS] local_memory_bandwidth 1.6 TB/s (perf_anchors.md 1.1)"},
    {"Ascend910B3", "hbm_gbps", 1600, "GB/s", false, "[LLS] local_memory_bandwidth 1.6 TB/s"},
    {"Ascend310P3", "hbm_gbps", 204, "GB/s", true, "half of the Atlas 300I Duo card's 408 GB/s (press page, perf_anchors.md 1.2)"},
    {"910B", "l2_speedup", 5, "x HBM", false, "[ABC] l2BW = 5, hbmBW = 1"},
    {"310P", "l2_speedup", 5, "x HBM", true, "the A2 ratio of [ABC]; no 310P figure found"},
    {"910B", "mte_bytes_per_cycle", 128, "B/cycle", false, "[PYPTO] UB_COPY_IN/UB_COPY_OUT parallelism 64 fp16 per cycle"},
    {"310P", "mte_bytes_per_cycle", 128, "B/cycle", true, "the A2 figure of [PYPTO]"},
    {"910B", "mte_latency", 50, "cycles", false, "[PYPTO] UB_COPY_IN/UB_COPY_OUT latency"},
    {"310P", "mte_latency", 50, "cycles", true, "the A2 figure of [PYPTO]"},
    {"910B", "vec_bytes_per_cycle", 256, "B/cycle", false, "[PYPTO] UB_ADD/MUL/DIV/ROWSUM/MAXIMUM parallelism 128 fp16 = 64 fp32 per cycle"},
    {"310P", "vec_bytes_per_cycle", 256, "B/cycle", true, "the A2 figure of [PYPTO]"},
    {"910B", "vec_exp_elems_per_cycle", 32, "elements/cycle", false, "[PYPTO] UB_EXP/UB_SQRT parallelism 32"},
    {"310P", "vec_exp_elems_per_cycle", 32, "elements/cycle", true, "the A2 figure of [PYPTO]"},
    {"910B", "vec_latency_add", 6, "cycles", false, "[PYPTO] UB_ADD/SUB/ADDS fp latency (Add, Sub, Adds)"},
    {"910B", "vec_latency_mul", 7, "cycles", false, "[PYPTO] UB_MUL/MULS latency (Mul, Muls)"},
    {"910B", "vec_latency_div", 13, "cycles", false, "[PYPTO] UB_DIV latency"},
    {"910B", "vec_latency_exp", 12, "cycles", false, "[PYPTO] UB_EXP latency"},
    {"910B", "vec_latency_max", 4, "cycles", false, "[PYPTO] UB_MAXIMUM latency (Max, Min, Maxs, Mins)"},
    {"910B", "vec_latency_reduce", 20, "cycles", false, "[PYPTO] UB_ROWSUM fp32 latency (ReduceSum, WholeReduceSum)"},
    {"910B", "vec_latency_other", 10, "cycles", false, "[PYPTO] DEFAULT_LATENCY, for ops it does not list (Cast, Duplicate, Abs, Gather, CreateVecIndex); also Sqrt and Brcb, no latency of theirs found"},
    {"310P", "vec_latency_add", 6, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_mul", 7, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_div", 13, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_exp", 12, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_max", 4, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_reduce", 20, "cycles", true, "the A2 figure of [PYPTO]"},
    {"310P", "vec_latency_other", 10, "cycles", true, "the A2 figure of [PYPTO]"},
    {"910B", "barrier", 18, "cycles", false, "[PYPTO] SYNC_OP_CYCLES BAR.V"},
    {"310P", "barrier", 18, "cycles", true, "the A2 figure of [PYPTO]"},
    {"910B", "issue", 1, "cycles", false, "[PYPTO] SYNC_SRC / SYNC_DST 1 cycle; taken for every instruction the scalar unit issues"},
    {"310P", "issue", 1, "cycles", true, "the A2 figure of [PYPTO]"},
    {"910B", "scalar_ub", 20, "cycles", true, "no figure found: a scalar UB load plus the scalar math around it"},
    {"310P", "scalar_ub", 20, "cycles", true, "no figure found"},
    {"910B", "scalar_gm", 200, "cycles", true, "no figure found: an uncached GM round trip"},
    {"310P", "scalar_gm", 200, "cycles", true, "no figure found"},
    {"910B", "sync_all", 500, "cycles", true, "no figure found: hardware cross-core barrier"},
    {"310P", "soft_sync_all", 2000, "cycles", true, "no figure found: GM counters polled by every core"},
    {"910B", "soft_sync_all", 2000, "cycles", true, "no figure found: GM counters polled by every core"},
    {"910B", "soft_sync_start_skew", 2000, "cycles", true,
     "no figure found: how far apart the cores of a batch-mode launch may start; the soft SyncAll's kernel-side zeroing must land this much before any core's first count (twin/README.md)"},
    {"310P", "soft_sync_start_skew", 2000, "cycles", true, "no figure found: as 910B"},
};
const int kCostRows = int(sizeof kCostTable / sizeof *kCostTable);

namespace {

const char* Family(const char* soc) {
    if (std::strncmp(soc, "Ascend910B", 10) == 0) return "910B";
    if (std::strncmp(soc, "Ascend310P", 10) == 0) return "310P";
    return "";
}

bool Lookup(const char* soc, const char* name, double* out) {
    for (const char* key : {soc, Family(soc)})
        for (const CostRow& r : kCostTable)
            if (std::strcmp(r.chip, key) == 0 && std::strcmp(r.name, name) == 0) return *out = r.value, true;
    return false;
}

struct ChipCost {
    CostParams p;
    bool ok = true;
};

ChipCost Load(const char* soc) {
    ChipCost c;
    auto get = [&](const char* name, double& v) { c.ok = Lookup(soc, name, &v) && c.ok; };
    get("clock_ghz", c.p.clockGhz);
    get("hbm_gbps", c.p.hbmGBps);
    get("l2_speedup", c.p.l2Speedup);
    get("mte_bytes_per_cycle", c.p.mteBytesPerCycle);
    get("mte_latency", c.p.mteLatency);
    get("issue", c.p.issue);
    get("barrier", c.p.barrier);
    get("scalar_ub", c.p.scalarUb);
    get("scalar_gm", c.p.scalarGm);
    get("soft_sync_all", c.p.softSyncAll);
    get("soft_sync_start_skew", c.p.softSyncSkew);
    if (!Lookup(soc, "sync_all", &c.p.syncAll)) c.p.syncAll = 0;  // chips without it never call it
    get("vec_bytes_per_cycle", c.p.vecBytesPerCycle);
    get("vec_exp_elems_per_cycle", c.p.vecExpPerCycle);
    get("vec_latency_add", c.p.latAdd);
    get("vec_latency_mul", c.p.latMul);
    get("vec_latency_div", c.p.latDiv);
    get("vec_latency_exp", c.p.latExp);
    get("vec_latency_max", c.p.latMax);
    get("vec_latency_reduce", c.p.latReduce);
    get("vec_latency_other", c.p.latOther);
    return c;
}

const ChipCost* Find(const char* soc) {
    static const ChipCost b2 = Load("Ascend910B2"), b3 = Load("Ascend910B3"), p3 = Load("Ascend310P3");
    const ChipCost* c = std::strcmp(soc, "Ascend910B2") == 0 ? &b2 : std::strcmp(soc, "Ascend910B3") == 0 ? &b3
                      : std::strcmp(soc, "Ascend310P3") == 0 ? &p3 : nullptr;
    return c && c->ok ? c : nullptr;
}

// AIRFUSE_TWIN_COST_TRACE=<block>: every instruction of that block as it is costed, one line each
// on stderr (pipe, name, start, cycles occupied, when its result lands), to see where a kernel's
// time goes. Off (no output) when unset.
const char* kPipeNames[] = {"S", "V", "MTE2", "MTE3"};
long TraceBlock() {
    static const long block = [] {
        const char* v = std::getenv("AIRFUSE_TWIN_COST_TRACE");
        return v ? std::strtol(v, nullptr, 10) : -1L;
    }();
    return block;
}
void Trace(const CoreCost& c, int q, const char* what, double start, double occupy, double done) {
    if (TraceBlock() < 0 || c.block != uint32_t(TraceBlock())) return;
    std::fprintf(stderr, "cost %-5s %-16s start %8.1f occupy %7.1f done %8.1f\n", q >= 0 && q < kCostPipes ? kPipeNames[q] : "?", what, start,
                 occupy, done);
}

// Costs the open instruction: it starts once issued and once its pipe is free.
void Commit(CoreCost& c) {
    if (c.open < 0) return;
    int q = c.open;
    c.open = -1;
    if (q == kCostPipeS) {
        double t = c.scalarGm ? c.p->scalarGm : c.p->scalarUb;
        c.work[q] += t;
        c.s += t;
        c.done[q] = c.busy[q] = c.s;
        Trace(c, q, "scalar", c.s - t, t, c.s);
        return;
    }
    double start = std::max(c.s, c.busy[q]), occupy, latency;
    if (q == kCostPipeV) {
        occupy = c.vecOccupy;
        latency = c.vecLatency;
    } else {
        occupy = c.hbmBytes / c.hbmShare + c.l2Bytes / c.l2Share;
        latency = c.p->mteLatency;
        c.portWork += occupy;
        if (c.copyLands) c.copyLands(c.copyLandsContext, start + occupy + latency);
    }
    c.busy[q] = start + occupy;
    c.done[q] = std::max(c.done[q], start + occupy + latency);
    c.work[q] += occupy;
    c.s += c.p->issue;
    Trace(c, q, q == kCostPipeV ? c.vecName : "copy", start, occupy, start + occupy + latency);
}

// The last launch's modelled time (twin_last_cost), in microseconds.
struct LaunchCost {
    double us = 0;
    double slowestBlock = 0;
    double blockUs = 0;
    double work[kCostPipes] = {};
};
LaunchCost gLastCost;

}  // namespace

const CostParams* CostParamsFor(const char* soc) {
    const ChipCost* c = Find(soc);
    return c ? &c->p : nullptr;
}

uint64_t ReadRanges::Overlap(uint64_t lo, uint64_t hi) const {
    uint64_t n = 0;
    auto it = spans.upper_bound(lo);
    if (it != spans.begin()) --it;
    for (; it != spans.end() && it->first < hi; ++it) {
        uint64_t a = std::max(lo, it->first), b = std::min(hi, it->second);
        if (a < b) n += b - a;
    }
    return n;
}

void ReadRanges::Add(uint64_t lo, uint64_t hi) {
    auto it = spans.upper_bound(lo);
    if (it != spans.begin() && std::prev(it)->second >= lo) --it;
    while (it != spans.end() && it->first <= hi) {
        lo = std::min(lo, it->first);
        hi = std::max(hi, it->second);
        it = spans.erase(it);
    }
    spans[lo] = hi;
}

// GM bandwidth is shared evenly by the cores that run at once; one core gets no more than its port.
void CostStart(CoreCost& c, const CostParams& p, uint32_t activeCores, uint32_t block) {
    c = CoreCost{};
    c.p = &p;
    c.block = block;
    double hbm = p.hbmGBps / p.clockGhz / activeCores;  // bytes per cycle
    c.hbmShare = std::min(p.mteBytesPerCycle, hbm);
    c.l2Share = std::min(p.mteBytesPerCycle, hbm * p.l2Speedup);
}

void CostOpen(CoreCost& c, int pipe) {
    Commit(c);
    c.open = pipe;
    c.hbmBytes = c.l2Bytes = c.vecOccupy = c.vecLatency = 0;
    c.scalarGm = false;
}

// A copy's GM bytes: reads of bytes this core already read in this launch come from L2.
void CostGm(CoreCost& c, const void* buffer, uint64_t off, uint64_t bytes, bool write) {
    if (c.open == kCostPipeS) {
        c.scalarGm = true;
        return;
    }
    if (write) {
        c.hbmBytes += double(bytes);
        return;
    }
    ReadRanges& r = c.reads[buffer];
    uint64_t again = r.Overlap(off, off + bytes);
    r.Add(off, off + bytes);
    c.l2Bytes += double(again);
    c.hbmBytes += double(bytes - again);
}

// Repeats of 256 B of the widest operand, at the class's rate; the result lands `latency` later.
void CostVector(CoreCost& c, VecClass cls, uint64_t elems, uint32_t elemBytes, const char* name) {
    const CostParams& v = *c.p;
    double bytes = double(elems) * elemBytes, perCycle = v.vecBytesPerCycle, latency = v.latOther;
    switch (cls) {
        case VecClass::kAdd: latency = v.latAdd; break;
        case VecClass::kMul: latency = v.latMul; break;
        case VecClass::kDiv: latency = v.latDiv; break;
        case VecClass::kMax: latency = v.latMax; break;
        case VecClass::kReduce: latency = v.latReduce; break;
        case VecClass::kExp: latency = v.latExp, perCycle = std::min(perCycle, v.vecExpPerCycle * elemBytes); break;
        // [PYPTO] gives Sqrt the parallelism of Exp; its latency is vec_latency_other.
        case VecClass::kSqrt: perCycle = std::min(perCycle, v.vecExpPerCycle * elemBytes); break;
        case VecClass::kOther: break;
    }
    double repeats = std::max(1.0, std::ceil(bytes / 256));
    c.vecOccupy = repeats * std::max(1.0, 256 / perCycle);
    c.vecName = name;
    c.vecLatency = latency;
}

void CostSetFlag(CoreCost& c, int src, int dst, int id) {
    Commit(c);
    c.flag[src][dst][id] = src == kCostPipeS ? c.s : std::max(c.s, c.done[src]);
    c.s += c.p->issue;
}

void CostWaitFlag(CoreCost& c, int src, int dst, int id) {
    Commit(c);
    double fires = c.flag[src][dst][id];
    Trace(c, dst, "WaitFlag", std::max(c.s, c.busy[dst]), 0, fires);
    if (dst == kCostPipeS) {
        c.s = std::max(c.s, fires) + c.p->issue;
        return;
    }
    c.busy[dst] = std::max({c.busy[dst], c.s, fires});
    c.done[dst] = std::max(c.done[dst], c.busy[dst]);
    c.s += c.p->issue;
}

void CostBarrier(CoreCost& c, int pipe) {
    Commit(c);
    if (pipe == kCostPipes) {
        CostResume(c, CostDrain(c));
        return;
    }
    c.busy[pipe] = std::max({c.busy[pipe], c.done[pipe], c.s}) + c.p->barrier;
    c.done[pipe] = c.busy[pipe];
    Trace(c, pipe, "PipeBarrier", c.busy[pipe] - c.p->barrier, c.p->barrier, c.busy[pipe]);
    c.s += c.p->issue;
}

double CostDrain(CoreCost& c) {
    Commit(c);
    double t = std::max(c.s, c.portFrom + c.portWork);
    for (int q = 0; q < kCostPipes; ++q) t = std::max(t, c.done[q]);
    return t;
}

void CostResume(CoreCost& c, double t) {
    c.s = t;
    c.portFrom = t;
    c.portWork = 0;
    for (int q = 0; q < kCostPipes; ++q) c.busy[q] = c.done[q] = t;
}

// Each physical core runs blocks i, i + cores, ... in turn (as the launcher's waves); the launch
// ends with its slowest core. Its pipes' busy time is reported for the block that ends last.
void RecordLaunchCost(const std::vector<const CoreCost*>& blocks, uint32_t physicalCores, const CostParams& p) {
    LaunchCost out;
    double perUs = p.clockGhz * 1e3;
    std::vector<double> total(std::max<size_t>(1, std::min<size_t>(physicalCores, blocks.size())), 0.0);
    size_t last = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
        total[b % total.size()] += blocks[b]->end;
        if (blocks[b]->end > blocks[last]->end) last = b;
    }
    out.us = *std::max_element(total.begin(), total.end()) / perUs;
    out.slowestBlock = double(last);
    if (!blocks.empty()) {
        out.blockUs = blocks[last]->end / perUs;
        for (int q = 0; q < kCostPipes; ++q) out.work[q] = blocks[last]->work[q] / perUs;
    }
    gLastCost = out;
}

}  // namespace twin

// The last launch's modelled time: [launch us, slowest block, its us, its S, V, MTE2, MTE3 busy us].
extern "C" int twin_last_cost(double* out, int n) {
    const twin::LaunchCost& c = twin::gLastCost;
    double all[] = {c.us, c.slowestBlock, c.blockUs, c.work[twin::kCostPipeS], c.work[twin::kCostPipeV], c.work[twin::kCostPipeMte2],
                    c.work[twin::kCostPipeMte3]};
    int k = std::min<int>(n, int(sizeof all / sizeof *all));
    for (int i = 0; i < k; ++i) out[i] = all[i];
    return int(sizeof all / sizeof *all);
}

// Row i of the parameter table for airfuse/twin.py (0 past the end).
extern "C" int twin_cost_row(int i, const char** chip, const char** name, double* value, const char** unit, int* assumed, const char** source) {
    if (i < 0 || i >= twin::kCostRows) return 0;
    const twin::CostRow& r = twin::kCostTable[i];
    *chip = r.chip;
    *name = r.name;
    *value = r.value;
    *unit = r.unit;
    *assumed = r.assumed;
    *source = r.source;
    return 1;
}
