// LocalTensor (a view into the core's unified buffer) and GlobalTensor (a view into GM).
#pragma once
#include "sync.h"

namespace AscendC {

enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, SPM, TSCM };
using QuePosition = TPosition;

template <typename T, typename U> struct IsSameType {
    static constexpr bool value = std::is_same_v<T, U>;
};

inline bool IsUb(TPosition p) { return p == TPosition::VECIN || p == TPosition::VECOUT || p == TPosition::VECCALC; }

}  // namespace AscendC

namespace twin {
void CheckUbOperand(const char* api, const char* which, AscendC::TPosition pos, uint32_t ubOffset);
}

namespace AscendC {

template <typename T> class LocalTensor {
public:
    LocalTensor() = default;
    // buf/gen: the queue buffer this tensor was allocated from and its generation (-1: TBuf memory).
    LocalTensor(uint32_t ubOffset, uint32_t bytes, TPosition pos, int32_t buf = -1, uint32_t gen = 0)
        : off_(ubOffset), bytes_(bytes), pos_(pos), buf_(buf), gen_(gen) {}

    uint32_t GetSize() const { return bytes_ / sizeof(T); }
    TPosition GetPosition() const { return pos_; }
    uint32_t UbOffset() const { return off_; }
    uint32_t Bytes() const { return bytes_; }
    T* Data() const { return reinterpret_cast<T*>(twin::Cur().ub.data() + off_); }
    uint64_t GetPhyAddr() const { return off_; }
    int32_t Buf() const { return buf_; }
    uint32_t Gen() const { return gen_; }

    // This tensor as an operand of instruction `in`, over its first `bytes` bytes.
    void Access(const twin::Instr& in, const char* which, uint64_t bytes, bool write) const { in.Ub(which, off_, bytes, buf_, gen_, write); }

    // The offset must lie inside the tensor, as CANN's CPU-debug check of operator[] requires
    // (asc-devkit impl/basic_api/kernel_tensor_impl.h: dataLen > offset * sizeof(T)); a view that
    // starts at the end is refused even if never used.
    LocalTensor operator[](uint32_t offset) const {
        if (uint64_t(offset) * sizeof(T) >= bytes_)
            twin::Fail("LocalTensor::operator[]", twin::Fmt("offset %u is not inside the tensor's %u elements", offset, GetSize()));
        return LocalTensor(off_ + offset * sizeof(T), bytes_ - offset * sizeof(T), pos_, buf_, gen_);
    }

    template <typename U> LocalTensor<U> ReinterpretCast() const { return LocalTensor<U>(off_, bytes_, pos_, buf_, gen_); }

    T GetValue(uint32_t i) const {
        const char* api = "LocalTensor::GetValue";
        CheckIndex(api, i);
        twin::Instr in(api, twin::kPipeS);
        in.Ub("element", off_ + i * sizeof(T), sizeof(T), buf_, gen_, false);
        return Data()[i];
    }
    void SetValue(uint32_t i, T v) const {
        const char* api = "LocalTensor::SetValue";
        CheckIndex(api, i);
        twin::Instr in(api, twin::kPipeS);
        in.Ub("element", off_ + i * sizeof(T), sizeof(T), buf_, gen_, true);
        Data()[i] = v;
    }

private:
    void CheckIndex(const char* api, uint32_t i) const {
        if (!IsUb(pos_)) twin::Fail(api, "tensor is not in VECIN/VECOUT/VECCALC");
        if (i >= GetSize()) twin::Fail(api, twin::Fmt("index %u out of range, tensor has %u elements", i, GetSize()));
    }
    uint32_t off_ = 0;
    uint32_t bytes_ = 0;
    TPosition pos_ = TPosition::VECCALC;
    int32_t buf_ = -1;
    uint32_t gen_ = 0;
};

template <typename T> class GlobalTensor {
public:
    void SetGlobalBuffer(__gm__ T* buf, uint64_t sizeInElems) {
        twin::CheckGm("GlobalTensor::SetGlobalBuffer", buf, sizeInElems * sizeof(T));
        base_ = buf;
        size_ = sizeInElems;
    }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g;
        g.base_ = base_ + offset;
        g.size_ = offset <= size_ ? size_ - offset : 0;
        return g;
    }
    uint64_t GetSize() const { return size_; }
    // As in CANN's kernel_tensor.h: the base address is read-only, an offset one writable.
    const T* GetPhyAddr() const { return base_; }
    T* GetPhyAddr(uint64_t offset) const { return base_ + offset; }

    // Scalar GM access (through the core's data cache on the NPU; flush writes with
    // DataCacheCleanAndInvalid). Bounds-checked and counted like a copy of one element.
    T GetValue(uint64_t i) const {
        const char* api = "GlobalTensor::GetValue";
        CheckElem(api, i);
        twin::Instr(api, twin::kPipeS).Gm(base_ + i, sizeof(T), false);
        twin::Cur().gmRead += sizeof(T);
        return twin::Cur().countOnly ? T{} : base_[i];
    }
    // Not const, as in CANN's kernel_tensor.h: a const GlobalTensor cannot be written.
    void SetValue(uint64_t i, T v) {
        const char* api = "GlobalTensor::SetValue";
        CheckElem(api, i);
        twin::Instr(api, twin::kPipeS).Gm(base_ + i, sizeof(T), true);
        twin::Cur().gmWritten += sizeof(T);
        if (!twin::Cur().countOnly) base_[i] = v;
    }

private:
    void CheckElem(const char* api, uint64_t i) const {
        if (i >= size_) twin::Fail(api, twin::Fmt("index %llu outside the GlobalTensor's %llu elements", (unsigned long long)i, (unsigned long long)size_));
        twin::CheckGm(api, base_ + i, sizeof(T));
    }
    T* base_ = nullptr;
    uint64_t size_ = 0;
};

enum class CacheLine { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE };

// Writes the cache line holding dst[0] back to GM. The twin has no data cache: it only checks the address.
template <typename T, CacheLine line> void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    twin::CheckGm("DataCacheCleanAndInvalid", dst.GetPhyAddr(), sizeof(T));
}

}  // namespace AscendC
