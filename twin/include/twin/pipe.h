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
    std::vector<BufState> state;
    std::vector<uint32_t> fifo;  // buffer indices in EnQue order
    uint32_t next = 0;           // round-robin start for AllocTensor
    bool initialised = false;
    ~QueueBase();

    int Find(const char* api, uint32_t ubOffset) const;
    uint32_t Alloc();
    void EnQue(uint32_t ubOffset);
    uint32_t DeQue();
    void Free(uint32_t ubOffset);
};

// Bump-allocates `num` buffers of `len` bytes (rounded up to 32 B) and checks UB capacity.
uint32_t UbAlloc(const char* api, uint32_t num, uint32_t len);
void RegisterQueue(QueueBase* q);

}  // namespace twin

namespace AscendC {

// Template parameters are named apart from QueueBase's members, which would otherwise hide them.
template <TPosition Pos, int32_t Depth> class TQue : public twin::QueueBase {
public:
    TQue() {
        pos = Pos;
        depth = Depth;
    }
    template <typename T> LocalTensor<T> AllocTensor() { return LocalTensor<T>(Alloc(), len, pos); }
    template <typename T> bool EnQue(const LocalTensor<T>& t) {
        twin::QueueBase::EnQue(t.UbOffset());
        return true;
    }
    template <typename T> LocalTensor<T> DeQue() { return LocalTensor<T>(twin::QueueBase::DeQue(), len, pos); }
    template <typename T> void FreeTensor(LocalTensor<T>& t) { Free(t.UbOffset()); }
};

template <TPosition pos = TPosition::VECCALC> class TBuf {
public:
    template <typename T> LocalTensor<T> Get() const { return Get<T>(len_ / sizeof(T)); }
    template <typename T> LocalTensor<T> Get(uint32_t count) const {
        Check("TBuf::Get");
        if (uint64_t(count) * sizeof(T) > len_)
            twin::Fail("TBuf::Get", twin::Fmt("%u elements of %s exceed the buffer's %u bytes", count, twin::TypeName<T>(), len_));
        return LocalTensor<T>(off_, count * sizeof(T), pos);
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t count, uint32_t bufOffset) const {
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
    template <TPosition pos, int32_t depth> bool InitBuffer(TQue<pos, depth>& q, uint8_t num, uint32_t len) {
        if (q.initialised) twin::Fail("TPipe::InitBuffer", "queue initialised twice");
        if (num < 1) twin::Fail("TPipe::InitBuffer", "buffer number must be >= 1, got 0");
        uint32_t rounded = (len + 31) / 32 * 32;
        uint32_t base = twin::UbAlloc("TPipe::InitBuffer", num, len);
        q.len = rounded;
        for (uint32_t i = 0; i < num; ++i) {
            q.offs.push_back(base + i * rounded);
            q.state.push_back(twin::BufState::FREE);
        }
        q.initialised = true;
        twin::RegisterQueue(&q);
        return true;
    }
    template <TPosition pos> bool InitBuffer(TBuf<pos>& b, uint32_t len) {
        uint32_t rounded = (len + 31) / 32 * 32;
        b.Init(twin::UbAlloc("TPipe::InitBuffer", 1, len), rounded);
        return true;
    }
};

enum class HardEvent : int32_t { MTE2_V, V_MTE3, MTE3_V, V_MTE2, S_V, V_S, MTE2_S, S_MTE2, MTE3_S, S_MTE3, MTE3_MTE2, V_V, MTE2_MTE3 };
enum pipe_t { PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

void SetFlagImpl(HardEvent e, int32_t id);
void WaitFlagImpl(HardEvent e, int32_t id);
template <HardEvent e> void SetFlag(int32_t id) { SetFlagImpl(e, id); }
template <HardEvent e> void WaitFlag(int32_t id) { WaitFlagImpl(e, id); }

// In-core execution is sequential on the CPU, so a barrier has nothing to order; PIPE_S is illegal.
template <pipe_t p> void PipeBarrier() {
    static_assert(p != PIPE_S, "PipeBarrier<PIPE_S> is not allowed");
}

inline int64_t GetBlockIdx() { return twin::Cur().blockIdx; }
inline int64_t GetBlockNum() { return twin::Cur().blockNum; }

// All blocks must be resident at once for a cross-core barrier.
inline void SyncAll() { twin::SyncAllBlocks(); }

inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }

}  // namespace AscendC
