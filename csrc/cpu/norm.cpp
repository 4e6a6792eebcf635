// Fused CPU kernels of rms_norm, rms_norm_backward, add_rms_norm and add (math: airfuse/ops/rms_norm.py,
// add_rms_norm.py, add.py). Rows run in parallel; each row is read once for its statistic and once
// more, from cache, for the outputs.
#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

// Sum over a row of term(i, n), the vector of elements [i, i + n). Four independent accumulators
// keep the adds from waiting on each other; rms_norm and add_rms_norm share this order, so they
// agree bit for bit.
template <class M>
M row_sum(int64_t d, const auto& term) {
  constexpr int64_t w = kWidth<M>;
  Vec<M> acc[4] = {Vec<M>(M(0)), Vec<M>(M(0)), Vec<M>(M(0)), Vec<M>(M(0))};
  int64_t i = 0;
  for (; i + 4 * w <= d; i += 4 * w) {
    c10::ForcedUnroll<4>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { acc[k] = acc[k] + term(i + k * w, w); });
  }
  for_each_vector<M>(d - i, [&](int64_t j, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE { acc[0] = acc[0] + term(i + j, n); });
  const Vec<M> total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  return at::vec::vec_reduce_all<M>([](const Vec<M>& a, const Vec<M>& b) { return a + b; }, total);
}

// The end of a row of rms_norm, given the row's sum of squares: y = x * rstd * gamma with
// rstd = 1 / sqrt(mean(x^2) + epsilon).
template <class T, class G, class M = Math<T>>
void normalize_row(const T* x, const G* gamma, int64_t d, M sum, M epsilon, T* y, M* rstd) {
  const M r = M(1) / std::sqrt(sum / static_cast<M>(d) + epsilon);
  *rstd = r;
  const Vec<M> rv(r);
  for_each_vector<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    store<T>(y + i, load<M>(x + i, n) * rv * load<M>(gamma + i, n), n);
  });
}

// One row of rms_norm.
template <class T, class G, class M = Math<T>>
void rms_norm_row(const T* x, const G* gamma, int64_t d, M epsilon, T* y, M* rstd) {
  const M sum = row_sum<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    const Vec<M> v = load<M>(x + i, n);
    return v * v;
  });
  normalize_row(x, gamma, d, sum, epsilon, y, rstd);
}

// One row of add_rms_norm: x = x1 + x2 rounded to T, then rms_norm of that x. The sum of squares
// is taken as each vector of x is stored (read back rounded, from the store just made), in
// rms_norm_row's order: one pass less than add then rms_norm, and the same bits.
template <class T, class G, class M = Math<T>>
void add_rms_norm_row(const T* x1, const T* x2, const G* gamma, int64_t d, M epsilon, T* x, T* y, M* rstd) {
  const M sum = row_sum<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    store<T>(x + i, load<M>(x1 + i, n) + load<M>(x2 + i, n), n);
    const Vec<M> v = load<M>(x + i, n);
    return v * v;
  });
  normalize_row(x, gamma, d, sum, epsilon, y, rstd);
}

std::vector<int64_t> statistic_shape(const at::Tensor& x) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = 1;
  return shape;
}

template <class M>
at::ScalarType scalar_type_of() {
  return c10::CppTypeToScalarType<M>::value;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> rms_norm(const at::Tensor& x_in, const at::Tensor& gamma_in, double epsilon) {
  const at::Tensor x = x_in.contiguous(), gamma = gamma_in.contiguous();
  const int64_t d = x.size(-1), rows = x.numel() / d;
  at::Tensor y = at::empty(x.sizes(), x.options());
  return with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    at::Tensor rstd = at::empty(statistic_shape(x), x.options().dtype(scalar_type_of<M>()));
    with_same_or_math<T>(gamma.scalar_type(), [&](auto g) {
      using G = decltype(g);
      const T* xp = x.const_data_ptr<T>();
      const G* gp = gamma.const_data_ptr<G>();
      T* yp = y.mutable_data_ptr<T>();
      M* rp = rstd.mutable_data_ptr<M>();
      at::parallel_for(0, rows, grain_in_rows(d), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) rms_norm_row(xp + r * d, gp, d, static_cast<M>(epsilon), yp + r * d, rp + r);
      });
    });
    return std::make_tuple(y, rstd);
  });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& x1_in, const at::Tensor& x2_in,
                                                            const at::Tensor& gamma_in, double epsilon) {
  const at::Tensor x1 = x1_in.contiguous(), x2 = x2_in.contiguous(), gamma = gamma_in.contiguous();
  const int64_t d = x1.size(-1), rows = x1.numel() / d;
  at::Tensor y = at::empty(x1.sizes(), x1.options()), x = at::empty(x1.sizes(), x1.options());
  return with_dtype(x1.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    at::Tensor rstd = at::empty(statistic_shape(x1), x1.options().dtype(scalar_type_of<M>()));
    with_same_or_math<T>(gamma.scalar_type(), [&](auto g) {
      using G = decltype(g);
      const T *ap = x1.const_data_ptr<T>(), *bp = x2.const_data_ptr<T>();
      const G* gp = gamma.const_data_ptr<G>();
      T *xp = x.mutable_data_ptr<T>(), *yp = y.mutable_data_ptr<T>();
      M* rp = rstd.mutable_data_ptr<M>();
      at::parallel_for(0, rows, grain_in_rows(d), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r * d;
          add_rms_norm_row(ap + o, bp + o, gp, d, static_cast<M>(epsilon), xp + o, yp + o, rp + r);
        }
      });
    });
    return std::make_tuple(y, rstd, x);
  });
}

// dx = rstd * (dxhat - xhat * mean(dxhat * xhat)) with xhat = x * rstd, dxhat = dy * gamma;
// dgamma = sum over rows of dy * xhat, summed per thread then across threads.
std::tuple<at::Tensor, at::Tensor> rms_norm_backward(const at::Tensor& dy_in, const at::Tensor& x_in,
                                                     const at::Tensor& rstd_in, const at::Tensor& gamma_in) {
  const at::Tensor dy = dy_in.contiguous(), x = x_in.contiguous(), gamma = gamma_in.contiguous();
  const int64_t d = x.size(-1), rows = x.numel() / d;
  at::Tensor dx = at::empty(x.sizes(), x.options());
  return with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    const at::Tensor rstd = rstd_in.to(scalar_type_of<M>()).contiguous();
    at::Tensor partial = at::zeros({at::get_num_threads(), d}, x.options().dtype(scalar_type_of<M>()));
    with_same_or_math<T>(gamma.scalar_type(), [&](auto g) {
      using G = decltype(g);
      const T *dyp = dy.const_data_ptr<T>(), *xp = x.const_data_ptr<T>();
      const G* gp = gamma.const_data_ptr<G>();
      const M* rp = rstd.const_data_ptr<M>();
      T* dxp = dx.mutable_data_ptr<T>();
      M* partial_p = partial.mutable_data_ptr<M>();
      at::parallel_for(0, rows, grain_in_rows(d), [&](int64_t begin, int64_t end) {
        M* dgamma = partial_p + at::get_thread_num() * d;
        for (int64_t r = begin; r < end; ++r) {
          const T *dyr = dyp + r * d, *xr = xp + r * d;
          const Vec<M> rv(rp[r]);
          const M sum = row_sum<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
            return load<M>(dyr + i, n) * load<M>(gp + i, n) * (load<M>(xr + i, n) * rv);
          });
          const Vec<M> mean(sum / static_cast<M>(d));
          for_each_vector<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
            const Vec<M> dyv = load<M>(dyr + i, n), xhat = load<M>(xr + i, n) * rv;
            const Vec<M> dxhat = dyv * load<M>(gp + i, n);
            store<T>(dxp + r * d + i, rv * (dxhat - xhat * mean), n);
            store<M>(dgamma + i, load<M>(dgamma + i, n) + dyv * xhat, n);
          });
        }
      });
    });
    return std::make_tuple(dx, partial.sum(0).to(gamma.scalar_type()));
  });
}

at::Tensor add(const at::Tensor& x_in, const at::Tensor& y_in) {
  return binary_elementwise(x_in, y_in, [](const auto& v) { return std::array{v[0] + v[1]}; });
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
