// Vector APIs (count form): every operand in UB, 32 B-aligned, large enough; arithmetic dtypes only.
#pragma once
#include <cmath>
#include <cstring>
#include "tensor.h"

namespace AscendC {
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD, CAST_HYBRID };
}

namespace twin {

void CheckVecOperand(const char* api, const char* which, AscendC::TPosition pos, uint32_t ubOffset, uint64_t needBytes, uint32_t haveBytes);
void CheckCount(const char* api, int64_t count);
void CheckFits(const char* api, const char* which, uint64_t needBytes, uint32_t haveBytes);
void CheckCastMode(const char* src, const char* dst, AscendC::RoundMode mode);
uint32_t ReduceTmpElems(uint32_t count, uint32_t elemSize);

template <typename T> void CheckArith(const char* api) {
    if constexpr (std::is_same_v<T, bfloat16_t>)
        Fail(api, "bfloat16_t arithmetic is not supported on any Ascend product; Cast to float first");
    else if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, half>)
        Fail(api, Fmt("dtype %s is not supported by this API in the twin", TypeName<T>()));
}

template <typename T> void CheckVec(const char* api, const char* which, const AscendC::LocalTensor<T>& t, int64_t count) {
    CheckVecOperand(api, which, t.GetPosition(), t.UbOffset(), uint64_t(count) * sizeof(T), t.Bytes());
}

template <typename T, typename F>
void Binary(const char* api, const AscendC::LocalTensor<T>& d, const AscendC::LocalTensor<T>& a, const AscendC::LocalTensor<T>& b, int32_t n, F f) {
    CheckArith<T>(api);
    CheckCount(api, n);
    CheckVec(api, "dst", d, n);
    CheckVec(api, "src0", a, n);
    CheckVec(api, "src1", b, n);
    Instr in(api, kPipeV);
    in.Vector(n, sizeof(T));
    a.Access(in, "src0", uint64_t(n) * sizeof(T), false);
    b.Access(in, "src1", uint64_t(n) * sizeof(T), false);
    d.Access(in, "dst", uint64_t(n) * sizeof(T), true);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
        if (Cur().countOnly) return;
        T* dp = d.Data();
        const T* ap = a.Data();
        const T* bp = b.Data();
        for (int32_t i = 0; i < n; ++i) dp[i] = f(ap[i], bp[i]);
    }
}

template <typename T, typename F>
void Unary(const char* api, const AscendC::LocalTensor<T>& d, const AscendC::LocalTensor<T>& a, int32_t n, F f) {
    CheckArith<T>(api);
    CheckCount(api, n);
    CheckVec(api, "dst", d, n);
    CheckVec(api, "src", a, n);
    Instr in(api, kPipeV);
    in.Vector(n, sizeof(T));
    a.Access(in, "src", uint64_t(n) * sizeof(T), false);
    d.Access(in, "dst", uint64_t(n) * sizeof(T), true);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
        if (Cur().countOnly) return;
        T* dp = d.Data();
        const T* ap = a.Data();
        for (int32_t i = 0; i < n; ++i) dp[i] = f(ap[i]);
    }
}

// dst = f(dst, src0[i], src1[i]) for the fused multiply-adds, which read their destination;
// b == nullptr: a vector-scalar form (src only).
template <typename T, typename F>
void FusedDst(const char* api, const AscendC::LocalTensor<T>& d, const AscendC::LocalTensor<T>& a, const AscendC::LocalTensor<T>* b, int32_t n, F f) {
    CheckArith<T>(api);
    CheckCount(api, n);
    CheckVec(api, "dst", d, n);
    CheckVec(api, b ? "src0" : "src", a, n);
    if (b) CheckVec(api, "src1", *b, n);
    Instr in(api, kPipeV);
    in.Vector(n, sizeof(T));
    a.Access(in, b ? "src0" : "src", uint64_t(n) * sizeof(T), false);
    if (b) b->Access(in, "src1", uint64_t(n) * sizeof(T), false);
    d.Access(in, "dst", uint64_t(n) * sizeof(T), false);
    d.Access(in, "dst", uint64_t(n) * sizeof(T), true);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
        if (Cur().countOnly) return;
        T* dp = d.Data();
        const T* ap = a.Data();
        const T* bp = b ? b->Data() : ap;
        for (int32_t i = 0; i < n; ++i) dp[i] = f(dp[i], ap[i], bp[i]);
    }
}

inline float NanMax(float x, float y) { return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y); }

template <typename T> T TreeSum(const T* p, uint32_t n) {
    T buf[128];
    for (uint32_t i = 0; i < n; ++i) buf[i] = p[i];
    for (uint32_t w = 1; w < n; w *= 2)
        for (uint32_t i = 0; i + w < n; i += 2 * w) buf[i] = buf[i] + buf[i + w];
    return buf[0];
}

}  // namespace twin

namespace AscendC {

template <typename T> void Add(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Add", d, a, b, n, [](auto x, auto y) { return decltype(x)(x + y); });
}
template <typename T> void Sub(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Sub", d, a, b, n, [](auto x, auto y) { return decltype(x)(x - y); });
}
template <typename T> void Mul(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Mul", d, a, b, n, [](auto x, auto y) { return decltype(x)(x * y); });
}
template <typename T> void Div(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Div", d, a, b, n, [](auto x, auto y) { return decltype(x)(x / y); });
}
template <typename T> void Muls(const LocalTensor<T>& d, const LocalTensor<T>& a, const T& s, int32_t n) {
    twin::Unary("Muls", d, a, n, [s](auto x) { return decltype(x)(x * s); });
}
template <typename T> void Adds(const LocalTensor<T>& d, const LocalTensor<T>& a, const T& s, int32_t n) {
    twin::Unary("Adds", d, a, n, [s](auto x) { return decltype(x)(x + s); });
}

// The fused multiply-adds (asc-devkit FusedMulAdd.md, Axpy.md: half and float on A2 and the 310P
// AI Core; one dtype for every operand here). The docs do not say whether the product is rounded
// before the sum: the twin rounds both, as two separate ops would.
template <typename T> void FusedMulAdd(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::FusedDst("FusedMulAdd", d, a, &b, n, [](auto dv, auto x, auto y) { return decltype(x)(decltype(x)(x * dv) + y); });
}
}  // namespace AscendC
namespace twin {
// MulAddDst's products (its count and level-0 forms): MulAddDst.md lists A2/A3 and Kirin, not the
// 310P AI Core, so the twin refuses it there.
inline void MulAddDstChip() {
    if (std::strncmp(Cur().chip->socVersion, "Ascend910B", 10) != 0)
        Fail("MulAddDst", Fmt("not documented for %s (MulAddDst.md lists A2/A3 products only)", Cur().chip->socVersion));
}
// MulAddDst's element, in both forms: dst = src0 * src1 + dst, the product rounded to the
// element type first (as FusedMulAdd).
inline constexpr auto kMulAddDstElement = [](auto dv, auto x, auto y) { return decltype(x)(decltype(x)(x * y) + dv); };
}  // namespace twin
namespace AscendC {
// MulAddDst (asc-devkit MulAddDst.md: dst = src0 * src1 + dst; half and float). Rounded like FusedMulAdd.
template <typename T> void MulAddDst(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::MulAddDstChip();
    twin::FusedDst("MulAddDst", d, a, &b, n, twin::kMulAddDstElement);
}
template <typename T> void Axpy(const LocalTensor<T>& d, const LocalTensor<T>& a, const T& s, int32_t n) {
    twin::FusedDst("Axpy", d, a, static_cast<const LocalTensor<T>*>(nullptr), n, [s](auto dv, auto x, auto) { return decltype(x)(decltype(x)(x * s) + dv); });
}

// Exp, Abs (documented for half and float). Results round to T after each op, as elsewhere.
template <typename T> void Exp(const LocalTensor<T>& d, const LocalTensor<T>& a, int32_t n) {
    twin::Unary("Exp", d, a, n, [](auto x) { return decltype(x)(std::exp(float(x))); });
}
template <typename T> void Abs(const LocalTensor<T>& d, const LocalTensor<T>& a, int32_t n) {
    twin::Unary("Abs", d, a, n, [](auto x) { return decltype(x)(std::fabs(float(x))); });
}
// Sqrt (Sqrt.md: half and float on A2 and the 310P AI Core; at most 1 ulp on the NPU, IEEE here).
template <typename T> void Sqrt(const LocalTensor<T>& d, const LocalTensor<T>& a, int32_t n) {
    twin::Unary("Sqrt", d, a, n, [](auto x) { return decltype(x)(std::sqrt(float(x))); });
}
// Max/Min and their scalar forms Maxs/Mins. The docs leave NaN operands unspecified; the twin
// propagates NaN so that no kernel's NaN result can depend on the choice.
template <typename T> void Max(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Max", d, a, b, n, [](auto x, auto y) { return decltype(x)(twin::NanMax(float(x), float(y))); });
}
template <typename T> void Min(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    twin::Binary("Min", d, a, b, n, [](auto x, auto y) { return decltype(x)(-twin::NanMax(-float(x), -float(y))); });
}
template <typename T> void Maxs(const LocalTensor<T>& d, const LocalTensor<T>& a, const T& s, int32_t n) {
    twin::Unary("Maxs", d, a, n, [s](auto x) { return decltype(x)(twin::NanMax(float(x), float(s))); });
}
template <typename T> void Mins(const LocalTensor<T>& d, const LocalTensor<T>& a, const T& s, int32_t n) {
    twin::Unary("Mins", d, a, n, [s](auto x) { return decltype(x)(-twin::NanMax(-float(x), -float(s))); });
}

template <typename T> void Duplicate(const LocalTensor<T>& d, const T& v, int32_t n) {
    twin::CheckCount("Duplicate", n);
    twin::CheckVec("Duplicate", "dst", d, n);
    twin::Instr in("Duplicate", twin::kPipeV);
    in.Vector(n, sizeof(T));
    d.Access(in, "dst", uint64_t(n) * sizeof(T), true);
    if (twin::Cur().countOnly) return;
    T* dp = d.Data();
    for (int32_t i = 0; i < n; ++i) dp[i] = v;
}

// Sum of `count` elements into dst[0]: tree within each 256 B repeat; across repeats sequential
// on A2 (count form); elsewhere (310P) as [ADK] kernel_operator_vec_reduce_intf_impl.h's count
// form for dav_m200 does it: the full repeats' sums as a tree (ReduceImpl), the partial last
// repeat's sum apart, and that added last. sharedTmpBuffer must be as large as documented.
template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp, int32_t count) {
    const char* api = "ReduceSum";
    twin::CheckArith<T>(api);
    twin::CheckCount(api, count);
    twin::CheckVec(api, "dst", dst, 1);
    twin::CheckVec(api, "src", src, count);
    twin::CheckVec(api, "sharedTmpBuffer", tmp, twin::ReduceTmpElems(count, sizeof(T)));
    {
        twin::Instr in(api, twin::kPipeV);
        in.Vector(count, sizeof(T));
        src.Access(in, "src", uint64_t(count) * sizeof(T), false);
        if (twin::Cur().chip->reduceSumSequential) {
            twin::ScalarResultStore(api, dst.UbOffset(), dst.Buf(), dst.Gen());
        } else {
            tmp.Access(in, "sharedTmpBuffer", twin::ReduceTmpElems(count, sizeof(T)) * sizeof(T), true);
            dst.Access(in, "dst", sizeof(T), true);
        }
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
        if (twin::Cur().countOnly || count == 0) return;
        const uint32_t perRepeat = 256 / sizeof(T);
        const T* p = src.Data();
        std::vector<T> parts;
        for (uint32_t i = 0; i < uint32_t(count); i += perRepeat)
            parts.push_back(twin::TreeSum(p + i, std::min<uint32_t>(perRepeat, count - i)));
        if (twin::Cur().chip->reduceSumSequential) {
            for (size_t i = 1; i < parts.size(); ++i) parts[0] = T(parts[0] + parts[i]);
        } else {
            const bool tail = parts.size() > 1 && count % perRepeat != 0;
            const size_t body = parts.size() - (tail ? 1 : 0);
            for (size_t w = 1; w < body; w *= 2)
                for (size_t i = 0; i + w < body; i += 2 * w) parts[i] = T(parts[i] + parts[i + w]);
            if (tail) parts[0] = T(parts[0] + parts[body]);
        }
        dst.Data()[0] = parts[0];
    }
}

// WholeReduceSum, continuous-mask form (asc-devkit docs/api/context/WholeReduceSum.md; renamed
// ReduceRepeat<ReduceType::SUM>, docs/api/SIMD-API/.../归约计算/ReduceRepeat.md): repeat r takes
// the first `mask` elements of the 256 B repeat at src + r * srcRepStride blocks (its 32 B
// blocks srcBlkStride blocks apart), sums them as a pairwise tree (half sums saturate at
// +-65504) and writes dst[r * dstRepStride] (dst elements). ReduceRepeat.md lists A2/A3 and the
// 310P AI Core (half and float; [ADK] dav_m200 WholeReduceSumImpl issues vcadd; an older
// WholeReduceSum.md's table lists A2/A3 only); it calls repeatTime 0 a NOP on A2/A3 only, so the
// twin refuses it on 310P.
template <typename T>
void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {
    const char* api = "WholeReduceSum";
    twin::CheckArith<T>(api);
    const char* soc = twin::Cur().chip->socVersion;
    if (repeatTime == 0 && std::strncmp(soc, "Ascend910B", 10) != 0)
        twin::Fail(api, twin::Fmt("repeatTime 0 is documented as a NOP on A2/A3 only, not on %s", soc));
    constexpr int32_t perRepeat = 256 / sizeof(T), perBlock = 32 / sizeof(T);
    if (mask < 1 || mask > perRepeat) twin::Fail(api, twin::Fmt("mask %d outside [1, %d]", mask, perRepeat));
    if (repeatTime < 0 || repeatTime > 255) twin::Fail(api, twin::Fmt("repeatTime %d outside [0, 255]", repeatTime));
    if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) twin::Fail(api, "strides must not be negative");
    twin::CheckUbOperand(api, "src", src.GetPosition(), src.UbOffset());
    if (!IsUb(dst.GetPosition())) twin::Fail(api, "dst tensor is not in UB (VECIN/VECOUT/VECCALC)");
    if (dst.UbOffset() % sizeof(T) != 0) twin::Fail(api, twin::Fmt("dst UB address %u is not %u-byte aligned", dst.UbOffset(), unsigned(sizeof(T))));
    if (repeatTime == 0) return;
    const int32_t blocks = (mask + perBlock - 1) / perBlock;
    const uint64_t srcSpan = (uint64_t(repeatTime - 1) * srcRepStride + uint64_t(blocks - 1) * srcBlkStride + 1) * 32;
    const uint64_t dstSpan = (uint64_t(repeatTime - 1) * dstRepStride + 1) * sizeof(T);
    twin::CheckFits(api, "src", srcSpan, src.Bytes());
    twin::CheckFits(api, "dst", dstSpan, dst.Bytes());
    twin::Instr in(api, twin::kPipeV);
    in.Vector(uint64_t(repeatTime) * perRepeat, sizeof(T));
    const bool dense = srcBlkStride == 1;  // a repeat's blocks are one contiguous range
    for (int32_t r = 0; r < repeatTime; ++r)
        for (int32_t b = 0; b < (dense ? 1 : blocks); ++b) {
            uint64_t at = (uint64_t(r) * srcRepStride + uint64_t(b) * srcBlkStride) * 32;
            src[uint32_t(at / sizeof(T))].Access(in, "src", dense ? uint64_t(blocks) * 32 : 32, false);
        }
    for (int32_t r = 0; r < repeatTime; ++r) dst[uint32_t(r * dstRepStride)].Access(in, "dst", sizeof(T), true);
    if (twin::Cur().countOnly) return;
    for (int32_t r = 0; r < repeatTime; ++r) {
        T v[256 / sizeof(T)];
        for (int32_t i = 0; i < mask; ++i)
            v[i] = src.Data()[(uint64_t(r) * srcRepStride + uint64_t(i / perBlock) * srcBlkStride) * perBlock + i % perBlock];
        for (int32_t w = 1; w < mask; w *= 2)
            for (int32_t i = 0; i + w < mask; i += 2 * w) {
                float s = float(v[i]) + float(v[i + w]);
                if constexpr (std::is_same_v<T, half>) s = std::isfinite(s) ? std::fmin(65504.0f, std::fmax(-65504.0f, s)) : s;
                v[i] = std::is_same_v<T, half> ? T(s) : T(v[i] + v[i + w]);
            }
        dst.Data()[uint64_t(r) * dstRepStride] = v[0];
    }
}

// Level-0 strides of a binary op (kernel_struct_binary.h): block strides within a repeat and
// repeat strides, both in 32 B blocks.
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep, uint8_t src1Rep)
        : dstBlkStride(dstBlk), src0BlkStride(src0Blk), src1BlkStride(src1Blk), dstRepStride(dstRep), src0RepStride(src0Rep), src1RepStride(src1Rep) {}
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1, dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};

// Brcb's strides (kernel_struct_brcb.h): dst block stride within a repeat and dst repeat stride,
// in 32 B blocks.
struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t dstBlk, uint16_t dstRep) : dstBlkStride(dstBlk), dstRepStride(dstRep) {}
    uint16_t dstBlkStride = 1, dstRepStride = 8;
};

}  // namespace AscendC

namespace twin {

// The 32 B blocks repeat r of a level-0 operand touches: `blocks` blocks blkStride apart from
// r * repStride (one range when they are contiguous).
template <typename T>
void StridedAccess(const Instr& in, const AscendC::LocalTensor<T>& t, const char* which, int32_t repeats, int32_t blocks, uint32_t blkStride,
                   uint32_t repStride, bool write) {
    const bool dense = blkStride == 1;
    for (int32_t r = 0; r < repeats; ++r)
        for (int32_t b = 0; b < (dense ? 1 : blocks); ++b) {
            uint64_t at = (uint64_t(r) * repStride + uint64_t(b) * blkStride) * 32;
            t[uint32_t(at / sizeof(T))].Access(in, which, dense ? uint64_t(blocks) * 32 : 32, write);
        }
}

// Bytes from t's start that repeat `repeats - 1`'s last block ends at.
inline uint64_t StridedSpan(int32_t repeats, int32_t blocks, uint32_t blkStride, uint32_t repStride) {
    return (uint64_t(repeats - 1) * repStride + uint64_t(blocks - 1) * blkStride + 1) * 32;
}

// Level-0 binary op, continuous mask (the first `mask` elements of each repeat; the rest of dst
// is left unchanged): element i of repeat r sits in block i / perBlock of that repeat. kReadsDst:
// dst is an operand too (the fused multiply-adds), f(dst, src0, src1).
template <bool kReadsDst = false, typename T, typename F>
void StridedBinary(const char* api, const AscendC::LocalTensor<T>& d, const AscendC::LocalTensor<T>& a, const AscendC::LocalTensor<T>& b,
                   uint64_t mask, uint8_t repeatTime, const AscendC::BinaryRepeatParams& p, F f) {
    CheckArith<T>(api);
    constexpr int32_t perRepeat = 256 / sizeof(T), perBlock = 32 / sizeof(T);
    if (mask < 1 || mask > uint64_t(perRepeat)) Fail(api, Fmt("mask %llu outside [1, %d]", (unsigned long long)mask, perRepeat));
    CheckUbOperand(api, "dst", d.GetPosition(), d.UbOffset());
    CheckUbOperand(api, "src0", a.GetPosition(), a.UbOffset());
    CheckUbOperand(api, "src1", b.GetPosition(), b.UbOffset());
    if (repeatTime == 0) return;
    const int32_t blocks = int32_t((mask + perBlock - 1) / perBlock);
    CheckFits(api, "dst", StridedSpan(repeatTime, blocks, p.dstBlkStride, p.dstRepStride), d.Bytes());
    CheckFits(api, "src0", StridedSpan(repeatTime, blocks, p.src0BlkStride, p.src0RepStride), a.Bytes());
    CheckFits(api, "src1", StridedSpan(repeatTime, blocks, p.src1BlkStride, p.src1RepStride), b.Bytes());
    Instr in(api, kPipeV);
    in.Vector(uint64_t(repeatTime) * perRepeat, sizeof(T));
    StridedAccess(in, a, "src0", repeatTime, blocks, p.src0BlkStride, p.src0RepStride, false);
    StridedAccess(in, b, "src1", repeatTime, blocks, p.src1BlkStride, p.src1RepStride, false);
    if (kReadsDst) StridedAccess(in, d, "dst", repeatTime, blocks, p.dstBlkStride, p.dstRepStride, false);
    StridedAccess(in, d, "dst", repeatTime, blocks, p.dstBlkStride, p.dstRepStride, true);
    if (Cur().countOnly) return;
    auto at = [](int32_t r, uint64_t i, uint32_t blk, uint32_t rep) { return (uint64_t(r) * rep + i / perBlock * blk) * perBlock + i % perBlock; };
    // Every source element is read before dst is written: in-place operands see the old values.
    std::vector<T> out(uint64_t(repeatTime) * mask);
    for (int32_t r = 0; r < repeatTime; ++r)
        for (uint64_t i = 0; i < mask; ++i) {
            T x = a.Data()[at(r, i, p.src0BlkStride, p.src0RepStride)], y = b.Data()[at(r, i, p.src1BlkStride, p.src1RepStride)];
            if constexpr (kReadsDst) {
                out[r * mask + i] = f(d.Data()[at(r, i, p.dstBlkStride, p.dstRepStride)], x, y);
            } else {
                out[r * mask + i] = f(x, y);
            }
        }
    for (int32_t r = 0; r < repeatTime; ++r)
        for (uint64_t i = 0; i < mask; ++i) d.Data()[at(r, i, p.dstBlkStride, p.dstRepStride)] = out[r * mask + i];
}

}  // namespace twin

namespace AscendC {

// Mul, level-0 form with a continuous mask (Mul.md): repeatTime repeats of up to 256 B, each
// operand's blocks and repeats at its own strides (a block stride of 0 re-reads one block: a
// per-repeat scalar broadcast from Brcb's output).
template <typename T>
void Mul(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& p) {
    twin::StridedBinary("Mul", d, a, b, mask, repeatTime, p, [](auto x, auto y) { return decltype(x)(x * y); });
}

// Div, level-0 form with a continuous mask (Div.md: the same prototype and strides as Mul's; A2/A3
// and the 310P AI Core, half and float), each element divided as the count form divides.
template <typename T>
void Div(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& p) {
    twin::StridedBinary("Div", d, a, b, mask, repeatTime, p, [](auto x, auto y) { return decltype(x)(x / y); });
}

// MulAddDst, level-0 form with a continuous mask (MulAddDst.md's prototype of the high-dimensional
// split, BinaryRepeatParams as the level-0 Mul's): per element of the masked repeats
// dst = src0 * src1 + dst; A2/A3 only and rounded as its count form (above).
template <typename T>
void MulAddDst(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask, uint8_t repeatTime,
               const BinaryRepeatParams& p) {
    twin::MulAddDstChip();
    twin::StridedBinary<true>("MulAddDst", d, a, b, mask, repeatTime, p, twin::kMulAddDstElement);
}

// Brcb (Brcb.md): repeat r reads src[8r .. 8r + 8) and fills dst block r * dstRepStride +
// k * dstBlkStride with src[8r + k]. Documented for A2/A3 and the 310P AI Core, where it needs
// 8 KB of UB reserved that the twin does not model: the twin refuses it there.
template <typename T> void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint8_t repeatTime, const BrcbRepeatParams& p) {
    const char* api = "Brcb";
    if constexpr (sizeof(T) != 2 && sizeof(T) != 4) twin::Fail(api, twin::Fmt("dtype %s is not supported", twin::TypeName<T>()));
    if (std::strncmp(twin::Cur().chip->socVersion, "Ascend910B", 10) != 0)
        twin::Fail(api, twin::Fmt("not modelled on %s (Brcb.md: it needs 8 KB of UB reserved there)", twin::Cur().chip->socVersion));
    twin::CheckUbOperand(api, "dst", dst.GetPosition(), dst.UbOffset());
    twin::CheckUbOperand(api, "src", src.GetPosition(), src.UbOffset());
    // Brcb.md's constraints: dstBlkStride 0 is undefined behaviour (its pseudo-code would read it as 1),
    // and src and dst may not use the same memory: the twin refuses any overlap of src's range with
    // the span dst's blocks cover.
    if (p.dstBlkStride == 0) twin::Fail(api, "dstBlkStride 0 is not supported (Brcb.md: undefined behaviour)");
    if (repeatTime == 0) return;
    const uint32_t blk = p.dstBlkStride;
    constexpr uint32_t perBlock = 32 / sizeof(T);
    const uint64_t srcBytes = uint64_t(repeatTime) * 8 * sizeof(T), dstSpan = twin::StridedSpan(repeatTime, 8, blk, p.dstRepStride);
    twin::CheckFits(api, "src", srcBytes, src.Bytes());
    twin::CheckFits(api, "dst", dstSpan, dst.Bytes());
    if (src.UbOffset() < dst.UbOffset() + dstSpan && dst.UbOffset() < src.UbOffset() + srcBytes)
        twin::Fail(api, twin::Fmt("src UB [%llu, %llu) overlaps dst's span [%llu, %llu): src and dst must not share memory (Brcb.md)",
                                  (unsigned long long)src.UbOffset(), (unsigned long long)(src.UbOffset() + srcBytes),
                                  (unsigned long long)dst.UbOffset(), (unsigned long long)(dst.UbOffset() + dstSpan)));
    twin::Instr in(api, twin::kPipeV);
    in.Vector(uint64_t(repeatTime) * 8 * perBlock, sizeof(T));
    src.Access(in, "src", uint64_t(repeatTime) * 8 * sizeof(T), false);
    twin::StridedAccess(in, dst, "dst", repeatTime, 8, blk, p.dstRepStride, true);
    if (twin::Cur().countOnly) return;
    std::vector<T> v(src.Data(), src.Data() + uint32_t(repeatTime) * 8);
    for (uint32_t r = 0; r < repeatTime; ++r)
        for (uint32_t k = 0; k < 8; ++k)
            for (uint32_t i = 0; i < perBlock; ++i) dst.Data()[(uint64_t(r) * p.dstRepStride + uint64_t(k) * blk) * perBlock + i] = v[r * 8 + k];
}

// dst[i] = firstValue + i (CreateVecIndex.md: half/int16_t/int32_t/float on A2 and 310P AI Core).
// As CANN implements it (asc-devkit dav_c220 and dav_m200 CreateVecIndexCalc): the first 32 B
// block by scalar stores, S_V, then vector Adds that continue from it over the rest.
template <typename T> void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, uint32_t count) {
    const char* api = "CreateVecIndex";
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, half> && !std::is_same_v<T, int32_t>)
        twin::Fail(api, twin::Fmt("dtype %s is not supported by this API in the twin", twin::TypeName<T>()));
    twin::CheckVec(api, "dst", dst, count);
    uint32_t head = std::min<uint32_t>(count, 32 / sizeof(T));
    twin::ScalarStoresThenVector(api, dst.UbOffset(), head * sizeof(T), dst.Buf(), dst.Gen());
    if (count > head) {
        twin::Instr in(api, twin::kPipeV);
        in.Vector(count - head, sizeof(T));
        dst.Access(in, "dst", uint64_t(count) * sizeof(T), true);
    }
    if (twin::Cur().countOnly) return;
    T* dp = dst.Data();
    for (uint32_t i = 0; i < count; ++i) dp[i] = T(float(firstValue) + float(i));
}

// dst[i] = the element at byte srcBaseAddr + srcOffset[i] of src (Gather.md, count form: B16/B32
// data, A2 and 310P AI Core; bfloat16_t on A2 only). Each address must be element-aligned; the
// twin also refuses one outside src (the hardware would read whatever UB holds there). src is
// read whole: which elements an offset table picks is data, unknown to the ordering checks. The
// source must also be as long as CANN's CPU-debug check asks (asc-tools api_check
// kernel_vec_gather_check.cpp CheckAllLowLevel, reached through the count form's repeats of 256 B
// and its tail): the span of a contiguous vector op of those repeats, (repeats + 7) blocks.
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset, uint32_t srcBaseAddr, uint32_t count) {
    const char* api = "Gather";
    if constexpr (std::is_same_v<T, bfloat16_t>) {
        if (!twin::Cur().chip->hasBf16) twin::Fail(api, twin::Fmt("bfloat16_t does not exist on %s", twin::Cur().chip->socVersion));
    } else if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, half> && !std::is_same_v<T, int32_t> &&
                         !std::is_same_v<T, uint32_t>) {
        twin::Fail(api, twin::Fmt("dtype %s is not supported by this API in the twin", twin::TypeName<T>()));
    }
    twin::CheckCount(api, count);
    twin::CheckVec(api, "dst", dst, count);
    twin::CheckVec(api, "src", src, 1);
    twin::CheckVec(api, "srcOffset", srcOffset, count);
    uint32_t perRepeat = 256 / sizeof(T), repeats = count / perRepeat, tail = count % perRepeat;
    uint32_t asked = repeats ? (repeats + 7) * uint32_t(32 / sizeof(T)) : 0;
    if (asked < tail) asked = tail;
    if (src.GetSize() < asked)
        twin::Fail(api, twin::Fmt("src holds %u elements where CANN's CPU-debug Gather check asks %u for count %u", src.GetSize(), asked, count));
    if (srcBaseAddr % sizeof(T) != 0) twin::Fail(api, twin::Fmt("srcBaseAddr %u is not a multiple of the element size %u", srcBaseAddr, unsigned(sizeof(T))));
    twin::Instr in(api, twin::kPipeV);
    in.Vector(count, 4);
    srcOffset.Access(in, "srcOffset", uint64_t(count) * 4, false);
    src.Access(in, "src", src.Bytes(), false);
    dst.Access(in, "dst", uint64_t(count) * sizeof(T), true);
    if (twin::Cur().countOnly) return;
    std::vector<T> out(count);
    const uint8_t* base = reinterpret_cast<const uint8_t*>(src.Data());
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t at = uint64_t(srcBaseAddr) + srcOffset.Data()[i];
        if (at % sizeof(T) != 0) twin::Fail(api, twin::Fmt("srcOffset[%u] = %llu bytes is not element-aligned", i, (unsigned long long)at));
        if (at + sizeof(T) > src.Bytes())
            twin::Fail(api, twin::Fmt("srcOffset[%u] = %llu bytes is outside src's %u bytes", i, (unsigned long long)at, src.Bytes()));
        std::memcpy(&out[i], base + at, sizeof(T));
    }
    std::memcpy(dst.Data(), out.data(), uint64_t(count) * sizeof(T));
}

template <typename D, typename S> void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, uint32_t count) {
    const char* api = "Cast";
    twin::CheckCastMode(twin::TypeName<S>(), twin::TypeName<D>(), mode);
    twin::CheckVec(api, "dst", dst, count);
    twin::CheckVec(api, "src", src, count);
    twin::Instr in(api, twin::kPipeV);
    in.Vector(count, sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D));
    src.Access(in, "src", uint64_t(count) * sizeof(S), false);
    dst.Access(in, "dst", uint64_t(count) * sizeof(D), true);
    if (twin::Cur().countOnly) return;
    D* dp = dst.Data();
    const S* sp = src.Data();
    if constexpr (std::is_same_v<S, bfloat16_t> && std::is_same_v<D, float>) {
        for (uint32_t i = 0; i < count; ++i) dp[i] = twin::Bf16ToFloat(sp[i]);
    } else if constexpr (std::is_same_v<S, half> && std::is_same_v<D, float>) {
        for (uint32_t i = 0; i < count; ++i) dp[i] = float(sp[i]);
    } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, half>) {
        // Out-of-range values saturate, as the hardware does by default.
        for (uint32_t i = 0; i < count; ++i) {
            float v = sp[i];
            if (std::isfinite(v)) v = v > 65504.0f ? 65504.0f : (v < -65504.0f ? -65504.0f : v);
            dp[i] = half(v);
        }
    } else if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, float>) {
        for (uint32_t i = 0; i < count; ++i) dp[i] = float(sp[i]);
    } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, int32_t>) {
        // Out-of-range values saturate; CheckCastMode admits the modes below only.
        for (uint32_t i = 0; i < count; ++i) {
            double v = mode == RoundMode::CAST_FLOOR ? std::floor(sp[i]) : std::nearbyint(sp[i]);
            dp[i] = v >= 2147483647.0 ? INT32_MAX : (v <= -2147483648.0 ? INT32_MIN : int32_t(v));
        }
    } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, bfloat16_t>) {
        for (uint32_t i = 0; i < count; ++i) {
            bfloat16_t b = twin::FloatToBf16Rint(sp[i]);
            if ((b.bits & 0x7fff) == 0x7f80 && std::isfinite(sp[i])) b.bits = uint16_t((b.bits & 0x8000) | 0x7f7f);
            dp[i] = b;
        }
    } else {
        twin::Fail(api, twin::Fmt("%s -> %s is not implemented in the twin", twin::TypeName<S>(), twin::TypeName<D>()));
    }
}

}  // namespace AscendC
