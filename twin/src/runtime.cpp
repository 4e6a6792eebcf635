// Twin runtime: per-core state, the checks behind the API headers, and the launcher.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include "kernel_operator.h"

namespace twin {
namespace {
thread_local Core* tCore = nullptr;
thread_local std::string tLeak;  // first end-of-kernel discipline error (set from destructors)

struct Barrier {
    std::mutex m;
    std::condition_variable cv;
    uint32_t total = 0, arrived = 0, exited = 0, generation = 0;
    bool aborted = false;
};
Barrier* gBarrier = nullptr;
}  // namespace

Core& Cur() {
    if (!tCore) throw Violation("Ascend C API called outside a twin launch");
    return *tCore;
}

void Fail(const char* api, const std::string& what) {
    Core& c = Cur();
    throw Violation(Fmt("kernel %s, block %lld/%lld: %s: ", c.kernel, (long long)c.blockIdx, (long long)c.blockNum, api) + what);
}

const GmBuffer& CheckGm(const char* api, const void* p, uint64_t bytes) {
    auto* q = static_cast<const uint8_t*>(p);
    for (const GmBuffer& g : *Cur().gm)
        if (q >= g.base && q <= g.base + g.bytes) {
            uint64_t off = q - g.base;
            if (off + bytes > g.bytes)
                Fail(api, Fmt("GM access of %llu bytes at offset %llu of '%s' overruns its %llu bytes", (unsigned long long)bytes,
                              (unsigned long long)off, g.name.c_str(), (unsigned long long)g.bytes));
            return g;
        }
    Fail(api, Fmt("address %p is not inside any GM buffer of this launch", p));
}

void ReadTiling(void* dst, const uint8_t* tiling, uint64_t bytes) {
    const GmBuffer& g = CheckGm("GET_TILING_DATA", tiling, bytes);
    if (g.name != "tiling") Fail("GET_TILING_DATA", Fmt("reads from '%s', not the tiling buffer", g.name.c_str()));
    std::memcpy(dst, tiling, bytes);
}

uint32_t UbAlloc(const char* api, uint32_t num, uint32_t len) {
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
    return off;
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
        return offs[i];
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
}

uint32_t QueueBase::DeQue() {
    const char* api = "TQue::DeQue";
    if (!initialised) Fail(api, "queue used before TPipe::InitBuffer");
    if (fifo.empty()) Fail(api, "nothing enqueued");
    uint32_t i = fifo.front();
    fifo.erase(fifo.begin());
    state[i] = BufState::DEQUE;
    return offs[i];
}

void QueueBase::Free(uint32_t ubOffset) {
    const char* api = "TQue::FreeTensor";
    int i = Find(api, ubOffset);
    if (state[i] == BufState::FREE) Fail(api, Fmt("buffer %d is already FREE", i));
    if (state[i] == BufState::ENQUE) Fail(api, Fmt("buffer %d is still enqueued", i));
    state[i] = BufState::FREE;
    --Cur().liveBufs[int(pos)];
}

QueueBase::~QueueBase() {
    if (!tCore || !tLeak.empty()) return;
    for (size_t i = 0; i < state.size(); ++i)
        if (state[i] != BufState::FREE) {
            tLeak = Fmt("buffer %zu of a %s queue is %s at kernel end; every tensor must be freed", i,
                        pos == AscendC::TPosition::VECIN ? "VECIN" : pos == AscendC::TPosition::VECOUT ? "VECOUT" : "VECCALC", StateName(state[i]));
            return;
        }
}

void CheckUbOperand(const char* api, const char* which, AscendC::TPosition pos, uint32_t ubOffset) {
    if (!AscendC::IsUb(pos)) Fail(api, Fmt("%s tensor is not in UB (VECIN/VECOUT/VECCALC)", which));
    if (ubOffset % 32 != 0) Fail(api, Fmt("%s UB address %u is not 32-byte aligned", which, ubOffset));
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
    if (!c.chip->hasDataCopyPad) Fail(api, Fmt("DataCopyPad does not exist on %s", c.chip->socVersion));
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
    else Fail("Cast", Fmt("%s -> %s is not implemented in the twin", src, dst));
    if (!ok) Fail("Cast", Fmt("%s -> %s with round mode %d is not supported on %s (or not implemented in the twin)", src, dst, int(mode), c.chip->socVersion));
}

void SyncAllBlocks() {
    Core& c = Cur();
    if (uint64_t(c.blockNum) > c.chip->vectorCores)
        Fail("SyncAll", Fmt("block_dim %lld exceeds the %u vector cores; not all blocks would be resident", (long long)c.blockNum, c.chip->vectorCores));
    Barrier& b = *gBarrier;
    std::unique_lock<std::mutex> lk(b.m);
    uint32_t gen = b.generation;
    if (++b.arrived == b.total) {
        b.arrived = 0;
        ++b.generation;
        b.cv.notify_all();
        return;
    }
    b.cv.wait(lk, [&] { return b.generation != gen || b.aborted || b.exited > 0; });
    if (b.generation != gen) return;
    if (b.aborted) throw Violation("aborted: another block failed");
    lk.unlock();
    Fail("SyncAll", "another block returned without calling SyncAll (the NPU would hang)");
}

}  // namespace twin

namespace AscendC {

TPipe::TPipe() {
    twin::Core& c = twin::Cur();
    if (c.pipeAlive) twin::Fail("TPipe", "TPipe has already been constructed; one per kernel");
    c.pipeAlive = true;
}

TPipe::~TPipe() {
    if (twin::tCore) twin::tCore->pipeAlive = false;
}

void SetFlagImpl(HardEvent e, int32_t id) {
    twin::Core& c = twin::Cur();
    if (id < 0 || id > 7) twin::Fail("SetFlag", twin::Fmt("event id %d outside 0..7", id));
    uint32_t& bits = c.eventsSet[int(e)];
    if (bits & (1u << id)) twin::Fail("SetFlag", twin::Fmt("event %d id %d set twice without WaitFlag", int(e), id));
    bits |= 1u << id;
}

void WaitFlagImpl(HardEvent e, int32_t id) {
    twin::Core& c = twin::Cur();
    if (id < 0 || id > 7) twin::Fail("WaitFlag", twin::Fmt("event id %d outside 0..7", id));
    uint32_t& bits = c.eventsSet[int(e)];
    if (!(bits & (1u << id))) twin::Fail("WaitFlag", twin::Fmt("event %d id %d waited on without SetFlag", int(e), id));
    bits &= ~(1u << id);
}

}  // namespace AscendC

// ---- launcher (C ABI for airfuse/twin.py) ----

namespace {

using K3 = void (*)(uint8_t*, uint8_t*, uint8_t*);
using K4 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K5 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K6 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K7 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using K8 = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);

void Call(void* fn, int n, uint8_t** a) {
    switch (n) {
        case 3: reinterpret_cast<K3>(fn)(a[0], a[1], a[2]); break;
        case 4: reinterpret_cast<K4>(fn)(a[0], a[1], a[2], a[3]); break;
        case 5: reinterpret_cast<K5>(fn)(a[0], a[1], a[2], a[3], a[4]); break;
        case 6: reinterpret_cast<K6>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
        case 7: reinterpret_cast<K7>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
        case 8: reinterpret_cast<K8>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
        default: throw twin::Violation(twin::Fmt("the twin launches kernels with 3..8 parameters, got %d", n));
    }
}

void CopyErr(char* err, int len, const std::string& s) {
    if (len <= 0) return;
    std::snprintf(err, size_t(len), "%s", s.c_str());
}

}  // namespace

extern "C" int twin_launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args,
                           const uint64_t* sizes, const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten,
                           char* err, int errLen) {
    using namespace twin;
    const Chip* chip = airfuse::FindChip(soc);
    if (!chip) return CopyErr(err, errLen, Fmt("unknown chip '%s'", soc)), 1;
    if (blockDim < 1 || blockDim > 65535) return CopyErr(err, errLen, Fmt("block_dim %u outside 1..65535", blockDim)), 1;
    std::vector<GmBuffer> gm;
    for (int i = 0; i < nargs; ++i)
        if (args[i] && sizes[i]) gm.push_back({names[i], args[i], sizes[i]});
    std::vector<Core> cores(blockDim);
    Barrier barrier;
    barrier.total = blockDim;
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
        c.ub.assign(chip->ubBytes, 0xff);  // AllocTensor gives no defined contents: poison
        c.gm = &gm;
        tCore = &c;
        tLeak.clear();
        std::string msg;
        try {
            Call(fn, nargs, args);
            if (!tLeak.empty()) Fail("kernel end", tLeak);
            for (int e = 0; e < 16; ++e)
                if (c.eventsSet[e]) Fail("kernel end", Fmt("event %d has ids 0x%x set but never waited on", e, c.eventsSet[e]));
        } catch (const std::exception& ex) {
            msg = ex.what();
        }
        tCore = nullptr;
        std::lock_guard<std::mutex> lk(barrier.m);
        ++barrier.exited;
        if (!msg.empty()) {
            barrier.aborted = true;
            std::lock_guard<std::mutex> ek(errMutex);
            if (firstErr.empty() || firstErr.rfind("aborted", 0) == 0) firstErr = msg;
        }
        barrier.cv.notify_all();
    };
    std::vector<std::thread> threads;
    for (uint32_t b = 0; b < blockDim; ++b) threads.emplace_back(run, b);
    for (auto& t : threads) t.join();
    gBarrier = nullptr;
    *bytesRead = *bytesWritten = 0;
    for (const Core& c : cores) {
        *bytesRead += c.gmRead;
        *bytesWritten += c.gmWritten;
    }
    if (!firstErr.empty()) return CopyErr(err, errLen, firstErr), 1;
    return 0;
}
