// float32 math of the activation kernels (kernels/act_kernel.h), in vector ops only. Each form avoids
// exp overflow and inf * 0 over the whole float range:
//   sigmoid(a) = exp(min(a, 0)) / (1 + exp(-|a|))   (both exps in (0, 1])
//   gelu tanh:  x / (1 + e), e = exp(-w), w = 2u = 2*sqrt(2/pi) * x * (1 + 0.044715 x^2)
//               (= x * sigmoid(w) = 0.5 x (1 + tanh u); the form ops-nn's Gelu documents): e = inf
//               and x = -0 once w < -88; its gradient Phi + x Phi' = (1 + x w' e / (1 + e)) / (1 + e),
//               w' = 2*sqrt(2/pi) (1 + 3 * 0.044715 x^2), on x clamped to +-10 (beyond, the gradient
//               is 1 or under 3e-36 in float32, and e / (1 + e) stays finite).
//   gelu erf:   x * Phi(x), Phi(x) = h + step(x) * (1 - 2h), h = 0.5 * erfc(|x| / sqrt 2), step(x) = 1 for
//               x > 0 (clamped x * 2^126: exactly 0 or 1 except for subnormal x, where 1 - 2h is 0),
//               so Phi keeps its relative accuracy in the negative tail.
//   erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z/2), P of degree 9 (Numerical Recipes, 2nd ed., §6.2
//               erfcc: fractional error < 1.2e-7 for every z >= 0).
// Consecutive dependent vector ops are separated by PipeBarrier<PIPE_V> (twin/README.md).
#pragma once
#include "kernel_operator.h"
#include "act_tiling.h"

namespace airfuse_kernel {
using namespace AscendC;

// s = sigmoid(a); t is scratch. s, t and a are distinct.
__aicore__ inline void Sigmoid(const LocalTensor<float>& s, const LocalTensor<float>& a, const LocalTensor<float>& t, uint32_t n) {
    Mins(t, a, 0.0f, n);
    Abs(s, a, n);
    PipeBarrier<PIPE_V>();
    Exp(t, t, n);
    Muls(s, s, -1.0f, n);
    PipeBarrier<PIPE_V>();
    Exp(s, s, n);
    PipeBarrier<PIPE_V>();
    Adds(s, s, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Div(s, t, s, n);
    PipeBarrier<PIPE_V>();
}

// y = silu(a) * b.
struct SiluMulMath {
    static constexpr AirfuseActBuffers kBuffers = kSiluMulBuffers;
    __aicore__ static inline void Compute(const LocalTensor<float> (&out)[1], const LocalTensor<float> (&in)[2], const LocalTensor<float> (&tmp)[2],
                                          uint32_t n, const AirfuseActTilingData&) {
        Sigmoid(tmp[0], in[0], tmp[1], n);
        Mul(tmp[0], tmp[0], in[0], n);
        PipeBarrier<PIPE_V>();
        Mul(out[0], tmp[0], in[1], n);
    }
};

// (dy, a, b) -> da = dy * b * s * (1 + a - a*s), db = dy * a * s, s = sigmoid(a).
struct SiluMulGradMath {
    static constexpr AirfuseActBuffers kBuffers = kSiluMulGradBuffers;
    __aicore__ static inline void Compute(const LocalTensor<float> (&out)[2], const LocalTensor<float> (&in)[3], const LocalTensor<float> (&tmp)[3],
                                          uint32_t n, const AirfuseActTilingData&) {
        const LocalTensor<float>& dy = in[0];
        const LocalTensor<float>& a = in[1];
        const LocalTensor<float>& b = in[2];
        Sigmoid(tmp[0], a, tmp[1], n);
        Mul(tmp[1], a, tmp[0], n);  // silu(a)
        PipeBarrier<PIPE_V>();
        Mul(out[1], dy, tmp[1], n);
        Sub(tmp[2], a, tmp[1], n);
        PipeBarrier<PIPE_V>();
        Adds(tmp[2], tmp[2], 1.0f, n);
        PipeBarrier<PIPE_V>();
        Mul(tmp[2], tmp[2], tmp[0], n);
        PipeBarrier<PIPE_V>();
        Mul(tmp[2], tmp[2], dy, n);
        PipeBarrier<PIPE_V>();
        Mul(out[0], tmp[2], b, n);
    }
};

inline constexpr float kGeluTanhScale = 1.5957691216057308f;  // 2 * sqrt(2/pi): 0.5 * (1 + tanh(u)) = sigmoid(2u)
inline constexpr float kGeluCubic = 0.044715f;

inline constexpr float kGeluGradClamp = 10.0f;

// q = 1 + e, e = exp(-w) (file comment; e is scratch): -w = x * (-kGeluTanhScale - kGeluTanhScale kGeluCubic x^2) is
// ±inf once x^2 overflows, where x / q is exact.
__aicore__ inline void GeluTanhDenominator(const LocalTensor<float>& q, const LocalTensor<float>& e, const LocalTensor<float>& x, uint32_t n) {
    Mul(e, x, x, n);
    PipeBarrier<PIPE_V>();
    Muls(e, e, -kGeluTanhScale * kGeluCubic, n);
    PipeBarrier<PIPE_V>();
    Adds(e, e, -kGeluTanhScale, n);
    PipeBarrier<PIPE_V>();
    Mul(e, e, x, n);
    PipeBarrier<PIPE_V>();
    Exp(e, e, n);
    PipeBarrier<PIPE_V>();
    Adds(q, e, 1.0f, n);
    PipeBarrier<PIPE_V>();
}

// Phi(x) of the erf form into p; t, u scratch.
__aicore__ inline void NormalCdf(const LocalTensor<float>& p, const LocalTensor<float>& x, const LocalTensor<float>& t, const LocalTensor<float>& u,
                                 uint32_t n) {
    // Numerical Recipes' erfcc coefficients, highest degree first; P(t) includes the constant term.
    constexpr float kP[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                              -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
    Abs(t, x, n);
    Duplicate(u, 1.0f, int32_t(n));
    PipeBarrier<PIPE_V>();
    Muls(t, t, 0.35355339059327373f, n);  // z/2 = |x| / (2 sqrt 2)
    PipeBarrier<PIPE_V>();
    Adds(t, t, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Div(t, u, t, n);  // t = 1 / (1 + z/2)
    PipeBarrier<PIPE_V>();
    Muls(p, t, kP[0], n);  // Horner: P = (...(kP[0] t + kP[1]) t + ...) t + kP[9]
    for (uint32_t k = 1; k < 9; ++k) {
        PipeBarrier<PIPE_V>();
        Adds(p, p, kP[k], n);
        PipeBarrier<PIPE_V>();
        Mul(p, p, t, n);
    }
    PipeBarrier<PIPE_V>();
    Adds(p, p, kP[9], n);
    Mul(u, x, x, n);
    PipeBarrier<PIPE_V>();
    Muls(u, u, -0.5f, n);  // -z^2
    PipeBarrier<PIPE_V>();
    Add(p, p, u, n);
    PipeBarrier<PIPE_V>();
    Exp(p, p, n);
    PipeBarrier<PIPE_V>();
    Mul(p, p, t, n);  // erfc(z)
    Muls(u, x, 8.507059173023462e37f, n);  // x * 2^126
    PipeBarrier<PIPE_V>();
    Muls(p, p, 0.5f, n);  // h
    Maxs(u, u, 0.0f, n);
    PipeBarrier<PIPE_V>();
    Mins(u, u, 1.0f, n);  // step(x)
    Muls(t, p, -2.0f, n);
    PipeBarrier<PIPE_V>();
    Adds(t, t, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Mul(t, t, u, n);
    PipeBarrier<PIPE_V>();
    Add(p, p, t, n);
    PipeBarrier<PIPE_V>();
}

// y = x * Phi(x).
struct GeluMath {
    static constexpr AirfuseActBuffers kBuffers = kGeluBuffers;
    __aicore__ static inline void Compute(const LocalTensor<float> (&out)[1], const LocalTensor<float> (&in)[1], const LocalTensor<float> (&tmp)[3],
                                          uint32_t n, const AirfuseActTilingData& t) {
        if (t.approximate == 0) {
            GeluTanhDenominator(tmp[0], tmp[1], in[0], n);
            Div(out[0], in[0], tmp[0], n);
            return;
        }
        NormalCdf(tmp[0], in[0], tmp[1], tmp[2], n);
        Mul(out[0], tmp[0], in[0], n);
    }
};

inline constexpr float kInvSqrt2Pi = 0.3989422804014327f;

// (dy, x) -> dx = dy * (Phi(x) + x * Phi'(x)).
struct GeluGradMath {
    static constexpr AirfuseActBuffers kBuffers = kGeluGradBuffers;
    __aicore__ static inline void Compute(const LocalTensor<float> (&out)[1], const LocalTensor<float> (&in)[2], const LocalTensor<float> (&tmp)[3],
                                          uint32_t n, const AirfuseActTilingData& t) {
        const LocalTensor<float>& dy = in[0];
        const LocalTensor<float>& x = in[1];
        if (t.approximate == 0) {
            // dy (1 + x w' e / q) / q on x clamped (file comment; x itself is the clamped copy), as
            // r + (x w' m) r with r = dy / q and m = e / q, the last step one FusedMulAdd; x w' is
            // 3w - 2 S x (S = kGeluTanhScale), one Axpy on -w, beside the Exp that also reads -w.
            const LocalTensor<float>& nw = tmp[0];  // x^2, then -w, then q
            const LocalTensor<float>& xw = tmp[1];  // -2 S x, then x w'
            const LocalTensor<float>& e = tmp[2];   // e, then m (may be out[0]: written last)
            Maxs(x, x, -kGeluGradClamp, n);
            PipeBarrier<PIPE_V>();
            Mins(x, x, kGeluGradClamp, n);
            PipeBarrier<PIPE_V>();
            Mul(nw, x, x, n);
            Muls(xw, x, -2.0f * kGeluTanhScale, n);
            PipeBarrier<PIPE_V>();
            Muls(nw, nw, -kGeluTanhScale * kGeluCubic, n);
            PipeBarrier<PIPE_V>();
            Adds(nw, nw, -kGeluTanhScale, n);
            PipeBarrier<PIPE_V>();
            Mul(nw, nw, x, n);  // -w
            PipeBarrier<PIPE_V>();
            Exp(e, nw, n);
            Axpy(xw, nw, -3.0f, n);  // x w' = S x + 3 S 0.044715 x^3 = 3w - 2 S x
            PipeBarrier<PIPE_V>();
            const LocalTensor<float>& q = nw;
            Adds(q, e, 1.0f, n);
            PipeBarrier<PIPE_V>();
            Div(dy, dy, q, n);  // r
            Div(e, e, q, n);    // m = 1 - sigmoid(w)
            PipeBarrier<PIPE_V>();
            Mul(out[0], xw, e, n);
            PipeBarrier<PIPE_V>();
            FusedMulAdd(out[0], dy, dy, n);  // (x w' m) r + r
            return;
        }
        NormalCdf(tmp[0], x, tmp[1], tmp[2], n);
        Mul(tmp[1], x, x, n);
        PipeBarrier<PIPE_V>();
        Muls(tmp[1], tmp[1], -0.5f, n);
        PipeBarrier<PIPE_V>();
        Exp(tmp[1], tmp[1], n);
        PipeBarrier<PIPE_V>();
        Muls(tmp[1], tmp[1], kInvSqrt2Pi, n);
        PipeBarrier<PIPE_V>();
        Mul(tmp[1], tmp[1], x, n);
        PipeBarrier<PIPE_V>();
        Add(tmp[0], tmp[0], tmp[1], n);
        PipeBarrier<PIPE_V>();
        Mul(out[0], tmp[0], dy, n);
    }
};

}  // namespace airfuse_kernel
