// The twin's per-pipe time model (twin/README.md, "Cost model"): the scalar unit issues every
// instruction in program order into the queue of the pipe that runs it; each pipe runs its queue
// in order; flags, barriers and SyncAll make pipes (or cores) wait. A core's modelled time is
// when its last pipe finishes; a launch's is its slowest physical core.
//
// The model knows instructions, not an API: both twins compile this one copy and call its hooks
// from their own instruction stream (the home-made twin from its Ascend C API, twin/src/sync.cpp;
// the vendor-API twin from the CCE intrinsics under CANN's headers, twin/vendor_api/src), each
// handing it the running core's CoreCost.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace twin {

// The pipes of a vector core, in the order of both twins' own Pipe enums (S, V, MTE2, MTE3).
constexpr int kCostPipes = 4;
constexpr int kCostPipeS = 0, kCostPipeV = 1, kCostPipeMte2 = 2, kCostPipeMte3 = 3;
constexpr int kCostEventIds = 8;  // QUE_MAX_EVENT on dav-2201 and dav-2002

// One number of the model for one chip, with where it comes from; `assumed` marks a guess
// (no documented figure found) rather than a documented or derived value.
struct CostRow {
    const char* chip;
    const char* name;
    double value;
    const char* unit;
    bool assumed;
    const char* source;
};
extern const CostRow kCostTable[];
extern const int kCostRows;

// The table's rows for one chip, by name (twin/src/cost.cpp reads them once per launch).
struct CostParams {
    double clockGhz = 0;
    double hbmGBps = 0;          // whole-chip HBM (GM) bandwidth, reads + writes
    double l2Speedup = 0;        // L2 bandwidth / HBM bandwidth
    double mteBytesPerCycle = 0; // one core's MTE port
    double mteLatency = 0;       // cycles from a copy's start to its data landing
    double issue = 0;            // scalar cycles to issue one instruction or flag
    double barrier = 0;          // PipeBarrier: drain + restart of one pipe
    double scalarUb = 0;         // a scalar read/write of UB (GetValue/SetValue)
    double scalarGm = 0;         // a scalar read/write of GM (GlobalTensor::GetValue/SetValue)
    double syncAll = 0;          // hardware SyncAll once every core arrived
    double softSyncAll = 0;      // SyncAll(gm, ub, usedCores) once every core arrived
    double softSyncSkew = 0;     // start skew of a batch-mode launch's cores, for kernel-side zeroing
    // vector: bytes of the widest operand per cycle (Exp: elements per cycle), and the cycles
    // from an instruction's last repeat to its result, per instruction class
    double vecBytesPerCycle = 0, vecExpPerCycle = 0;
    double latAdd = 0, latMul = 0, latDiv = 0, latExp = 0, latMax = 0, latReduce = 0, latOther = 0;
};
// Null when the table has no (complete) entry for the chip.
const CostParams* CostParamsFor(const char* soc);

// The latency class of a vector instruction (the table's vec_latency_* rows; Exp and Sqrt also
// run at vec_exp_elems_per_cycle). Each twin classes its own instructions: the home-made twin its
// API by name, the vendor-API twin its intrinsics (vadd -> kAdd, ...).
enum class VecClass { kAdd, kMul, kDiv, kExp, kSqrt, kMax, kReduce, kOther };

// Bytes of GM this core has read so far (per buffer, as merged intervals): a re-read is an L2 hit.
struct ReadRanges {
    std::map<uint64_t, uint64_t> spans;  // start -> end
    uint64_t Overlap(uint64_t lo, uint64_t hi) const;
    void Add(uint64_t lo, uint64_t hi);
};

// One core's clocks, in cycles.
struct CoreCost {
    const CostParams* p = nullptr;
    double hbmShare = 0, l2Share = 0;  // bytes per cycle this core gets from HBM / L2
    double s = 0;                      // when the scalar unit issues its next instruction
    uint32_t block = 0;                // for AIRFUSE_TWIN_COST_TRACE
    double busy[kCostPipes] = {};      // when each pipe can start its next instruction
    double done[kCostPipes] = {};      // when everything issued to each pipe has completed
    // MTE2 and MTE3 run side by side but share the core's GM bandwidth: a core cannot finish
    // (or pass a barrier of every pipe) before portFrom + the transfer time of all its copies.
    double portFrom = 0, portWork = 0;
    double work[kCostPipes] = {};      // cycles each pipe spent executing (not waiting)
    double flag[kCostPipes][kCostPipes][kCostEventIds] = {};  // when each set flag (src, dst, id) fires
    // The instruction being described (its operands arrive after its constructor): it is costed
    // when the next instruction, flag or barrier is issued.
    int open = -1;
    double hbmBytes = 0, l2Bytes = 0, vecOccupy = 0, vecLatency = 0;
    bool scalarGm = false;
    const char* vecName = "";  // the open vector instruction's, for the trace
    std::map<const void*, ReadRanges> reads;
    double end = 0;  // the core's modelled time, once the kernel returned
    // Told when each copy's data lands (the home-made twin's soft SyncAll times the kernel-side
    // zeroing of its region by it); none by default.
    void (*copyLands)(void* context, double lands) = nullptr;
    void* copyLandsContext = nullptr;
};

void CostStart(CoreCost& c, const CostParams& p, uint32_t activeCores, uint32_t block);
void CostOpen(CoreCost& c, int pipe);
void CostGm(CoreCost& c, const void* buffer, uint64_t off, uint64_t bytes, bool write);
// elems: elements of the widest operand the instruction walks (a level-0 form: its repeats x the
// elements of a full repeat, whatever the mask); name: for the trace.
void CostVector(CoreCost& c, VecClass cls, uint64_t elems, uint32_t elemBytes, const char* name);
void CostSetFlag(CoreCost& c, int src, int dst, int id);
void CostWaitFlag(CoreCost& c, int src, int dst, int id);
void CostBarrier(CoreCost& c, int pipe);  // kCostPipes for PIPE_ALL
double CostDrain(CoreCost& c);            // PIPE_ALL: returns when everything has completed
void CostResume(CoreCost& c, double t);   // every pipe and the scalar unit restart at t (after SyncAll)

// A launch's modelled time from its blocks' (each block's `end` set): block b runs on physical
// core b % physicalCores after the blocks before it there; the launch ends with its slowest
// core. Kept for twin_last_cost (airfuse/twin.py Launch.cost).
void RecordLaunchCost(const std::vector<const CoreCost*>& blocks, uint32_t physicalCores, const CostParams& p);

}  // namespace twin
