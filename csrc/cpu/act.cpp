// Fused CPU kernels of the activations: silu_mul, swiglu, gelu and their backwards (math:
// airfuse/ops/silu_mul.py, swiglu.py, gelu.py). silu_mul and swiglu keep its operation order, with
// at::vec's inline exp_u20 for the exp (below), but in bfloat16 and float16 on AVX512, which take
// a * sigmoid(a) * b with an exp and a refined reciprocal of their own (kSiluByExp2): over every
// finite a (b, dy random) their results, forward and backward, are the division's but at 4
// bfloat16 values of a (-87.5, -88, -88.5, where |silu(a) * b| < 1.6e-36 becomes 0, and one 1 ulp
// off) and 3 float16 ones (1 ulp); in every variant 99.96 % (bfloat16) and 99.995 % (float16) of
// them are the float64 value as torch rounds it, the rest 1 ulp off, but for results below 1e-35
// (a < -87) (tests/test_silu_mul.py). gelu's tanh form is rearranged for speed (one exp and
// one reciprocal; in float on AVX2 and AVX512 an exp of its own and a refined reciprocal estimate,
// TanhGate). Its float32 error against float64, measured in every variant on [-20, 20] (DEFAULT's
// exact division alike): <= 1.1e-6 relative for x >= -3, <= 4e-6 for x >= -6 (the largest near
// -5.9), <= 2e-6 absolute everywhere. Left of -6, where |gelu(x)| < 1e-10, it drifts up to ~1.3e-5
// relative, then flushes to 0 (AVX2/AVX512 at -10, DEFAULT by -10.7). bfloat16 keeps 8 significant
// bits, and AVX512 computes it with less accuracy (kOutputBits): over every finite bfloat16 x,
// against float64 (the sigmoid form of airfuse/ops/gelu.py) rounded once, 99.95 % of forward and
// backward results (dy random) are that value and the rest 1 ulp off, except the flush left of
// -10 and, backward, next to the zero of GELU's slope at x = -0.75 (3 ulps, 5e-6 absolute). float16
// gets float32's math: 99.99 % rounded as float64, 1 ulp at most. AVX2 looks the tanh form up in
// tables of the float64 math in both 16-bit dtypes (kGeluTables): every forward result is the
// float64 value rounded once, every backward one dy * slope rounded once from float (100 % of
// both in that sweep; float16's forward 99.992 % against torch's float64-to-float16 conversion,
// which rounds through float32: the rest, 5 values, 1 ulp off it and nearer the float64 value),
// with no flush. (tests/test_gelu.py holds every variant to these bounds.)
// All elementwise: one read of each input, one write of each output.
#include <cmath>
#include <cstring>
#include <memory>

#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

// Every piece of math here is forced inline into the vector loop: called once per vector, a call
// would cost as much as the math (and pass its vectors through memory).
//
// exp(-a) for silu and sigmoid. at::vec's exp() is Sleef's, a call per vector that spills every live
// vector around it and was most of silu_mul's arithmetic (AVX512, float, in L1: 6.1 ns a vector with
// it, 5.3 with exp_u20); exp_u20 is inlined. silu_mul in float32 stays within 3.1e-7 relative of
// float64 on [-30, 30] in every variant (Sleef's exp: 1.4e-7), and still gives -0 below -88.7 (exp
// beyond float is inf), inf at inf, NaN at -inf and NaN. float64, the reference dtype, keeps Sleef's
// (its exp_u20 is exp()).
template <class M>
C10_ALWAYS_INLINE Vec<M> exp_of_minus(const Vec<M>& a) {
  return a.neg().exp_u20();
}

// x (contiguous) seen as [outer, 2, half]: the gate and up halves along dim are each `half` apart.
struct Halves {
  int64_t outer, half;
};

Halves halves(const at::Tensor& x, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, x.dim());
  int64_t outer = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= x.size(i);
  return {outer, x.numel() / outer / 2};
}

// GELU's constants, rounded to M as the Python math's scalars are when they meet a tensor.
// Computed as airfuse/ops/gelu.py computes them, in double.
const double kTanhScale = 2 * std::sqrt(2 / M_PI);  // the 2 turns 0.5 * (1 + tanh(u)) into sigmoid(2u)
constexpr double kCubic = 0.044715;
const double kSqrtHalf = std::sqrt(0.5);
const double kInvSqrt2Pi = 1 / std::sqrt(2 * M_PI);

// kTanhScale * (x + kCubic * x^3) as x * (kTanhScale + kTanhScale * kCubic * x^2): three
// operations, one a fused multiply-add where the vectors have one (within an ulp or two of the
// unfused form). Times scale, folded into the two constants.
template <class M>
C10_ALWAYS_INLINE Vec<M> tanh_argument(const Vec<M>& x, double scale = 1) {
  return x * at::vec::fmadd(x * x, Vec<M>(M(scale * kTanhScale * kCubic)), Vec<M>(M(scale * kTanhScale)));
}

// The tanh argument's derivative, kTanhScale * (1 + 3 kCubic x^2), one fused multiply-add: the
// factor of GELU's density in its slope (gelu_slope, GeluGrad).
template <class M>
C10_ALWAYS_INLINE Vec<M> tanh_argument_slope(const Vec<M>& x) {
  return at::vec::fmadd(x * x, Vec<M>(M(kTanhScale * 3 * kCubic)), Vec<M>(M(kTanhScale)));
}

// w >= 0 ? yes : no.
template <class M>
C10_ALWAYS_INLINE Vec<M> where_non_negative(const Vec<M>& w, const Vec<M>& yes, const Vec<M>& no) {
  return Vec<M>::blendv(no, yes, w >= Vec<M>(M(0)));
}

// sigmoid(w) and sigmoid(-w) from one exp and one division: with e = exp(-|w|) in [0, 1] and
// q = 1 / (1 + e), they are q and e * q (in the order w's sign says). Nothing overflows, whatever w.
// (DEFAULT's, and float64's, the reference dtype: AVX2 and AVX512 compute float with TanhGate.)
template <class M>
struct SigmoidPair {
  Vec<M> of_w, of_minus_w;

  C10_ALWAYS_INLINE explicit SigmoidPair(const Vec<M>& w) {
    const Vec<M> e = w.abs().neg().exp_u20();
    const Vec<M> q = Vec<M>(M(1)) / (Vec<M>(M(1)) + e), eq = e * q;
    of_w = where_non_negative(w, q, eq);
    of_minus_w = where_non_negative(w, eq, q);
  }
};

// The relative accuracy, in bits, that the float math of a kernel storing T needs: bfloat16 keeps
// 8 significant bits, and there a cheaper tanh form (TanhGate: a degree-3 exp, no Newton step, no
// mask; 12 instructions a vector forward, against 17) still rounds all but about 1 in 2000 results
// as the exact value would (header). float16 (11 bits) gets float32's math.
template <class T>
constexpr int kOutputBits = std::is_same_v<T, at::BFloat16> ? 8 : std::is_same_v<T, at::Half> ? 11 : 24;

// 2^f for f in [0, 1], for exp2_of (below): c[0] f^n + c[1] f^(n-1) + ... + c[n].
constexpr std::array kExp2Degree3{0x1.4095eap-4f, 0x1.cf7a66p-3f, 0x1.640eaap-1f, 1.0f};
constexpr std::array kExp2Degree5{0x1.eca6f0p-10f, 0x1.269deep-7f, 0x1.c94440p-5f, 0x1.ebd8a0p-3f, 0x1.62e4c8p-1f, 1.0f};

#if defined(CPU_CAPABILITY_AVX512)
// c[0] f^n + c[1] f^(n-1) + ... + c[n], by Horner's rule.
template <size_t N>
C10_ALWAYS_INLINE __m512 polynomial(const __m512& f, const std::array<float, N>& c) {
  __m512 p = _mm512_set1_ps(c[0]);
  c10::ForcedUnroll<N - 1>{}([&](auto i) C10_ALWAYS_INLINE_ATTRIBUTE { p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c[i + 1])); });
  return p;
}

// 2^s for s >= -126, 0 below: 2^f * 2^floor(s), f = s - floor(s) in [0, 1] from vreduceps, 2^f a
// polynomial, and vscalefps multiplying by 2^floor(s) exactly, overflowing to inf from 128 as a
// multiply would; NaN stays NaN. 6 or 8 instructions where at::vec's exp_u20 takes 19 (its range
// clamps, conversions and exponent arithmetic). No denormal results: each one made and each one
// met costs a microcode assist (vscalefps's denormals made gelu 11-26x slower where x was 10.3).
// The polynomials are minimax in relative error (1.0e-4 at degree 3, for kBits <= 8; 1.5e-7 at
// degree 5, evaluated in float) among those exact at f = 0 and 1 (a tiny negative s gives f = 1):
// so 2^s is exactly 1 for |s| < 2^-25, GELU's gate exactly 1/2 for tiny x, and gelu(x) = x/2
// rounds its ties (x denormal) to even as exact math would.
template <int kBits>
C10_ALWAYS_INLINE __m512 exp2_of(const __m512& s) {
  const __m512 f = _mm512_reduce_ps(s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p;
  if constexpr (kBits <= 8) {
    p = polynomial(f, kExp2Degree3);
  } else {
    p = polynomial(f, kExp2Degree5);
  }
  // (Not less than -126, or NaN.)
  return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(s, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ), p, s);
}

// 1 / (1 + e) in float on AVX512 for e = 2^s from exp2_of, the sigmoid of -s ln(2): the gate of
// GELU's tanh form (TanhGate) and SiLU's sigmoid in 16-bit dtypes (SiluMul); NaN stays NaN. rcp14
// is within 2^-14; for kBits > 8 a Newton step refines it, and q is 0 where 1 + e >= 2^126 (so q
// stays normal, see exp2_of). For kBits <= 8, no test (with its compare into a mask register and
// masked rcp14, gelu bfloat16 took 1.14x the time, its backward 1.08x): e is inf, and q 0, from s =
// 128, and s in [126, 128) would give a denormal q, which GELU's bfloat16 x, the only kBits <= 8
// caller, never give (tanh_argument over every bfloat16 is at most 125.97 below 126, at least
// 128.05 from there).
template <int kBits>
C10_ALWAYS_INLINE __m512 one_over_one_plus(const __m512& e) {
  const __m512 one = _mm512_set1_ps(1.0f), d = _mm512_add_ps(one, e);
  if constexpr (kBits <= 8) {
    return _mm512_rcp14_ps(d);
  } else {
    // (Not at least 2^126, or NaN.)
    const __mmask16 normal = _mm512_cmp_ps_mask(d, _mm512_set1_ps(0x1p126f), _CMP_NGE_UQ);
    const __m512 q = _mm512_maskz_rcp14_ps(normal, d);
    return _mm512_maskz_fmadd_ps(normal, q, _mm512_fnmadd_ps(d, q, one), q);
  }
}

// The tanh form's exponential in float on AVX512, e = exp(-w), w = 2u as tanh_argument gives it,
// with -log2(e) folded into its constants so that exp2_of takes it as is.
template <int kBits>
C10_ALWAYS_INLINE __m512 tanh_exp(const Vec<float>& x) {
  return exp2_of<kBits>(tanh_argument(x, -M_LOG2E));
}

// The tanh form's gate in float on AVX512 from its exponential e (tanh_exp): q = sigmoid(w) =
// 1 / (1 + e), 0 for x < -10 (so is float32's gelu(x)).
template <int kBits>
struct TanhGate {
  __m512 e, q;

  C10_ALWAYS_INLINE explicit TanhGate(const __m512& exp) : e(exp), q(one_over_one_plus<kBits>(exp)) {}
};
#elif defined(CPU_CAPABILITY_AVX2)
// The tanh form's gate in float on AVX2 (float32 only: its 16-bit dtypes use tables, kGeluTables),
// as AVX512's TanhGate<24>: the same degree-5 polynomial for 2^f, the same e = 0 where s < -126
// and q = 0 where 1 + e >= 2^126. AVX2 has neither vreduceps nor vscalefps: s is clamped to at
// most 127 (q is 0 well before), so that 2^floor(s) is a normal float built in its exponent field
// and e = 2^f * 2^floor(s) exactly as vscalefps gives it; rcpps (within 1.5 * 2^-12) is refined
// by a Newton step. 23 instructions a vector forward (the loop's arithmetic in the object code),
// against 34 with at::vec's exp_u20 and SigmoidPair's sign selects: gelu float32 at 2048 x 4096
// took 0.63x the time, its backward 0.75x (1 thread, in one process). Its error against float64
// on [-20, 20] is within the header's bounds (measured: 8.3e-7 relative for x >= -3, 3.3e-6 for
// x >= -6, 1.9e-6 absolute, 9.8e-6 relative on [-10, -6]; 0 from x = -10.001). NaN stays NaN
// (vminps returns its second operand where either is NaN; NaN's exponent field stays all ones).
struct TanhGate {
  Vec<float> e, q;

  C10_ALWAYS_INLINE explicit TanhGate(const Vec<float>& x) {
    const __m256 s = _mm256_min_ps(_mm256_set1_ps(127.0f), tanh_argument(x, -M_LOG2E));
    const __m256 floor = _mm256_round_ps(s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m256 f = _mm256_sub_ps(s, floor);
    __m256 p = _mm256_set1_ps(kExp2Degree5[0]);
    c10::ForcedUnroll<kExp2Degree5.size() - 1>{}(
        [&](auto i) C10_ALWAYS_INLINE_ATTRIBUTE { p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2Degree5[i + 1])); });
    const __m256i scaled = _mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_cvtps_epi32(floor), 23));
    e = _mm256_andnot_ps(_mm256_cmp_ps(s, _mm256_set1_ps(-126.0f), _CMP_LT_OQ), _mm256_castsi256_ps(scaled));
    const __m256 one = _mm256_set1_ps(1.0f), d = _mm256_add_ps(one, e), r = _mm256_rcp_ps(d);
    q = _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(0x1p126f), _CMP_GE_OQ), _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, one), r));
  }
};
#endif

// Whether SiluMul and SiluMulGrad compute in two passes (vec_io.h's HasTwoPasses), with an
// exponential of their own and no division: in float (M) for the 16-bit dtypes (kBits < 24) on
// AVX512. exp_u20 and the division (vdivps: one every 2.5 cycles on Zen 5) were most of their time:
// in bfloat16, in one pass, with vcvtne2ps2bf16's stores (vec_io.h), silu_mul took 0.68-0.72x the
// time it took before either, its backward 0.71-0.74x, against 0.88-0.89x and 0.87-0.95x with those
// stores alone (1 thread, 128 to 8192 tokens x 11008, the stores alone at 128 and 2048, old and new
// in one process; the same bits on randn inputs). Not float32: there exp2_of's argument, -a log2(e)
// rounded to float, costs up to |a| 2^-24 relative (2e-6 at 30), beyond the header's 3.1e-7. The
// sigmoid is 0 where 1 + exp(-a) >= 2^126, from a = -87.3 (so it stays normal), as the division's
// quotient is from -88.7.
template <int kBits, class M>
constexpr bool kSiluByExp2 =
#if defined(CPU_CAPABILITY_AVX512)
    kBits < 24 && std::is_same_v<M, float>;
#else
    false;
#endif

#if defined(CPU_CAPABILITY_AVX512)
// exp(-a) as exp2_of<24> computes it: the first pass of SiluMul and SiluMulGrad.
C10_ALWAYS_INLINE __m512 silu_exp(const Vec<float>& a) {
  return exp2_of<24>(a * Vec<float>(-M_LOG2E));
}
#endif

// y = silu(a) * b, silu(a) = a / (1 + exp(-a)): one division, as ATen's silu and inductor's
// kernel for silu(a) * b compute it (a * sigmoid(a) would cost a multiply more). kSiluByExp2:
// a * sigmoid(a) * b, sigmoid(a) = 1 / (1 + exp(-a)) by one_over_one_plus<24>.
template <int kBits>
struct SiluMul : OneOrTwoPasses<SiluMul<kBits>> {
  template <class M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> one(const std::array<Vec<M>, 2>& in) const {
    const auto& [a, b] = in;
    return {a / (Vec<M>(M(1)) + exp_of_minus(a)) * b};
  }
#if defined(CPU_CAPABILITY_AVX512)
  template <class M>
    requires kSiluByExp2<kBits, M>
  C10_ALWAYS_INLINE Vec<M> first(const std::array<Vec<M>, 2>& in) const {
    return silu_exp(in[0]);
  }
  template <class M>
    requires kSiluByExp2<kBits, M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> second(const std::array<Vec<M>, 2>& in, const Vec<M>& e) const {
    const auto& [a, b] = in;
    return {a * Vec<M>(one_over_one_plus<24>(e)) * b};
  }
#endif
};

// (da, db) of y = silu(a) * b, with silu'(a) = s + a * s * (1 - s) = s * (1 + a * (1 - s)):
// dy * s is shared by both.
template <int kBits>
struct SiluMulGrad : OneOrTwoPasses<SiluMulGrad<kBits>> {
  template <class M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 2> one(const std::array<Vec<M>, 3>& in) const {
    return from_sigmoid(in, Vec<M>(M(1)) / (Vec<M>(M(1)) + exp_of_minus(in[1])));
  }
#if defined(CPU_CAPABILITY_AVX512)
  template <class M>
    requires kSiluByExp2<kBits, M>
  C10_ALWAYS_INLINE Vec<M> first(const std::array<Vec<M>, 3>& in) const {
    return silu_exp(in[1]);
  }
  template <class M>
    requires kSiluByExp2<kBits, M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 2> second(const std::array<Vec<M>, 3>& in, const Vec<M>& e) const {
    return from_sigmoid(in, Vec<M>(one_over_one_plus<24>(e)));
  }
#endif

  // (da, db) from s = sigmoid(a).
  template <class M>
  C10_ALWAYS_INLINE static std::array<Vec<M>, 2> from_sigmoid(const std::array<Vec<M>, 3>& in, const Vec<M>& s) {
    const auto& [dy, a, b] = in;
    const Vec<M> one(M(1)), dy_s = dy * s;
    return {dy_s * b * (one + a * (one - s)), dy_s * a};
  }
};

// Phi(x), the gate GELU multiplies x by.
template <bool kTanh, class M>
C10_ALWAYS_INLINE Vec<M> cdf(const Vec<M>& x) {
#if defined(CPU_CAPABILITY_AVX2)
  if constexpr (kTanh && std::is_same_v<M, float>) return TanhGate(x).q;
#endif
  if constexpr (kTanh) return SigmoidPair<M>(tanh_argument(x)).of_w;
  return Vec<M>(M(0.5)) * (x.neg() * Vec<M>(M(kSqrtHalf))).erfc();
}

// Phi(x) + x * Phi'(x), GELU's derivative. Tanh form: the density is sigmoid(w) * sigmoid(-w), so
// one exp serves both terms; 0 where the density underflows (x * slope could be inf there).
template <bool kTanh, class M>
C10_ALWAYS_INLINE Vec<M> gelu_slope(const Vec<M>& x) {
  if constexpr (kTanh) {
    const Vec<M> slope = tanh_argument_slope(x);
#if defined(CPU_CAPABILITY_AVX2)
    if constexpr (std::is_same_v<M, float>) {
      // As below, sigmoid(-w) being e * q.
      const TanhGate g(x);
      const Vec<M> density = g.q * (g.e * g.q);
      return g.q + Vec<M>::blendv(x * slope * density, Vec<M>(M(0)), density == Vec<M>(M(0)));
    }
#endif
    const SigmoidPair<M> s(tanh_argument(x));
    const Vec<M> density = s.of_w * s.of_minus_w;
    return s.of_w + Vec<M>::blendv(x * slope * density, Vec<M>(M(0)), density == Vec<M>(M(0)));
  } else {
    return cdf<false>(x) + x * (Vec<M>(M(-0.5)) * x * x).exp() * Vec<M>(M(kInvSqrt2Pi));
  }
}

// Whether Gelu and GeluGrad compute in two passes (vec_io.h's HasTwoPasses): the tanh form in
// float on AVX512, its exponential (tanh_exp) first.
template <bool kTanh, class M>
constexpr bool kGeluInTwoPasses =
#if defined(CPU_CAPABILITY_AVX512)
    kTanh && std::is_same_v<M, float>;
#else
    false;
#endif

// y = x * Phi(x), elementwise()'s functor for gelu.
template <bool kTanh, int kBits>
struct Gelu : OneOrTwoPasses<Gelu<kTanh, kBits>> {
  template <class M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> one(const std::array<Vec<M>, 1>& in) const {
    return {in[0] * cdf<kTanh>(in[0])};
  }
#if defined(CPU_CAPABILITY_AVX512)
  template <class M>
    requires kGeluInTwoPasses<kTanh, M>
  C10_ALWAYS_INLINE Vec<M> first(const std::array<Vec<M>, 1>& in) const {
    return tanh_exp<kBits>(in[0]);
  }
  template <class M>
    requires kGeluInTwoPasses<kTanh, M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> second(const std::array<Vec<M>, 1>& in, const Vec<M>& e) const {
    return {in[0] * Vec<M>(TanhGate<kBits>(e).q)};
  }
#endif
};

// dx = dy * GELU's slope at x, elementwise()'s functor for gelu_backward (inputs dy, x).
template <bool kTanh, int kBits>
struct GeluGrad : OneOrTwoPasses<GeluGrad<kTanh, kBits>> {
  template <class M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> one(const std::array<Vec<M>, 2>& in) const {
    return {in[0] * gelu_slope<kTanh>(in[1])};
  }
#if defined(CPU_CAPABILITY_AVX512)
  template <class M>
    requires kGeluInTwoPasses<kTanh, M>
  C10_ALWAYS_INLINE Vec<M> first(const std::array<Vec<M>, 2>& in) const {
    return tanh_exp<kBits>(in[1]);
  }
  // As gelu_slope's: sigmoid(-w) = e * q, so the density is q * e * q. The term is 0 where the
  // density is 0 or NaN, which it is where e is inf (q is 0 there).
  template <class M>
    requires kGeluInTwoPasses<kTanh, M>
  C10_ALWAYS_INLINE std::array<Vec<M>, 1> second(const std::array<Vec<M>, 2>& in, const Vec<M>& e) const {
    const auto& [dy, x] = in;
    const Vec<M> slope = tanh_argument_slope(x);
    const TanhGate<kBits> g(e);
    const __m512 density = _mm512_mul_ps(g.q, _mm512_mul_ps(g.e, g.q));
    const __mmask16 live = _mm512_cmp_ps_mask(density, _mm512_setzero_ps(), _CMP_NEQ_OQ);
    return {dy * Vec<M>(_mm512_add_ps(g.q, _mm512_maskz_mul_ps(live, x * slope, density)))};
  }
#endif
};

// GELU's tanh form in bfloat16 and float16 on AVX2, by table: either dtype has 65,536 values, so
// each kernel looks up, by the bits of x, what the float64 math (airfuse/ops/gelu.py's sigmoid
// form) gives for that x: the forward its result rounded once, the backward its slope in float
// (dx = dy * slope, rounded once from float). On AVX2 the math is compute-bound, 8 lanes wide, at
// every size: on an AMD EPYC (Zen 3, AVX2 only, 1 thread, 2048 tokens x 4096, process CPU time,
// medians of 11 rounds interleaved in one process) gelu took 9.8 ms in bfloat16 (7.6 in float16)
// against a clone's 1.85, its backward 12.7 (10.3); by table 3.3 (3.6) and 5.4 (5.8). The tables
// (128 KB + 256 KB per dtype; randn-like activations touch a few KB of them) are built once, on
// first use. AVX512 and DEFAULT keep the vector math (the tables were not measured there).
#if defined(CPU_CAPABILITY_AVX2)
template <class T>
constexpr bool kGeluTables = std::is_same_v<T, at::BFloat16> || std::is_same_v<T, at::Half>;
#else
template <class T>
constexpr bool kGeluTables = false;
#endif

// The value of T nearest to v (ties to even): float's rounding first lands on it or a neighbour.
template <class T>
T rounded_once(double v) {
  T best = static_cast<T>(static_cast<float>(v));
  if (!std::isfinite(static_cast<float>(best))) return best;
  const uint16_t bits = best.x;
  for (const int step : {-1, 1}) {
    const T other(static_cast<uint16_t>(bits + step), T::from_bits());
    if (!std::isfinite(static_cast<float>(other))) continue;
    const double d = std::abs(v - static_cast<double>(static_cast<float>(other)));
    const double d_best = std::abs(v - static_cast<double>(static_cast<float>(best)));
    if (d < d_best || (d == d_best && other.x % 2 == 0)) best = other;
  }
  return best;
}

// The tables of T, by the bits of x: y[bits], the bits of gelu(x); slope[bits], GELU's slope at x.
// The float64 math as airfuse/ops/gelu.py writes it (_tanh_argument, torch.sigmoid's 1 / (1 + exp(-w)),
// _x_times_density's term 0 where the density is).
template <class T>
struct GeluTables {
  std::array<uint16_t, 1 << 16> y;
  std::array<float, 1 << 16> slope;

  GeluTables() {
    const auto sigmoid = [](double w) { return 1 / (1 + std::exp(-w)); };
    for (uint32_t bits = 0; bits < y.size(); ++bits) {
      const double x = static_cast<float>(T(static_cast<uint16_t>(bits), T::from_bits()));
      const double w = kTanhScale * x * (1 + kCubic * x * x);
      const double gate = sigmoid(w), density = gate * sigmoid(-w);
      const double term = density == 0 ? 0 : x * (kTanhScale * (1 + 3 * kCubic * x * x)) * density;
      y[bits] = rounded_once<T>(x * gate).x;
      slope[bits] = static_cast<float>(gate + term);
    }
  }
};

template <class T>
const GeluTables<T>& gelu_tables() {
  static const auto tables = std::make_unique<const GeluTables<T>>();
  return *tables;
}

// y = gelu(x) (tanh form) by table, 4 elements a step: one 64-bit load and store, four lookups.
template <class T>
void gelu_by_table(const T* x, T* y, int64_t n) {
  const uint16_t* table = gelu_tables<T>().y.data();
  const auto* in = reinterpret_cast<const uint16_t*>(x);
  auto* out = reinterpret_cast<uint16_t*>(y);
  at::parallel_for(0, n, at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      uint64_t v;
      std::memcpy(&v, in + i, sizeof(v));
      const uint64_t r = uint64_t(table[v & 0xffff]) | uint64_t(table[(v >> 16) & 0xffff]) << 16 |
                         uint64_t(table[(v >> 32) & 0xffff]) << 32 | uint64_t(table[v >> 48]) << 48;
      std::memcpy(out + i, &r, sizeof(r));
    }
    for (; i < end; ++i) out[i] = table[in[i]];
  });
}

#if defined(CPU_CAPABILITY_AVX2)
// GELU's slope at the lanes of x (each a value of T, converted exactly to float), from T's table.
template <class T>
C10_ALWAYS_INLINE Vec<float> slope_by_table(const Vec<float>& x, const float* table) {
  __m256i bits;
  if constexpr (std::is_same_v<T, at::BFloat16>) {
    bits = _mm256_srli_epi32(_mm256_castps_si256(x), 16);
  } else {
    bits = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  return Vec<float>(_mm256_i32gather_ps(table, bits, 4));
}
#endif

// f(std::true_type{}) for the tanh form, f(std::false_type{}) for the erf one: the form is a
// compile-time choice inside the vector loop.
template <class F>
auto with_gelu_form(c10::string_view approximate, const F& f) {
  return approximate == "tanh" ? f(std::true_type{}) : f(std::false_type{});
}

// The activations stream the stores of their large calls (vec_io.h) in float32 only. In bfloat16
// and float16 their math takes about as long as their memory traffic, and streaming made them
// slower: at 2048 tokens x 4096, silu_mul 1.10x (1.3-2.2x under heavier load), its backward 1.21x,
// gelu's backward 1.10x, swiglu 1.05x, against 0.81-0.95x in float32 (interleaved in one process).
// Since elementwise() prefetches and gelu's math got cheaper, about even at 8192 tokens: gelu and
// silu_mul forward 1.00-1.07x, backward 0.91-0.96x (bfloat16 and float16, one process, once).
Streaming streaming_of(const at::Tensor& x) {
  return x.scalar_type() == at::kFloat ? Streaming::kLargeCalls : Streaming::kNever;
}

}  // namespace

at::Tensor silu_mul(const at::Tensor& a_in, const at::Tensor& b_in) {
  return binary_elementwise(a_in, b_in, streaming_of(a_in), [](auto t) { return SiluMul<kOutputBits<decltype(t)>>{}; });
}

std::tuple<at::Tensor, at::Tensor> silu_mul_backward(const at::Tensor& dy_in, const at::Tensor& a_in, const at::Tensor& b_in) {
  const at::Tensor dy = dy_in.contiguous(), a = a_in.contiguous(), b = b_in.contiguous();
  at::Tensor da = at::empty(a.sizes(), a.options()), db = at::empty(b.sizes(), b.options());
  with_dtype(a.scalar_type(), [&](auto t) {
    using T = decltype(t);
    elementwise<T, 3, 2>(1, a.numel(), {dy.const_data_ptr<T>(), a.const_data_ptr<T>(), b.const_data_ptr<T>()}, {0, 0, 0},
                         {da.mutable_data_ptr<T>(), db.mutable_data_ptr<T>()}, {0, 0}, streaming_of(a), SiluMulGrad<kOutputBits<T>>{});
  });
  return std::make_tuple(da, db);
}

at::Tensor swiglu(const at::Tensor& x_in, int64_t dim) {
  const at::Tensor x = x_in.contiguous();
  const auto [outer, half] = halves(x, dim);
  std::vector<int64_t> shape = x.sizes().vec();
  shape[c10::maybe_wrap_dim(dim, x.dim())] /= 2;
  at::Tensor y = at::empty(shape, x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    const T* xp = x.const_data_ptr<T>();
    elementwise<T, 2, 1>(outer, half, {xp, xp + half}, {2 * half, 2 * half}, {y.mutable_data_ptr<T>()}, {half},
                         streaming_of(x), SiluMul<kOutputBits<T>>{});
  });
  return y;
}

at::Tensor swiglu_backward(const at::Tensor& dy_in, const at::Tensor& x_in, int64_t dim) {
  const at::Tensor dy = dy_in.contiguous(), x = x_in.contiguous();
  const auto [outer, half] = halves(x, dim);
  at::Tensor dx = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    const T* xp = x.const_data_ptr<T>();
    T* dxp = dx.mutable_data_ptr<T>();
    elementwise<T, 3, 2>(outer, half, {dy.const_data_ptr<T>(), xp, xp + half}, {half, 2 * half, 2 * half}, {dxp, dxp + half},
                         {2 * half, 2 * half}, streaming_of(x), SiluMulGrad<kOutputBits<T>>{});
  });
  return dx;
}

at::Tensor gelu(const at::Tensor& x_in, c10::string_view approximate) {
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    with_gelu_form(approximate, [&](auto form) {
      if constexpr (kGeluTables<T> && decltype(form)::value) {
        return gelu_by_table(x.const_data_ptr<T>(), y.mutable_data_ptr<T>(), x.numel());
      }
      elementwise<T, 1, 1>(1, x.numel(), {x.const_data_ptr<T>()}, {0}, {y.mutable_data_ptr<T>()}, {0}, streaming_of(x),
                           Gelu<decltype(form)::value, kOutputBits<T>>{});
    });
  });
  return y;
}

at::Tensor gelu_backward(const at::Tensor& dy_in, const at::Tensor& x_in, c10::string_view approximate) {
  const at::Tensor dy = dy_in.contiguous(), x = x_in.contiguous();
  at::Tensor dx = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    with_gelu_form(approximate, [&](auto form) {
      constexpr bool kTanh = decltype(form)::value;
#if defined(CPU_CAPABILITY_AVX2)
      if constexpr (kGeluTables<T> && kTanh) {
        const float* table = gelu_tables<T>().slope.data();
        return elementwise<T, 2, 1>(1, x.numel(), {dy.const_data_ptr<T>(), x.const_data_ptr<T>()}, {0, 0}, {dx.mutable_data_ptr<T>()}, {0},
                                    streaming_of(x), [table](const std::array<Vec<M>, 2>& v) C10_ALWAYS_INLINE_ATTRIBUTE {
                                      return std::array{v[0] * slope_by_table<T>(v[1], table)};
                                    });
      }
#endif
      elementwise<T, 2, 1>(1, x.numel(), {dy.const_data_ptr<T>(), x.const_data_ptr<T>()}, {0, 0}, {dx.mutable_data_ptr<T>()}, {0},
                           streaming_of(x), GeluGrad<kTanh, kOutputBits<T>>{});
    });
  });
  return dx;
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
