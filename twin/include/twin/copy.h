// GM <-> UB data movement with the 32-byte and bounds rules, counting GM bytes.
#pragma once
#include <initializer_list>
#include "tensor.h"

namespace AscendC {

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStride_, uint32_t dstStride_, uint32_t rsv_)
        : blockCount(count), blockLen(len), srcStride(srcStride_), dstStride(dstStride_), rsv(rsv_) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;   // bytes
    uint32_t srcStride = 0;  // bytes on the GM side, 32 B blocks on the UB side
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

template <typename T> struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPad_, uint8_t left, uint8_t right, T value)
        : isPad(isPad_), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue{};
};

}  // namespace AscendC

namespace twin {

void CheckFits(const char* api, const char* which, uint64_t needBytes, uint32_t haveBytes);
void CheckDataCopyLen(const char* api, uint64_t bytes);
void CheckGlobalSize(const char* api, uint64_t needElems, uint64_t haveElems);
void CheckDataCopyPad(const char* api, uint32_t blockLen, uint32_t elemSize, uint16_t blockCount);

// The data paths a copy API's doc lists ("以逻辑位置TPosition表示", docs/zh/api/SIMD-API/基础API/
// Memory矢量计算/数据搬运/<doc>): the UB operand's logical position (from the TQue/TBuf it came
// from) must be one of `allowed`, else the copy is not documented on the chip. None of the chips
// the twin models is a 950PR/950DT, the only one whose DataCopyPad may also load into VECCALC.
void CheckCopyPath(const char* api, const char* doc, const char* which, AscendC::TPosition pos,
                   std::initializer_list<AscendC::TPosition> allowed);
inline constexpr const char* kDocDataCopy = "DataCopy（GM与UB连续数据搬运）.md";
inline constexpr const char* kDocDataCopyStrided = "DataCopy（GM与UB高维切分数据搬运）.md";
inline constexpr const char* kDocPadIn = "DataCopyPad（GMToUB非对齐数据搬运）.md";
inline constexpr const char* kDocPadOut = "DataCopyPad（UBToGM非对齐数据搬运）.md";

// The GM bytes of blockCount blocks of blockLen, gmStep apart: the gaps of a strided copy are
// neither read nor written.
inline void GmBlocks(const Instr& in, const void* gm, uint16_t blockCount, uint32_t blockLen, uint64_t gmStep, bool write) {
    if (gmStep == blockLen) {
        in.Gm(gm, uint64_t(blockCount) * blockLen, write);
        return;
    }
    const auto* base = static_cast<const uint8_t*>(gm);
    for (uint16_t b = 0; b < blockCount; ++b) in.Gm(base + b * gmStep, blockLen, write);
}

}  // namespace twin

namespace AscendC {

// DataCopy's strided form, on every chip (DataCopy.md, DataCopyParams): blockCount blocks
// (1..4095) of blockLen 32 B units (1..65535); srcStride / dstStride 32 B units skipped after
// each block on the source / destination side.
struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStride_, uint16_t dstStride_)
        : blockCount(count), blockLen(len), srcStride(srcStride_), dstStride(dstStride_) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

// GM->UB, strided: the GM gaps are neither read nor counted.
template <typename T> void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(GM->UB, DataCopyParams)";
    if (p.blockCount == 0 || p.blockCount > 4095) twin::Fail(api, twin::Fmt("blockCount %u outside [1, 4095]", p.blockCount));
    if (p.blockLen == 0) twin::Fail(api, "blockLen 0 (in 32 B units, at least 1)");
    uint64_t block = uint64_t(p.blockLen) * 32, gmStep = block + uint64_t(p.srcStride) * 32, ubStep = block + uint64_t(p.dstStride) * 32;
    uint64_t gmSpan = (p.blockCount - 1) * gmStep + block, ubSpan = (p.blockCount - 1) * ubStep + block;
    twin::CheckUbOperand(api, "dst", dst.GetPosition(), dst.UbOffset());
    twin::CheckCopyPath(api, twin::kDocDataCopyStrided, "dst", dst.GetPosition(), {TPosition::VECIN});
    twin::CheckFits(api, "dst", ubSpan, dst.Bytes());
    twin::CheckGlobalSize(api, gmSpan / sizeof(T), src.GetSize());
    twin::CheckGm(api, src.GetPhyAddr(), gmSpan);
    twin::Instr in(api, twin::kPipeMte2);
    twin::GmBlocks(in, src.GetPhyAddr(), p.blockCount, uint32_t(block), gmStep, false);
    dst.Access(in, "dst", ubSpan, true);
    twin::Cur().gmRead += block * p.blockCount;
    if (twin::Cur().countOnly) return;
    auto* ub = reinterpret_cast<uint8_t*>(dst.Data());
    auto* gm = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
    for (uint16_t b = 0; b < p.blockCount; ++b) std::memcpy(ub + b * ubStep, gm + b * gmStep, block);
}

template <typename T> void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    const char* api = "DataCopy(GM->UB)";
    uint64_t bytes = uint64_t(count) * sizeof(T);
    twin::CheckDataCopyLen(api, bytes);
    twin::CheckUbOperand(api, "dst", dst.GetPosition(), dst.UbOffset());
    twin::CheckCopyPath(api, twin::kDocDataCopy, "dst", dst.GetPosition(), {TPosition::VECIN});
    twin::CheckFits(api, "dst", bytes, dst.Bytes());
    twin::CheckGlobalSize(api, count, src.GetSize());
    twin::CheckGm(api, src.GetPhyAddr(), bytes);
    twin::Instr in(api, twin::kPipeMte2);
    in.Gm(src.GetPhyAddr(), bytes, false);
    dst.Access(in, "dst", bytes, true);
    twin::Cur().gmRead += bytes;
    if (!twin::Cur().countOnly) std::memcpy(dst.Data(), src.GetPhyAddr(), bytes);
}

template <typename T> void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    const char* api = "DataCopy(UB->GM)";
    uint64_t bytes = uint64_t(count) * sizeof(T);
    twin::CheckDataCopyLen(api, bytes);
    twin::CheckUbOperand(api, "src", src.GetPosition(), src.UbOffset());
    twin::CheckCopyPath(api, twin::kDocDataCopy, "src", src.GetPosition(), {TPosition::VECOUT});
    twin::CheckFits(api, "src", bytes, src.Bytes());
    twin::CheckGlobalSize(api, count, dst.GetSize());
    twin::CheckGm(api, dst.GetPhyAddr(), bytes);
    twin::Instr in(api, twin::kPipeMte3);
    src.Access(in, "src", bytes, false);
    // Zeros (a full launch only: count-only moves no data) may be the soft SyncAll's kernel-side zeroing.
    bool zeros = !twin::Cur().countOnly && twin::AllZero(src.Data(), bytes);
    in.Gm(dst.GetPhyAddr(), bytes, true, zeros ? twin::GmWriteKind::kZeros : twin::GmWriteKind::kPlain);
    twin::Cur().gmWritten += bytes;
    if (!twin::Cur().countOnly) std::memcpy(dst.GetPhyAddr(0), src.Data(), bytes);
}

// CANN's headers for 310P (__CCE_AICORE__ 200) keep DataCopyPad, marked deprecated ("an
// unsupported API on current device"): an NPU build compiles it to nothing and a CPU-debug run
// aborts. The twin declares it the same way and refuses it when run as a 310P chip
// (twin/src/runtime.cpp CheckDataCopyPad); the kernels leave it out of their 310P builds.
#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 200
#define TWIN_UNSUPPORTED_ON_THIS_CHIP(api) [[deprecated(api " is an unsupported API on current device (310P)")]]
#else
#define TWIN_UNSUPPORTED_ON_THIS_CHIP(api)
#endif

// GM->UB: each block lands 32 B-aligned, padded up to whole 32 B blocks, then dstStride blocks.
template <typename T>
TWIN_UNSUPPORTED_ON_THIS_CHIP("DataCopyPad")
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad) {
    const char* api = "DataCopyPad(GM->UB)";
    twin::CheckDataCopyPad(api, p.blockLen, sizeof(T), p.blockCount);
    twin::CheckUbOperand(api, "dst", dst.GetPosition(), dst.UbOffset());
    twin::CheckCopyPath(api, twin::kDocPadIn, "dst", dst.GetPosition(), {TPosition::VECIN, TPosition::VECOUT});
    if (p.blockCount == 0 || p.blockLen == 0) return;
    uint32_t left = pad.isPad ? pad.leftPadding : 0, right = pad.isPad ? pad.rightPadding : 0;
    if (left * sizeof(T) > 32 || right * sizeof(T) > 32)
        twin::Fail(api, twin::Fmt("padding %u/%u elements exceeds 32 bytes", left, right));
    uint64_t blockUb = (left * sizeof(T) + p.blockLen + right * sizeof(T) + 31) / 32 * 32;
    uint64_t ubStep = blockUb + uint64_t(p.dstStride) * 32, gmStep = uint64_t(p.blockLen) + p.srcStride;
    uint64_t gmSpan = (p.blockCount - 1) * gmStep + p.blockLen;
    twin::CheckFits(api, "dst", (p.blockCount - 1) * ubStep + blockUb, dst.Bytes());
    twin::CheckGlobalSize(api, gmSpan / sizeof(T), src.GetSize());
    twin::CheckGm(api, src.GetPhyAddr(), gmSpan);
    twin::Instr in(api, twin::kPipeMte2);
    twin::GmBlocks(in, src.GetPhyAddr(), p.blockCount, p.blockLen, gmStep, false);
    dst.Access(in, "dst", (p.blockCount - 1) * ubStep + blockUb, true);
    twin::Cur().gmRead += uint64_t(p.blockLen) * p.blockCount;
    if (twin::Cur().countOnly) return;
    auto* ub = reinterpret_cast<uint8_t*>(dst.Data());
    auto* gm = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
    uint32_t n = p.blockLen / sizeof(T);
    for (uint32_t b = 0; b < p.blockCount; ++b) {
        uint8_t* blk = ub + b * ubStep;
        // Undefined padding is poisoned (NaN for float types) so kernels cannot rely on it.
        std::memset(blk, 0xff, blockUb);
        T* e = reinterpret_cast<T*>(blk);
        for (uint32_t i = 0; i < left; ++i) e[i] = pad.paddingValue;
        std::memcpy(e + left, gm + b * gmStep, p.blockLen);
        for (uint32_t i = 0; i < right; ++i) e[left + n + i] = pad.paddingValue;
    }
}

// UB->GM: each source block starts 32 B-aligned (then srcStride blocks); exactly blockLen bytes reach GM.
template <typename T>
TWIN_UNSUPPORTED_ON_THIS_CHIP("DataCopyPad")
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    const char* api = "DataCopyPad(UB->GM)";
    twin::CheckDataCopyPad(api, p.blockLen, sizeof(T), p.blockCount);
    twin::CheckUbOperand(api, "src", src.GetPosition(), src.UbOffset());
    twin::CheckCopyPath(api, twin::kDocPadOut, "src", src.GetPosition(), {TPosition::VECIN, TPosition::VECOUT});
    if (p.blockCount == 0 || p.blockLen == 0) return;
    uint64_t blockUb = (uint64_t(p.blockLen) + 31) / 32 * 32;
    uint64_t ubStep = blockUb + uint64_t(p.srcStride) * 32, gmStep = uint64_t(p.blockLen) + p.dstStride;
    uint64_t gmSpan = (p.blockCount - 1) * gmStep + p.blockLen;
    twin::CheckFits(api, "src", (p.blockCount - 1) * ubStep + p.blockLen, src.Bytes());
    twin::CheckGlobalSize(api, gmSpan / sizeof(T), dst.GetSize());
    twin::CheckGm(api, dst.GetPhyAddr(), gmSpan);
    twin::Instr in(api, twin::kPipeMte3);
    src.Access(in, "src", (p.blockCount - 1) * ubStep + p.blockLen, false);
    twin::GmBlocks(in, dst.GetPhyAddr(), p.blockCount, p.blockLen, gmStep, true);
    twin::Cur().gmWritten += uint64_t(p.blockLen) * p.blockCount;
    if (twin::Cur().countOnly) return;
    auto* ub = reinterpret_cast<const uint8_t*>(src.Data());
    auto* gm = reinterpret_cast<uint8_t*>(dst.GetPhyAddr(0));
    for (uint32_t b = 0; b < p.blockCount; ++b) std::memcpy(gm + b * gmStep, ub + b * ubStep, p.blockLen);
}

#undef TWIN_UNSUPPORTED_ON_THIS_CHIP

}  // namespace AscendC
