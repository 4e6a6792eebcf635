// TPipe / TQue / TBuf with the hardware's allocation and queue rules enforced, plus events.
#pragma once
#include "tensor.h"

namespace twin {

enum class BufState { FREE, OCCUPIED, ENQUE, DEQUE };
const char* StateName(BufState s);

struct QueueBase {
    AscendC::TPosition pos = AscendC::TPosition::VECIN;
    int32_t depth = 1;
    uint32_t len = 0;
    std::vector<uint32_t> offs;
    std::vector<int32_t> ids;    // buffer ids in the core's SyncState::bufs
    std::vector<BufState> state;
    std::vector<uint32_t> fifo;  // buffer indices in EnQue order
    uint32_t next = 0;           // round-robin start for AllocTensor
    bool initialised = false;
    ~QueueBase();

    int Find(const char* api, uint32_t ubOffset) const;
    // Alloc and DeQue return the buffer index; each takes the events TQue does (SyncState::bufs).
    uint32_t Alloc();
    void EnQue(uint32_t ubOffset);
    uint32_t DeQue();
    void Free(uint32_t ubOffset);
};

// Bump-allocates `num` buffers of `len` bytes (rounded up to 32 B) and checks UB capacity;
// `kind` names them in messages.
uint32_t UbAlloc(const char* api, uint32_t num, uint32_t len, const char* kind);
void RegisterQueue(QueueBase* q);
// A queue buffer's entry in SyncState::bufs; FreeTensor sets `freeEvent` (V_MTE2 for VECIN,
// MTE3_V for VECOUT), the next AllocTensor waits it.
int32_t NewQueueBuffer(uint32_t off, AscendC::HardEvent freeEvent);

}  // namespace twin

namespace AscendC {

// Template parameters are named apart from QueueBase's members, which would otherwise hide them.
template <TPosition Pos, int32_t Depth> class TQue : public twin::QueueBase {
public:
    TQue() {
        pos = Pos;
        depth = Depth;
    }
    template <typename T> LocalTensor<T> AllocTensor() { return Tensor<T>(Alloc()); }
    template <typename T> bool EnQue(const LocalTensor<T>& t) {
        twin::QueueBase::EnQue(t.UbOffset());
        return true;
    }
    template <typename T> LocalTensor<T> DeQue() { return Tensor<T>(twin::QueueBase::DeQue()); }
    template <typename T> void FreeTensor(LocalTensor<T>& t) { Free(t.UbOffset()); }

private:
    template <typename T> LocalTensor<T> Tensor(uint32_t i) const {
        return LocalTensor<T>(offs[i], len, pos, ids[i], twin::Cur().sync.bufs[ids[i]].gen);
    }
};

template <TPosition pos = TPosition::VECCALC> class TBuf {
public:
    // Not const, as in CANN's kernel_tpipe.h.
    template <typename T> LocalTensor<T> Get() { return Get<T>(len_ / sizeof(T)); }
    template <typename T> LocalTensor<T> Get(uint32_t count) {
        Check("TBuf::Get");
        if (uint64_t(count) * sizeof(T) > len_)
            twin::Fail("TBuf::Get", twin::Fmt("%u elements of %s exceed the buffer's %u bytes", count, twin::TypeName<T>(), len_));
        return LocalTensor<T>(off_, count * sizeof(T), pos);
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t count, uint32_t bufOffset) {
        Check("TBuf::GetWithOffset");
        if (bufOffset % 32 != 0) twin::Fail("TBuf::GetWithOffset", twin::Fmt("offset %u is not a multiple of 32 bytes", bufOffset));
        if (bufOffset + uint64_t(count) * sizeof(T) > len_)
            twin::Fail("TBuf::GetWithOffset", twin::Fmt("offset %u + %u elements of %s exceed the buffer's %u bytes", bufOffset, count, twin::TypeName<T>(), len_));
        return LocalTensor<T>(off_ + bufOffset, count * sizeof(T), pos);
    }
    void Init(uint32_t off, uint32_t len) {
        off_ = off;
        len_ = len;
        init_ = true;
    }

private:
    void Check(const char* api) const {
        if (!init_) twin::Fail(api, "TBuf used before TPipe::InitBuffer");
    }
    uint32_t off_ = 0;
    uint32_t len_ = 0;
    bool init_ = false;
};

class TPipe {
public:
    TPipe();
    ~TPipe();
    TPipe(const TPipe&) = delete;
    template <HardEvent e> TEventID AllocEventID();
    template <HardEvent e> void ReleaseEventID(TEventID id);
    template <HardEvent e> TEventID FetchEventID();
    TEventID FetchEventID(HardEvent e);
    template <TPosition pos, int32_t depth> bool InitBuffer(TQue<pos, depth>& q, uint8_t num, uint32_t len) {
        if (q.initialised) twin::Fail("TPipe::InitBuffer", "queue initialised twice");
        if (num < 1) twin::Fail("TPipe::InitBuffer", "buffer number must be >= 1, got 0");
        static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT, "the twin models TQue for VECIN and VECOUT only");
        uint32_t base = twin::UbAlloc("TPipe::InitBuffer", num, len, pos == TPosition::VECIN ? "TQue<VECIN>" : "TQue<VECOUT>");
        q.len = (len + 31) / 32 * 32;
        for (uint32_t i = 0; i < num; ++i) {
            q.offs.push_back(base + i * q.len);
            q.ids.push_back(twin::NewQueueBuffer(base + i * q.len, pos == TPosition::VECIN ? HardEvent::V_MTE2 : HardEvent::MTE3_V));
            q.state.push_back(twin::BufState::FREE);
        }
        q.initialised = true;
        twin::RegisterQueue(&q);
        return true;
    }
    template <TPosition pos> bool InitBuffer(TBuf<pos>& b, uint32_t len) {
        uint32_t rounded = (len + 31) / 32 * 32;
        b.Init(twin::UbAlloc("TPipe::InitBuffer", 1, len, pos == TPosition::VECIN ? "TBuf<VECIN>" : pos == TPosition::VECOUT ? "TBuf<VECOUT>" : "TBuf<VECCALC>"), rounded);
        return true;
    }
};

// TPipe's event id pool per HardEvent: AllocEventID takes the lowest free id until ReleaseEventID,
// FetchEventID only reports it (use it at once, before any queue call can take it).
template <HardEvent e> TEventID TPipe::AllocEventID() { return TEventID(twin::AllocEventId(e, "TPipe::AllocEventID")); }
template <HardEvent e> void TPipe::ReleaseEventID(TEventID id) { twin::ReleaseEventId(e, id); }
template <HardEvent e> TEventID TPipe::FetchEventID() { return TEventID(twin::FetchEventId(e, "TPipe::FetchEventID")); }
inline TEventID TPipe::FetchEventID(HardEvent e) { return TEventID(twin::FetchEventId(e, "TPipe::FetchEventID")); }

inline TPipe* GetTPipePtr() {
    void* p = twin::Cur().tpipe;
    if (!p) twin::Fail("GetTPipePtr", "no TPipe constructed");
    return static_cast<TPipe*>(p);
}

inline int64_t GetBlockIdx() { return twin::Cur().blockIdx; }
inline int64_t GetBlockNum() { return twin::Cur().blockNum; }

// Hardware SyncAll: all blocks must be resident, the kernel type must start the scheduler that
// carries the cross-core flags, and the chip must have it (twin/src/runtime.cpp). CANN's headers
// declare it for every chip; on 310P an NPU build compiles it to nothing and a CPU-debug run
// aborts, so the twin refuses it when run as a 310P chip.
template <bool isAIVOnly = true> inline void SyncAll() { twin::SyncAllBlocks(); }

// The soft SyncAll, on every chip with TPipe (twin/src/runtime.cpp SoftSyncAllBlocks).
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, const int32_t usedCores = 0) {
    twin::CheckUbOperand("SyncAll(gmWorkspace, ubWorkspace, usedCores)", "ubWorkspace", ubWorkspace.GetPosition(), ubWorkspace.UbOffset());
    twin::SoftSyncAllBlocks(gmWorkspace.GetPhyAddr(0), gmWorkspace.GetSize(), ubWorkspace.Bytes(), usedCores);
}

// The user part, after the chip's system workspace (dav_c220 GetUserWorkspace: + RESERVED_WORKSPACE).
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return twin::UserWorkspace(workspace); }

}  // namespace AscendC
