// Fused CPU kernels of the activations: silu_mul, swiglu, gelu and their backwards (math:
// airfuse/ops/silu_mul.py, swiglu.py, gelu.py, in the same operation order). All elementwise: one
// read of each input, one write of each output.
#include <cmath>

#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

template <class M>
Vec<M> sigmoid(const Vec<M>& v) {
  return Vec<M>(M(1)) / (Vec<M>(M(1)) + v.neg().exp());
}

// y = silu(a) * b
template <class M>
std::array<Vec<M>, 1> silu_mul_math(const std::array<Vec<M>, 2>& in) {
  const auto& [a, b] = in;
  return {a * sigmoid(a) * b};
}

// (da, db) of y = silu(a) * b, with silu'(a) = s + a * s * (1 - s)
template <class M>
std::array<Vec<M>, 2> silu_mul_grad_math(const std::array<Vec<M>, 3>& in) {
  const auto& [dy, a, b] = in;
  const Vec<M> one(M(1)), s = sigmoid(a);
  return {dy * b * s * (one + a * (one - s)), dy * a * s};
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

template <class M>
Vec<M> tanh_argument(const Vec<M>& x) {
  return Vec<M>(M(kTanhScale)) * x * (Vec<M>(M(1)) + Vec<M>(M(kCubic)) * x * x);
}

// Phi(x), the gate GELU multiplies x by.
template <class M>
Vec<M> cdf(const Vec<M>& x, bool tanh) {
  if (tanh) return sigmoid(tanh_argument(x));
  return Vec<M>(M(0.5)) * (x.neg() * Vec<M>(M(kSqrtHalf))).erfc();
}

// x * Phi'(x); 0 where the tanh form's density underflows (x * slope could be inf there).
template <class M>
Vec<M> x_times_density(const Vec<M>& x, bool tanh) {
  if (tanh) {
    const Vec<M> w = tanh_argument(x);
    const Vec<M> density = sigmoid(w) * sigmoid(w.neg());
    const Vec<M> slope = Vec<M>(M(kTanhScale)) * (Vec<M>(M(1)) + Vec<M>(M(3 * kCubic)) * x * x);
    return Vec<M>::blendv(x * slope * density, Vec<M>(M(0)), density == Vec<M>(M(0)));
  }
  return x * (Vec<M>(M(-0.5)) * x * x).exp() * Vec<M>(M(kInvSqrt2Pi));
}

bool is_tanh(c10::string_view approximate) {
  return approximate == "tanh";
}

}  // namespace

at::Tensor silu_mul(const at::Tensor& a_in, const at::Tensor& b_in) {
  const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  at::Tensor y = at::empty(a.sizes(), a.options());
  with_dtype(a.scalar_type(), [&](auto t) {
    using T = decltype(t);
    elementwise<T, 2, 1>(1, a.numel(), {a.const_data_ptr<T>(), b.const_data_ptr<T>()}, {0, 0}, {y.mutable_data_ptr<T>()}, {0},
                         silu_mul_math<Math<T>>);
  });
  return y;
}

std::tuple<at::Tensor, at::Tensor> silu_mul_backward(const at::Tensor& dy_in, const at::Tensor& a_in, const at::Tensor& b_in) {
  const at::Tensor dy = dy_in.contiguous(), a = a_in.contiguous(), b = b_in.contiguous();
  at::Tensor da = at::empty(a.sizes(), a.options()), db = at::empty(b.sizes(), b.options());
  with_dtype(a.scalar_type(), [&](auto t) {
    using T = decltype(t);
    elementwise<T, 3, 2>(1, a.numel(), {dy.const_data_ptr<T>(), a.const_data_ptr<T>(), b.const_data_ptr<T>()}, {0, 0, 0},
                         {da.mutable_data_ptr<T>(), db.mutable_data_ptr<T>()}, {0, 0}, silu_mul_grad_math<Math<T>>);
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
    elementwise<T, 2, 1>(outer, half, {xp, xp + half}, {2 * half, 2 * half}, {y.mutable_data_ptr<T>()}, {half}, silu_mul_math<Math<T>>);
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
                         {2 * half, 2 * half}, silu_mul_grad_math<Math<T>>);
  });
  return dx;
}

at::Tensor gelu(const at::Tensor& x_in, c10::string_view approximate) {
  const at::Tensor x = x_in.contiguous();
  const bool tanh = is_tanh(approximate);
  at::Tensor y = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    elementwise<T, 1, 1>(1, x.numel(), {x.const_data_ptr<T>()}, {0}, {y.mutable_data_ptr<T>()}, {0},
                         [tanh](const std::array<Vec<M>, 1>& v) { return std::array{v[0] * cdf(v[0], tanh)}; });
  });
  return y;
}

at::Tensor gelu_backward(const at::Tensor& dy_in, const at::Tensor& x_in, c10::string_view approximate) {
  const at::Tensor dy = dy_in.contiguous(), x = x_in.contiguous();
  const bool tanh = is_tanh(approximate);
  at::Tensor dx = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    elementwise<T, 2, 1>(1, x.numel(), {dy.const_data_ptr<T>(), x.const_data_ptr<T>()}, {0, 0}, {dx.mutable_data_ptr<T>()}, {0},
                         [tanh](const std::array<Vec<M>, 2>& v) {
                           return std::array{v[0] * (cdf(v[1], tanh) + x_times_density(v[1], tanh))};
                         });
  });
  return dx;
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
