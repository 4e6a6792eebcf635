// Fused CPU kernels of rope and rope_backward (math: airfuse/ops/rope.py). Each row of the rotated
// tensor is read once; its cos/sin rows are found through the tables' broadcast strides, so
// broadcast tables are never expanded in memory.
#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

// Where row r of a [rows, d] tensor of shape `shape` finds its table row: the tables' strides with
// broadcast dims at 0 (the checks guarantee every leading dim is shape's or 1).
struct TableRows {
  std::vector<int64_t> sizes, strides;

  TableRows(at::IntArrayRef shape, const at::Tensor& table) {
    const at::Tensor expanded = table.expand(shape);
    sizes.assign(shape.begin(), shape.end() - 1);
    strides.assign(expanded.strides().begin(), expanded.strides().end() - 1);
  }

  int64_t offset(int64_t row) const {
    int64_t result = 0;
    for (int64_t k = static_cast<int64_t>(sizes.size()) - 1; k >= 0; --k) {
      result += (row % sizes[k]) * strides[k];
      row /= sizes[k];
    }
    return result;
  }
};

// One row. Forward: y = x * cos + rotate(x) * sin, rotate turning each pair (u, v) into (-v, u).
// Backward: dx = dy * cos - rotate(dy * sin) (rotate's transpose is -rotate), which for a pair is
// (u cos_u + v sin_v, v cos_v - u sin_u).
template <class T, class C, bool kBackward, class M = Math<T>>
void rope_row(const T* x, const C* cos, const C* sin, int64_t d, bool half, T* y) {
  if (half) {
    const int64_t h = d / 2;
    for_each_vector<M>(h, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      const Vec<M> x1 = load<M>(x + i, n), x2 = load<M>(x + h + i, n);
      const Vec<M> c1 = load<M>(cos + i, n), c2 = load<M>(cos + h + i, n);
      const Vec<M> s1 = load<M>(sin + i, n), s2 = load<M>(sin + h + i, n);
      if constexpr (kBackward) {
        store<T>(y + i, x1 * c1 + x2 * s2, n);
        store<T>(y + h + i, x2 * c2 - x1 * s1, n);
      } else {
        store<T>(y + i, x1 * c1 - x2 * s1, n);
        store<T>(y + h + i, x2 * c2 + x1 * s2, n);
      }
    });
    return;
  }
  // Adjacent pairs: scalar, in M, with the same products and rounding as the vector form.
  for (int64_t i = 0; i < d; i += 2) {
    const M u = static_cast<M>(x[i]), v = static_cast<M>(x[i + 1]);
    const M cu = static_cast<M>(cos[i]), cv = static_cast<M>(cos[i + 1]);
    const M su = static_cast<M>(sin[i]), sv = static_cast<M>(sin[i + 1]);
    if constexpr (kBackward) {
      y[i] = static_cast<T>(u * cu + v * sv);
      y[i + 1] = static_cast<T>(v * cv - u * su);
    } else {
      y[i] = static_cast<T>(u * cu - v * su);
      y[i + 1] = static_cast<T>(v * cv + u * sv);
    }
  }
}

template <bool kBackward>
at::Tensor rope_kernel(const at::Tensor& x_in, const at::Tensor& cos_in, const at::Tensor& sin_in, c10::string_view mode) {
  const at::Tensor x = x_in.contiguous();
  // Tables need unit stride along d only; their leading dims may broadcast.
  const at::Tensor cos = cos_in.stride(-1) == 1 ? cos_in : cos_in.contiguous();
  const at::Tensor sin = sin_in.stride(-1) == 1 ? sin_in : sin_in.contiguous();
  const bool half = mode == "half";
  const int64_t d = x.size(-1), rows = x.numel() / d;
  const TableRows cos_rows(x.sizes(), cos), sin_rows(x.sizes(), sin);
  at::Tensor y = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    with_same_or_math<T>(cos.scalar_type(), [&](auto c) {
      using C = decltype(c);
      TORCH_CHECK(sin.scalar_type() == cos.scalar_type(), "airfuse CPU rope: sin and cos dtypes differ");
      const T* xp = x.const_data_ptr<T>();
      const C *cp = cos.const_data_ptr<C>(), *sp = sin.const_data_ptr<C>();
      T* yp = y.mutable_data_ptr<T>();
      at::parallel_for(0, rows, grain_in_rows(d), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          rope_row<T, C, kBackward>(xp + r * d, cp + cos_rows.offset(r), sp + sin_rows.offset(r), d, half, yp + r * d);
        }
      });
    });
  });
  return y;
}

}  // namespace

at::Tensor rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, c10::string_view mode) {
  return rope_kernel<false>(x, cos, sin, mode);
}

at::Tensor rope_backward(const at::Tensor& dy, const at::Tensor& cos, const at::Tensor& sin, c10::string_view mode) {
  return rope_kernel<true>(dy, cos, sin, mode);
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
