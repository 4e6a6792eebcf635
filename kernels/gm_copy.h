// GM <-> UB copies of airfuse's kernels on both chip families (kernels/README.md, "Copies").
// With DataCopyPad (910B) any length moves directly. Without it (310P) DataCopy moves whole
// 32 B blocks only (the NPU silently drops a partial block), so:
//  - windowed layout: a range [off, off+n) with n % e != 0 (e elements = one 32 B block of the
//    kernel's row dtype) sits in UB as its whole blocks followed by the block that ends exactly
//    at off+n. Both parts start 32 B-aligned, vector ops cover Span(n) elements, and the window's
//    first e - n % e elements repeat data held before it: reductions zero them, elementwise
//    results write the same values back. Needs off+n >= e, all inside this core's data.
//  - natural layout, for ranges shorter than a block (rows under 32 B, small tensors): the range
//    starts at UB offset 0; its elements leave through GmStream.
#pragma once
#include "common.h"

// CANN compiles a kernel per chip; 310P (__CCE_AICORE__ 200) has no DataCopyPad, so that branch
// exists only where the chip has it. The twin compiles both and the tiling's flag picks.
#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 200
#define AIRFUSE_HAS_DATA_COPY_PAD 0
#else
#define AIRFUSE_HAS_DATA_COPY_PAD 1
#endif

namespace airfuse_kernel {

#if AIRFUSE_HAS_DATA_COPY_PAD
// `rows` rows of n elements, GM-contiguous, each starting 32 B-aligned in UB.
template <typename U> __aicore__ inline void PadIn(const LocalTensor<U>& ub, const GlobalTensor<U>& gm, uint64_t off, uint32_t rows, uint32_t n) {
    DataCopyPad(ub, gm[off], DataCopyExtParams(uint16_t(rows), n * sizeof(U), 0, 0, 0), DataCopyPadExtParams<U>());
}
template <typename U> __aicore__ inline void PadOut(const GlobalTensor<U>& gm, const LocalTensor<U>& ub, uint64_t off, uint32_t rows, uint32_t n) {
    DataCopyPad(gm[off], ub, DataCopyExtParams(uint16_t(rows), n * sizeof(U), 0, 0, 0));
}
#endif

template <typename T> constexpr uint32_t kBlock = 32 / sizeof(T);

__aicore__ inline uint32_t RoundUpTo(uint32_t n, uint32_t e) { return (n + e - 1) / e * e; }

// Scalar GM stores of a range shorter than one block (a whole tensor under 32 B, one core):
// DataCopy would write past its end. The data cache is written back line by line.
// `gm` is taken by value: GlobalTensor::SetValue is not const in CANN's headers, and a copy of
// the tensor views the same GM.
template <typename U> __aicore__ inline void StoreScalar(GlobalTensor<U> gm, const LocalTensor<U>& ub, uint64_t off, uint32_t n) {
    int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
    SetFlag<HardEvent::V_S>(eventVS);
    WaitFlag<HardEvent::V_S>(eventVS);
    for (uint32_t i = 0; i < n; ++i) gm.SetValue(off + i, ub.GetValue(i));
    DataCacheCleanAndInvalid<U, CacheLine::SINGLE_CACHE_LINE>(gm[off]);
    DataCacheCleanAndInvalid<U, CacheLine::SINGLE_CACHE_LINE>(gm[off + n - 1]);
}

// Natural layout: whole blocks from the first element when they stay inside the GlobalTensor
// (the extra elements are never used), else whole blocks plus scalar loads of the < one block
// left at the tensor's end.
template <typename U> __aicore__ inline void LoadNatural(const LocalTensor<U>& ub, const GlobalTensor<U>& gm, uint64_t off, uint32_t n) {
    uint32_t up = RoundUpTo(n, kBlock<U>);
    if (off + up <= gm.GetSize()) {
        DataCopy(ub, gm[off], up);
        return;
    }
    uint32_t whole = n / kBlock<U> * kBlock<U>;
    if (whole > 0) DataCopy(ub, gm[off], whole);
    int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);  // the buffer may still be read by earlier vector work
    SetFlag<HardEvent::V_S>(eventVS);
    WaitFlag<HardEvent::V_S>(eventVS);
    for (uint32_t i = whole; i < n; ++i) ub.SetValue(i, gm.GetValue(off + i));
    int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);
    SetFlag<HardEvent::S_V>(eventSV);
    WaitFlag<HardEvent::S_V>(eventSV);
}

// How a kernel moves ranges of its rows; `aligned` = the chip lacks DataCopyPad (tiling flag),
// `natural` = rows shorter than a block, e = one block of the row dtype.
struct Mover {
    bool aligned;
    bool natural;
    uint32_t e;

    // Elements a range of n occupies in UB and in vector ops.
    __aicore__ inline uint32_t Span(uint32_t n) const { return aligned && !natural ? RoundUpTo(n, e) : n; }

    // Reductions: zero the window's repeated head in a float copy of the range.
    __aicore__ inline void ZeroRepeat(const LocalTensor<float>& w, uint32_t n) const {
        uint32_t whole = n / e * e;
        if (!aligned || natural || whole == n) return;
        Duplicate(w[whole], 0.0f, int32_t(e - (n - whole)));
        PipeBarrier<PIPE_V>();
    }

    template <typename U> __aicore__ inline void In(const LocalTensor<U>& ub, const GlobalTensor<U>& gm, uint64_t off, uint32_t n) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadIn(ub, gm, off, 1, n);
#endif
        if (natural) {
            LoadNatural(ub, gm, off, n);
            return;
        }
        uint32_t whole = n / e * e;
        if (whole > 0) DataCopy(ub, gm[off], whole);
        if (whole < n) DataCopy(ub[whole], gm[off + n - e], e);
    }

    template <typename U> __aicore__ inline void Out(const GlobalTensor<U>& gm, const LocalTensor<U>& ub, uint64_t off, uint32_t n) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadOut(gm, ub, off, 1, n);
#endif
        uint32_t whole = n / e * e;
        if (whole > 0) DataCopy(gm[off], ub, whole);
        if (whole < n) {
            // Same values over bytes already written (by this copy's whole part or an earlier
            // range's); overlapping MTE3 destinations still need ordering (PipeBarrier(ISASI).md).
            PipeBarrier<PIPE_MTE3>();
            DataCopy(gm[off + n - e], ub[whole], e);
        }
    }

    // n elements from gm[0] into `f` as float32, through `stage` when U is half/bf16 (the vector
    // unit may read f right after the load; after the cast, only past a barrier).
    template <typename U>
    __aicore__ inline void InAsFloat(const LocalTensor<float>& f, const LocalTensor<U>& stage, const GlobalTensor<U>& gm, uint32_t n) const {
        LocalTensor<U> dst;
        if constexpr (kIsFloat<U>) {
            dst = f;
        } else {
            dst = stage;
        }
        In(dst, gm, 0, n);
        int32_t eventMTE2V = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
        SetFlag<HardEvent::MTE2_V>(eventMTE2V);
        WaitFlag<HardEvent::MTE2_V>(eventMTE2V);
        if constexpr (!kIsFloat<U>) Cast(f, stage, RoundMode::CAST_NONE, Span(n));  // the caller orders its next use of f and the stage
    }

    // A range inside rows laid out at a 32 B-aligned stride (workspace partial rows): on 310P as
    // whole blocks from off, the extra elements being the row's padding.
    template <typename U> __aicore__ inline void PaddedIn(const LocalTensor<U>& ub, const GlobalTensor<U>& gm, uint64_t off, uint32_t n) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadIn(ub, gm, off, 1, n);
#endif
        DataCopy(ub, gm[off], RoundUpTo(n, e));
    }

    template <typename U> __aicore__ inline void PaddedOut(const GlobalTensor<U>& gm, const LocalTensor<U>& ub, uint64_t off, uint32_t n) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadOut(gm, ub, off, 1, n);
#endif
        DataCopy(gm[off], ub, RoundUpTo(n, e));
    }

    // `rows` rows of d elements, GM-contiguous from off, at `stride` elements apart in UB.
    template <typename U>
    __aicore__ inline void RowsIn(const LocalTensor<U>& ub, const GlobalTensor<U>& gm, uint64_t off, uint32_t rows, uint32_t d, uint32_t stride) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadIn(ub, gm, off, rows, d);
#endif
        if (d % e == 0) {
            DataCopy(ub, gm[off], rows * d);  // stride == d: the rows are dense in UB too
            return;
        }
        for (uint32_t i = 0; i < rows; ++i) In(ub[i * stride], gm, off + uint64_t(i) * d, d);
    }

    // Not for natural rows: those leave through a GmStream.
    template <typename U>
    __aicore__ inline void RowsOut(const GlobalTensor<U>& gm, const LocalTensor<U>& ub, uint64_t off, uint32_t rows, uint32_t d, uint32_t stride) const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!aligned) return PadOut(gm, ub, off, rows, d);
#endif
        if (d % e == 0) {
            DataCopy(gm[off], ub, rows * d);
            return;
        }
        for (uint32_t i = 0; i < rows; ++i) Out(gm, ub[i * stride], off + uint64_t(i) * d, d);
    }
};

// A core's output range written element by element by the scalar unit (rstd, rows under 32 B) on a
// chip without DataCopyPad. Values are staged in UB and leave in whole blocks; the last partial
// block is re-written as the block ending exactly at the range's end (needs a range of >= one
// block, which the tiling guarantees unless the whole tensor is smaller: then StoreScalar).
// The stage holds >= 4 blocks: one kept already-written block, a partial one, room, the window.
template <typename U> class GmStream {
public:
    __aicore__ inline void Init(const GlobalTensor<U>& gm, const LocalTensor<U>& stage) {
        gm_ = gm;
        stage_ = stage;
        cap_ = stage.GetSize() / kE * kE;
    }

    __aicore__ inline void Put(U v) {
        if (p_ + kE == cap_) Flush();
        stage_.SetValue(p_++, v);
    }

    // n rows of d elements, `stride` apart in UB, produced by the vector unit.
    __aicore__ inline void PutRows(const LocalTensor<U>& ub, uint32_t n, uint32_t d, uint32_t stride) {
        int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
        SetFlag<HardEvent::V_S>(eventVS);
        WaitFlag<HardEvent::V_S>(eventVS);
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j < d; ++j) Put(ub.GetValue(i * stride + j));
    }

    // Where a vector op may write the next n values (one op for a step's values, no scalar write
    // per value): the stage from the next value on, which must start a 32 B block (every earlier
    // put a whole number of blocks; the caller's tiling ensures it). Commit them with VectorPut.
    __aicore__ inline LocalTensor<U> VectorSlot(uint32_t n) {
        if (p_ + n + kE > cap_) {
            Flush();
            // Flush's scalar moves read the block that may start the slot (their write, block 0, does not).
            int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);
            SetFlag<HardEvent::S_V>(eventSV);
            WaitFlag<HardEvent::S_V>(eventSV);
        }
        return stage_[p_];
    }

    __aicore__ inline void VectorPut(uint32_t n) {
        p_ += n;
        vectorWritten_ = true;
    }

    // Writes the whole blocks staged so far; keeps the last one (the final window may need it).
    __aicore__ inline void Flush() {
        if (!CopyWhole()) return;
        int32_t eventMTE3S = GetTPipePtr()->FetchEventID(HardEvent::MTE3_S);
        SetFlag<HardEvent::MTE3_S>(eventMTE3S);
        WaitFlag<HardEvent::MTE3_S>(eventMTE3S);
        uint32_t drop = p_ / kE * kE - kE;
        if (drop > 0)
            for (uint32_t i = drop; i < p_; ++i) stage_.SetValue(i - drop, stage_.GetValue(i));
        q_ += drop;
        p_ -= drop;
        keep_ = kE;
    }

    // Writes what is staged; nothing may be put after it (when it found whole blocks, a second
    // call writes nothing). Whole blocks leave as they are, no block kept and moved for a window
    // (16 scalar moves of 20 cycles at the launch's end: benchmarks/kernel_time.py, 310P rms_norm
    // 1024 x 128), so a caller may finish as soon as its last value is staged (the last step's
    // rstd then leaves before that step's y, not queued behind it on MTE3).
    __aicore__ inline void Finish() {
        if (p_ % kE == 0) {
            if (CopyWhole()) keep_ = p_;
            return;
        }
        Flush();
        if (keep_ == 0) {
            if (p_ > 0) StoreScalar(gm_, stage_, q_, p_);
            return;
        }
        if (p_ == kE) return;
        // The last kE values, moved to an aligned slot after them, re-cover the written tail.
        LocalTensor<U> slot = stage_[2 * kE];
        for (uint32_t i = 0; i < kE; ++i) slot.SetValue(i, stage_.GetValue(p_ - kE + i));
        int32_t eventSMTE3 = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
        SetFlag<HardEvent::S_MTE3>(eventSMTE3);
        WaitFlag<HardEvent::S_MTE3>(eventSMTE3);
        DataCopy(gm_[q_ + p_ - kE], slot, kE);
        int32_t eventMTE3S = GetTPipePtr()->FetchEventID(HardEvent::MTE3_S);
        SetFlag<HardEvent::MTE3_S>(eventMTE3S);  // redundant-sync: stream-finish-mte3-s
        WaitFlag<HardEvent::MTE3_S>(eventMTE3S);
    }

private:
    // Copies the whole blocks staged since the last copy; false when there are none.
    __aicore__ inline bool CopyWhole() {
        if (vectorWritten_) {  // the moves and copy below read V's values (a kernel may finish its rstd stream mid-step)
            int32_t eventVS = GetTPipePtr()->FetchEventID(HardEvent::V_S);
            SetFlag<HardEvent::V_S>(eventVS);
            WaitFlag<HardEvent::V_S>(eventVS);
            vectorWritten_ = false;
        }
        uint32_t whole = p_ / kE * kE;
        if (whole <= keep_) return false;
        int32_t eventSMTE3 = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
        SetFlag<HardEvent::S_MTE3>(eventSMTE3);
        WaitFlag<HardEvent::S_MTE3>(eventSMTE3);
        DataCopy(gm_[q_ + keep_], stage_[keep_], whole - keep_);
        return true;
    }

    static constexpr uint32_t kE = kBlock<U>;
    GlobalTensor<U> gm_;
    LocalTensor<U> stage_;
    uint32_t cap_ = 0, p_ = 0, keep_ = 0;
    uint64_t q_ = 0;
    bool vectorWritten_ = false;  // values since the last Flush written by the vector unit
};

}  // namespace airfuse_kernel
