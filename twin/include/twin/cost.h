// The twin's per-pipe time model (twin/README.md, "Cost model"): the scalar unit issues every
// instruction in program order into the queue of the pipe that runs it; each pipe runs its queue
// in order; flags, barriers and SyncAll make pipes (or cores) wait. A core's modelled time is
// when its last pipe finishes; a launch's is its slowest physical core.
#pragma once
#include <cstdint>
#include <map>
#include "sync_state.h"

namespace twin {

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
    double busy[kPipes] = {};          // when each pipe can start its next instruction
    double done[kPipes] = {};          // when everything issued to each pipe has completed
    // MTE2 and MTE3 run side by side but share the core's GM bandwidth: a core cannot finish
    // (or pass a barrier of every pipe) before portFrom + the transfer time of all its copies.
    double portFrom = 0, portWork = 0;
    double work[kPipes] = {};          // cycles each pipe spent executing (not waiting)
    double flag[kHardEvents][kEventIds] = {};  // when each set flag fires
    // The instruction being described (its operands arrive after its constructor): it is costed
    // when the next instruction, flag or barrier is issued.
    int open = -1;
    double hbmBytes = 0, l2Bytes = 0, vecOccupy = 0, vecLatency = 0;
    bool scalarGm = false;
    std::map<const void*, ReadRanges> reads;
    double end = 0;  // the core's modelled time, once the kernel returned
};

void CostStart(CoreCost& c, const CostParams& p, uint32_t activeCores);
void CostOpen(Pipe pipe);
void CostGm(const void* buffer, uint64_t off, uint64_t bytes, bool write);
void CostVector(const char* api, uint64_t elems, uint32_t elemBytes);
void CostSetFlag(int event, int id, Pipe src);
void CostWaitFlag(int event, int id, Pipe dst);
void CostBarrier(Pipe pipe);   // kPipes for PIPE_ALL
double CostDrain();            // PIPE_ALL: returns when everything has completed
void CostResume(double t);     // every pipe and the scalar unit restart at t (after SyncAll)

}  // namespace twin
