// Fused CPU kernels of rope and rope_backward (math: airfuse/ops/rope.py). Each row of the rotated
// tensor is read once; its cos/sin rows are found through the tables' broadcast strides, so
// broadcast tables are never expanded in memory.
#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

// Walks the rows of x (every dim but the last) in order, keeping the row offsets of x (and y), cos
// and sin (whose broadcast dims have stride 0) with an odometer over the leading dims: adds only,
// not a division per dim per row.
class RowWalk {
 public:
  struct Dim {
    int64_t size, x, cos, sin;  // the dim's size and each tensor's stride along it (0: broadcast)
  };

  static std::vector<Dim> dims(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    const at::Tensor c = cos.expand(x.sizes()), s = sin.expand(x.sizes());
    std::vector<Dim> result;
    for (int64_t k = 0; k + 1 < x.dim(); ++k) result.push_back({x.size(k), x.stride(k), c.stride(k), s.stride(k)});
    return result;
  }

  // At row start.
  RowWalk(const std::vector<Dim>& dims, int64_t start) : dims_(dims), index_(dims.size()) {
    for (int64_t k = static_cast<int64_t>(dims_.size()) - 1; k >= 0; --k) {
      index_[k] = start % dims_[k].size;
      start /= dims_[k].size;
      x += index_[k] * dims_[k].x;
      cos += index_[k] * dims_[k].cos;
      sin += index_[k] * dims_[k].sin;
    }
  }

  void next() {
    for (int64_t k = static_cast<int64_t>(dims_.size()) - 1; k >= 0; --k) {
      const Dim& dim = dims_[k];
      x += dim.x, cos += dim.cos, sin += dim.sin;
      if (++index_[k] < dim.size) return;
      x -= dim.size * dim.x, cos -= dim.size * dim.cos, sin -= dim.size * dim.sin;
      index_[k] = 0;
    }
  }

  int64_t x = 0, cos = 0, sin = 0;  // the current row's offsets

 private:
  const std::vector<Dim>& dims_;
  std::vector<int64_t> index_;
};

// One row. Forward: y = x * cos + rotate(x) * sin, rotate turning each pair (u, v) into (-v, u).
// Backward: dx = dy * cos - rotate(dy * sin) (rotate's transpose is -rotate), which for a pair is
// (u cos_u + v sin_v, v cos_v - u sin_u).
template <class T, class C, bool kBackward, class M = Math<T>>
void rope_row(const T* x, const C* cos, const C* sin, int64_t d, bool half, T* y) {
  if (half) {
    const int64_t h = d / 2;
    for_each_block<M>(h, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      const Block<M> x1 = load_block<T, M>(x + i, n), x2 = load_block<T, M>(x + h + i, n);
      const Block<M> c1 = load_block<T, M>(cos + i, n), c2 = load_block<T, M>(cos + h + i, n);
      const Block<M> s1 = load_block<T, M>(sin + i, n), s2 = load_block<T, M>(sin + h + i, n);
      Block<M> first, second;
      c10::ForcedUnroll<2>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE {
        if constexpr (kBackward) {
          first[k] = x1[k] * c1[k] + x2[k] * s2[k];
          second[k] = x2[k] * c2[k] - x1[k] * s1[k];
        } else {
          first[k] = x1[k] * c1[k] - x2[k] * s1[k];
          second[k] = x2[k] * c2[k] + x1[k] * s2[k];
        }
      });
      store_block<T>(y + i, first, n);
      store_block<T>(y + h + i, second, n);
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

// How far ahead of the current row, in bytes, the rows of x and y are prefetched (1-4 KB measured alike).
constexpr int64_t kPrefetchAhead = 2048;

template <bool kBackward>
at::Tensor rope_kernel(const at::Tensor& x_in, const at::Tensor& cos_in, const at::Tensor& sin_in, c10::string_view mode) {
  const at::Tensor x = x_in.contiguous();
  // Tables need unit stride along d only; their leading dims may broadcast.
  const at::Tensor cos = cos_in.stride(-1) == 1 ? cos_in : cos_in.contiguous();
  const at::Tensor sin = sin_in.stride(-1) == 1 ? sin_in : sin_in.contiguous();
  const bool half = mode == "half";
  const int64_t d = x.size(-1), rows = x.numel() / d;
  const std::vector<RowWalk::Dim> dims = RowWalk::dims(x, cos, sin);
  at::Tensor y = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    with_same_or_math<T>(cos.scalar_type(), [&](auto c) {
      using C = decltype(c);
      TORCH_CHECK(sin.scalar_type() == cos.scalar_type(), "airfuse CPU rope: sin and cos dtypes differ");
      const T* xp = x.const_data_ptr<T>();
      const C *cp = cos.const_data_ptr<C>(), *sp = sin.const_data_ptr<C>();
      T* yp = y.mutable_data_ptr<T>();
      const int64_t row_bytes = d * static_cast<int64_t>(sizeof(T));
      at::parallel_for(0, rows, grain_in_rows(d), [&](int64_t begin, int64_t end) {
        RowWalk row(dims, begin);
        for (int64_t r = begin; r < end; ++r, row.next()) {
          // x and y are contiguous: row r is at r * d. Rows are short (a head), too short for the
          // hardware's stream prefetch to keep the x and y streams ahead (measured: the kernel took
          // 1.25x a clone of x, 1.1x with this).
          if ((r + 1) * row_bytes + kPrefetchAhead <= end * row_bytes) {
            prefetch_bytes(reinterpret_cast<const char*>(xp + row.x) + kPrefetchAhead, row_bytes);
            prefetch_bytes<true>(reinterpret_cast<const char*>(yp + row.x) + kPrefetchAhead, row_bytes);
          }
          rope_row<T, C, kBackward>(xp + row.x, cp + row.cos, sp + row.sin, d, half, yp + row.x);
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
