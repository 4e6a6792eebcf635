// A piece of CANN's CPU-debug runtime the headers link against and whose implementation is not
// public (libtikicpulib): the scalar bfloat16 conversions asc-tools' kernel_bf16.h declares (outside
// namespace AscendC, so one definition serves every chip; src/vendor_namespace.cpp has the rest).
#include <cmath>
#include <cstring>
#include "kernel_bf16.h"

namespace bfloat16 {

// Round to nearest even; a NaN stays a quiet NaN.
uint16_t Bf16T::FloatToBf16(const float& f) const {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

Bf16T& Bf16T::operator=(const Bf16T& other) {
    val = other.val;
    return *this;
}

Bf16T& Bf16T::operator=(const float& f) {
    val = FloatToBf16(f);
    return *this;
}

float Bf16T::ToFloat() const {
    uint32_t u = uint32_t(val) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

Bf16T::operator float() const { return ToFloat(); }

}  // namespace bfloat16
