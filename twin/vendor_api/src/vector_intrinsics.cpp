// Vector instructions. Operands as asc-devkit impl/basic_api/dav_c220 passes them:
// kernel_operator_vec_binary_impl.h (vadd: the count form sets counter mode, mask = count, one
// repeat of block stride 1 and repeat stride 8), kernel_operator_vec_vconv_impl.h (CastImpl: the
// count form in counter mode, repeat strides 8 for the wider and 4 for the narrower operand;
// CastIntrinsicsImpl picks vconv_<src>2<dst><mode> by RoundMode: r CAST_RINT, no suffix CAST_NONE).
// Numerics: float32 is IEEE (the host's); half arithmetic rounds each result to half (computed in
// float, exact for one operation); float -> half / bfloat16 rounds to nearest even and saturates
// finite values to the largest finite one, as the home-made twin (twin/include/twin/vector.h Cast)
// reads CANN's Cast.md.
#include <cmath>
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"
#include "vector_engine.h"

using namespace airfuse_vendor_twin;

namespace {
using f16 = _Float16;

float Bf16ToFloat(uint16_t bits) {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint16_t FloatToBf16RintSaturating(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // NaN stays a quiet NaN
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    if ((r & 0x7fff) == 0x7f80 && std::isfinite(f)) r = (r & 0x8000) | 0x7f7f;
    return uint16_t(r);
}

int32_t SaturateToInt32(double v) { return v >= 2147483647.0 ? INT32_MAX : (v <= -2147483648.0 ? INT32_MIN : int32_t(v)); }

f16 FloatToHalfRintSaturating(float v) {
    if (std::isfinite(v)) v = v > 65504.0f ? 65504.0f : (v < -65504.0f ? -65504.0f : v);
    return f16(v);
}

template <typename T, typename Op>
void Binary(const char* name, void* dst, void* src0, void* src1, uint8_t repeat, uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk,
            uint8_t dstRep, uint8_t src0Rep, uint8_t src1Rep, Op op) {
    VecOperand ops[3] = {{"dst", static_cast<uint8_t*>(dst), sizeof(T), dstBlk, dstRep, true},
                         {"src0", static_cast<uint8_t*>(src0), sizeof(T), src0Blk, src0Rep, false},
                         {"src1", static_cast<uint8_t*>(src1), sizeof(T), src1Blk, src1Rep, false}};
    ForEachActive(name, repeat, ops, [&](uint64_t, uint8_t* const* at) { Store<T>(at[0], op(Load<T>(at[1]), Load<T>(at[2]))); });
}

// dst = op(src) elementwise, or op(src, dst) when `readsDst` (vaxpy).
template <typename T, typename Op>
void Unary(const char* name, void* dst, void* src, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint16_t dstRep, uint16_t srcRep, Op op) {
    VecOperand ops[2] = {{"dst", static_cast<uint8_t*>(dst), sizeof(T), dstBlk, dstRep, true}, {"src", static_cast<uint8_t*>(src), sizeof(T), srcBlk, srcRep, false}};
    ForEachActive(name, repeat, ops, [&](uint64_t, uint8_t* const* at) { Store<T>(at[0], op(Load<T>(at[1]), Load<T>(at[0]))); });
}

template <typename D, typename S, typename Conv>
void Convert(const char* name, void* dst, void* src, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep, Conv conv) {
    VecOperand ops[2] = {{"dst", static_cast<uint8_t*>(dst), sizeof(D), dstBlk, dstRep, true}, {"src", static_cast<uint8_t*>(src), sizeof(S), srcBlk, srcRep, false}};
    ForEachActive(name, repeat, ops, [&](uint64_t, uint8_t* const* at) { Store<D>(at[0], conv(Load<S>(at[1]))); });
}
}  // namespace

#define AIRFUSE_BINARY(name, T, U, expr)                                                                                      \
    void name(T* dst, T* src0, T* src1, uint8_t repeat, uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep,      \
              uint8_t src0Rep, uint8_t src1Rep) {                                                                             \
        Binary<U>(#name, dst, src0, src1, repeat, dstBlk, src0Blk, src1Blk, dstRep, src0Rep, src1Rep, [](U a, U b) { return expr; }); \
    }
AIRFUSE_BINARY(vadd, float, float, a + b)
AIRFUSE_BINARY(vadd, half, f16, f16(float(a) + float(b)))
AIRFUSE_BINARY(vsub, float, float, a - b)
AIRFUSE_BINARY(vmul, float, float, a * b)
AIRFUSE_BINARY(vdiv, float, float, a / b)

// vmadd (FusedMulAddImpl, FusedMulAdd.md): dst = src0 * dst + src1, the product rounded before the
// sum (home-made reading: the doc does not say it is fused).
void vmadd(float* dst, float* src0, float* src1, uint8_t repeat, uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep,
           uint8_t src1Rep) {
    VecOperand ops[3] = {{"dst", reinterpret_cast<uint8_t*>(dst), 4, dstBlk, dstRep, true},
                         {"src0", reinterpret_cast<uint8_t*>(src0), 4, src0Blk, src0Rep, false},
                         {"src1", reinterpret_cast<uint8_t*>(src1), 4, src1Blk, src1Rep, false}};
    ForEachActive("vmadd", repeat, ops, [](uint64_t, uint8_t* const* at) {
        volatile float product = Load<float>(at[1]) * Load<float>(at[0]);  // no contraction into a fused multiply-add
        Store<float>(at[0], product + Load<float>(at[2]));
    });
}

// With a scalar operand (kernel_operator_vec_binary_scalar_impl.h: vadds, vmuls).
#define AIRFUSE_SCALAR(name, T, expr)                                                                                         \
    void name(T* dst, T* src, T s, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint16_t dstRep, uint16_t srcRep) {       \
        Unary<T>(#name, dst, src, repeat, dstBlk, srcBlk, dstRep, srcRep, [s](T a, T) { return expr; });                        \
    }
AIRFUSE_SCALAR(vadds, float, a + s)
AIRFUSE_SCALAR(vmuls, float, a * s)

// vmla (MulAddDstIntrinsicsImpl, MulAddDst.md): dst = src0 * src1 + dst, the product rounded
// before the sum (home-made reading, as vmadd).
void vmla(float* dst, float* src0, float* src1, uint8_t repeat, uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep,
          uint8_t src1Rep) {
    VecOperand ops[3] = {{"dst", reinterpret_cast<uint8_t*>(dst), 4, dstBlk, dstRep, true},
                         {"src0", reinterpret_cast<uint8_t*>(src0), 4, src0Blk, src0Rep, false},
                         {"src1", reinterpret_cast<uint8_t*>(src1), 4, src1Blk, src1Rep, false}};
    ForEachActive("vmla", repeat, ops, [](uint64_t, uint8_t* const* at) {
        volatile float product = Load<float>(at[1]) * Load<float>(at[2]);  // no contraction into a fused multiply-add
        Store<float>(at[0], product + Load<float>(at[0]));
    });
}

// vmaxs / vmins (MaxsImpl / MinsImpl, which pass two trailing flags false): the docs leave NaN
// operands open; NaN propagates (home-made reading, twin/include/twin/vector.h Maxs/Mins).
static float NanMax(float x, float y) { return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y); }
#define AIRFUSE_MAX_MIN(name, expr)                                                                                             \
    void name(float* dst, float* src, float s, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep, bool flag0, \
              bool flag1) {                                                                                                     \
        if (flag0 || flag1) Fail(#name, "its trailing flags set are not modelled (MaxsImpl / MinsImpl pass false)");            \
        Unary<float>(#name, dst, src, repeat, dstBlk, srcBlk, dstRep, srcRep, [s](float a, float) { return expr; });             \
    }
AIRFUSE_MAX_MIN(vmaxs, NanMax(a, s))
AIRFUSE_MAX_MIN(vmins, -NanMax(-a, -s))

// vaxpy (kernel_operator_vec_ternary_scalar_impl.h, Axpy.md): dst = src * scalar + dst, the
// product rounded before the sum (home-made reading: the doc does not say it is fused).
void vaxpy(float* dst, float* src, float s, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep) {
    Unary<float>("vaxpy", dst, src, repeat, dstBlk, srcBlk, dstRep, srcRep, [s](float a, float d) {
        volatile float product = a * s;  // no contraction into a fused multiply-add
        return product + d;
    });
}

// vsqrt, vexp, vabs (kernel_operator_vec_unary_impl.h): IEEE square root, the host's expf (the
// NPU's approximate exponential is not modelled, as in the home-made twin), absolute value.
#define AIRFUSE_UNARY(name, expr)                                                                                           \
    void name(float* dst, float* src, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep) {    \
        Unary<float>(#name, dst, src, repeat, dstBlk, srcBlk, dstRep, srcRep, [](float a, float) { return expr; });           \
    }
AIRFUSE_UNARY(vsqrt, std::sqrt(a))
AIRFUSE_UNARY(vexp, std::exp(a))
AIRFUSE_UNARY(vabs, std::fabs(a))

// vector_dup (kernel_operator_vec_duplicate_impl.h: vector_dup(dst, scalar, repeat, dstBlkStride, 1,
// dstRepStride, 0)): every active element of dst takes the scalar.
template <typename T> void Dup(T* dst, T s, uint8_t repeat, uint16_t dstBlk, uint8_t dstRep) {
    VecOperand ops[1] = {{"dst", reinterpret_cast<uint8_t*>(dst), sizeof(T), dstBlk, dstRep, true}};
    ForEachActive("vector_dup", repeat, ops, [s](uint64_t, uint8_t* const* at) { Store<T>(at[0], s); });
}
void vector_dup(float* dst, float s, uint8_t repeat, uint16_t dstBlk, uint16_t, uint8_t dstRep, uint8_t) { Dup(dst, s, repeat, dstBlk, dstRep); }
void vector_dup(uint32_t* dst, uint32_t s, uint8_t repeat, uint16_t dstBlk, uint16_t, uint8_t dstRep, uint8_t) { Dup(dst, s, repeat, dstBlk, dstRep); }

#define AIRFUSE_CONVERT(name, D, S, DU, SU, expr)                                                                            \
    void name(D* dst, S* src, uint8_t repeat, uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep) {             \
        Convert<DU, SU>(#name, dst, src, repeat, dstBlk, srcBlk, dstRep, srcRep, [](SU v) { return expr; });                  \
    }
AIRFUSE_CONVERT(vconv_f162f32, float, half, float, f16, float(v))
AIRFUSE_CONVERT(vconv_bf162f32, float, bfloat16_t, float, uint16_t, Bf16ToFloat(v))
AIRFUSE_CONVERT(vconv_f322f16, half, float, f16, float, FloatToHalfRintSaturating(v))
AIRFUSE_CONVERT(vconv_f322f16r, half, float, f16, float, FloatToHalfRintSaturating(v))
AIRFUSE_CONVERT(vconv_f322bf16r, bfloat16_t, float, uint16_t, float, FloatToBf16RintSaturating(v))
// float <-> int32 (Cast CAST_FLOOR / CAST_RINT to int32, CAST_NONE back): out-of-range values
// saturate (home-made reading of Cast.md, twin/include/twin/vector.h Cast).
AIRFUSE_CONVERT(vconv_f322s32f, int32_t, float, int32_t, float, SaturateToInt32(std::floor(double(v))))
AIRFUSE_CONVERT(vconv_f322s32r, int32_t, float, int32_t, float, SaturateToInt32(std::nearbyint(double(v))))
AIRFUSE_CONVERT(vconv_s322f32, float, int32_t, float, int32_t, float(v))
