// Per-core state of the happens-before model (twin/README.md, "Pipes and events"): what each
// pipe has issued, what it knows to be complete, the event flags and the UB shadow.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace twin {

// The pipes of a vector core that airfuse's kernels drive. S issues every instruction in
// program order and executes scalar accesses itself; the others run asynchronously.
enum Pipe : uint8_t { kPipeS, kPipeV, kPipeMte2, kPipeMte3, kPipes, kNoPipe = 0xff };

constexpr int kHardEvents = 13;
constexpr int kEventIds = 8;  // QUE_MAX_EVENT on dav-2201 and dav-2002

// clock[q]: every instruction of pipe q numbered <= clock[q] has completed.
struct Clock {
    uint32_t t[kPipes] = {};
    void Join(const Clock& o) {
        for (int q = 0; q < kPipes; ++q) t[q] = t[q] > o.t[q] ? t[q] : o.t[q];
    }
};

// Where a kernel calls SetFlag/WaitFlag/PipeBarrier: the unit the mutation test removes.
struct Site {
    const char* file = nullptr;  // null for the flags the framework sets itself
    int line = 0;
};

struct EventSlot {
    bool set = false;
    bool muted = false;   // its SetFlag was removed by a mutation: the matching WaitFlag goes too
    Clock token;          // what the waiting pipe learns
    const char* setApi = "";  // who set it, for messages: an API, a call site, a queue buffer
    Site site;
    int32_t buf = -1;
};

// Last writer and readers-since of one 32-byte UB block.
struct UbCell {
    uint8_t writer = kNoPipe;
    bool unwritten = true;  // never written since launch or since its queue buffer's AllocTensor
    uint32_t writeSeq = 0;
    const char* writeApi = "";
    uint32_t readSeq[kPipes] = {};
    const char* readApi[kPipes] = {};
};

// A TPipe::InitBuffer allocation, for naming the buffer in messages.
struct UbRange {
    uint32_t off, bytes;
    std::string name;
};

// Event state of one queue buffer, kept by the pipe as TPipe keeps its buffer table: the
// TPipe destructor still waits a freed buffer's flag after its TQue object is gone.
struct BufEvents {
    std::string name;
    int8_t freeEvent = -1;  // HardEvent set by FreeTensor, waited by the next AllocTensor
    int32_t freeId = -1;    // pending id, -1 when none
    int32_t enqueId = -1;
    bool free = true;
    uint32_t gen = 0;       // bumped by AllocTensor and FreeTensor: older handles are dead
};

struct SyncState {
    uint32_t seq[kPipes] = {};    // instructions issued per pipe
    Clock known[kPipes];          // known[p]: what p's next instruction may assume complete
    EventSlot events[kHardEvents][kEventIds];
    uint8_t occupied[kHardEvents] = {};  // TPipe's event id pool (AllocEventID/ReleaseEventID)
    std::vector<UbCell> ub;
    std::vector<UbRange> ranges;
    std::vector<BufEvents> bufs;   // per queue buffer, in InitBuffer order
    uint32_t epoch = 0;            // SyncAll calls passed
};

// Who last wrote and who read one GM byte in which SyncAll epoch (cross-core races), and the
// pipe and instruction of the last write and of the last read (ordering inside one core, e.g.
// MTE3 then MTE2, or MTE2 then MTE3).
constexpr int16_t kNoBlock = -1, kManyBlocks = -2;
// A GM write as the soft SyncAll's kernel-side zeroing sees it: zeros stored by MTE3 before the
// block's first SyncAll, or a SyncAll's own count; two such writes of different blocks are not a
// race by themselves (SoftSyncAllBlocks checks the zeroing's timing instead).
enum class GmWriteKind : uint8_t { kPlain, kZeros, kCount };
struct GmCell {
    int16_t writer = kNoBlock;
    int16_t reader = kNoBlock;    // readers since the write, in readEpoch: one block, or several
    int16_t lastReader = kNoBlock;
    uint8_t writePipe = kNoPipe, readPipe = kNoPipe;
    uint32_t writeEpoch = 0, readEpoch = 0;
    uint32_t writeSeq = 0, readSeq = 0;
    const char* writeApi = "";
    const char* readApi = "";
    bool zeroFill = false;        // the last write put zeros there by MTE3 before its block's first SyncAll
};

struct GmShadow {
    std::mutex m;
    std::vector<GmCell> cells;  // one per byte of the buffer
};

}  // namespace twin
