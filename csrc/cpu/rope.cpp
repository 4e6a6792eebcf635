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

// Half-mode float32 tables beside bfloat16 x in even/odd order (kEvenOddBlocks) are converted to
// that order once per tile (rope_kernel) rather than at every load: a table row is read by every
// head, and each load would cost two shuffles per vector (load_even_odd). A converted row holds
// cos's (or sin's) two halves in T's block order, each padded to whole blocks, the second from
// second_half(h). Tables in x's dtype are read as they are: bfloat16 ones load in even/odd order
// with a shift and a mask, and converted once per tile they took 1.01-1.08x as long (float32
// rows, twice the bytes, crowding L1; bfloat16 16 to 8192 tokens x 4096, 1 thread, forward and
// backward, in one process), float16 1.09-1.15x.
template <class M>
int64_t second_half(int64_t h) {
  return (h + kBlock<M> - 1) / kBlock<M> * kBlock<M>;
}

template <class T, class C, class M = Math<T>>
void convert_table_row(const C* table, int64_t h, M* converted) {
  for (const int64_t half : {int64_t(0), h}) {
    M* out = converted + (half == 0 ? 0 : second_half<M>(h));
    for_each_block<M>(h, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      const Block<M> b = load_block<T, M>(table + half + i, n);
      b[0].store(out + i);
      b[1].store(out + i + kWidth<M>);
    });
  }
}

// One row. Forward: y = x * cos + rotate(x) * sin, rotate turning each pair (u, v) into (-v, u).
// Backward: dx = dy * cos - rotate(dy * sin) (rotate's transpose is -rotate), which for a pair is
// (u cos_u + v sin_v, v cos_v - u sin_u). y is stored with kStream and kNative (vec_io.h's
// store_block) by the vector forms; the adjacent pairs' scalar stores are ordinary ones. Half mode
// reads its tables as rows of convert_table_row (kConverted) or as they are.
template <class T, class C, bool kBackward, bool kStream, bool kNative, bool kConverted, class M = Math<T>>
C10_ALWAYS_INLINE void rope_row(const T* x, const C* cos, const C* sin, int64_t d, bool half, T* y) {
  if (half) {
    static_assert(!kConverted || std::is_same_v<C, M>);
    const int64_t h = d / 2, table_second = kConverted ? second_half<M>(h) : h;
    const auto table = [](const C* p, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      if constexpr (kConverted) {
        return Block<M>{Vec<M>::loadu(p), Vec<M>::loadu(p + kWidth<M>)};
      } else {
        return load_block<T, M>(p, n);
      }
    };
    for_each_block<M>(h, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      const Block<M> x1 = load_block<T, M>(x + i, n), x2 = load_block<T, M>(x + h + i, n);
      const Block<M> c1 = table(cos + i, n), c2 = table(cos + table_second + i, n);
      const Block<M> s1 = table(sin + i, n), s2 = table(sin + table_second + i, n);
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
      store_block<T, kStream, kEvenOddBlocks<T>, kNative>(y + i, first, n);
      store_block<T, kStream, kEvenOddBlocks<T>, kNative>(y + h + i, second, n);
    });
    return;
  }
  if constexpr (kEvenOddBlocks<T>) {
    // Adjacent pairs in even/odd order: a block's first vector holds its pairs' u, the second
    // their v (likewise the tables'), so the pairs rotate with the half mode's vector math.
    for_each_block<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      const Block<M> p = load_block<T, M, true>(x + i, n), c = load_block<T, M, true>(cos + i, n),
                     s = load_block<T, M, true>(sin + i, n);
      Block<M> out;
      if constexpr (kBackward) {
        out = {p[0] * c[0] + p[1] * s[1], p[1] * c[1] - p[0] * s[0]};
      } else {
        out = {p[0] * c[0] - p[1] * s[0], p[1] * c[1] + p[0] * s[1]};
      }
      store_block<T, kStream, true, kNative>(y + i, out, n);
    });
    return;
  }
  // Adjacent pairs otherwise: scalar, in M, with the same products and rounding as the vector form.
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

// How far ahead of the current row, in bytes, the rows of x and y are prefetched when rows run in
// memory order (1-4 KB measured alike).
constexpr int64_t kPrefetchAhead = 2048;

// The order rows are visited in, so that each cos/sin row is reused while it is in L1. With x
// [B, H, S, D] and tables [B or 1, 1, S, D] (Hugging Face's layout) the rows sharing a table row
// are S apart: in memory order every head re-reads the whole tables (1 MB at S = 2048 in
// bfloat16) from L2 or beyond. So the leading dims split as outer x shared x inner, `shared` the
// innermost dim both tables broadcast over that has a dim they do not broadcast over inside it,
// and rows run in tiles of up to kTileRows consecutive inner rows, each tile once per index of
// `shared`. Without such a dim (x [B, S, H, D], whose consecutive rows already share a table row;
// tables as large as x) shared is 1: memory order.
struct RowOrder {
  static constexpr int64_t kTileRows = 16;  // 8 KB of bfloat16 tables at D = 128
  int64_t outer = 1, shared = 1, inner = 1;

  explicit RowOrder(const std::vector<RowWalk::Dim>& dims) {
    const auto broadcast = [](const RowWalk::Dim& dim) { return dim.cos == 0 && dim.sin == 0; };
    int64_t k = static_cast<int64_t>(dims.size()) - 1;
    bool varying_inside = false;
    for (; k >= 0; --k) {
      if (dims[k].size > 1 && broadcast(dims[k]) && varying_inside) break;
      varying_inside = varying_inside || (dims[k].size > 1 && !broadcast(dims[k]));
    }
    for (int64_t j = 0; j < static_cast<int64_t>(dims.size()); ++j) {
      int64_t& part = j < k ? outer : j == k ? shared : inner;
      part *= dims[j].size;
    }
  }

  int64_t tiles_per_outer() const { return (inner + kTileRows - 1) / kTileRows; }
  int64_t tiles() const { return outer * tiles_per_outer(); }
};

template <bool kBackward>
at::Tensor rope_kernel(const at::Tensor& x_in, const at::Tensor& cos_in, const at::Tensor& sin_in, c10::string_view mode) {
  const at::Tensor x = x_in.contiguous();
  // Tables need unit stride along d only; their leading dims may broadcast.
  const at::Tensor cos = cos_in.stride(-1) == 1 ? cos_in : cos_in.contiguous();
  const at::Tensor sin = sin_in.stride(-1) == 1 ? sin_in : sin_in.contiguous();
  const bool half = mode == "half";
  const int64_t d = x.size(-1), rows = x.numel() / d;
  const std::vector<RowWalk::Dim> dims = RowWalk::dims(x, cos, sin);
  const RowOrder order(dims);
  const int64_t tiles_per_outer = order.tiles_per_outer();
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
      // Rows are short (a head), too short for the hardware's stream prefetch to keep the x and y
      // streams ahead (measured: the kernel took 1.25x a clone of x, 1.1x with this): each row
      // asks for the one the same tile visits for the next index of `shared`, or in memory order
      // for the bytes kPrefetchAhead on.
      const int64_t ahead = order.shared > 1 ? order.inner * row_bytes : kPrefetchAhead;
      const int64_t rows_per_tile = order.shared * std::min(order.inner, RowOrder::kTileRows);
      // The bytes moved: x and y (the tables, broadcast over heads in the usual layout, are small beside
      // them); streamed from the size kernels.h gives rope and rope_backward.
      constexpr int64_t kStreamFrom = stream_bytes_of(kBackward ? "rope_backward" : "rope");
      const int64_t grain = std::max<int64_t>(1, grain_in_rows(d) / rows_per_tile);
      // Half mode converts float32 tables beside even/odd bfloat16 x (convert_table_row).
      using M = Math<T>;
      constexpr bool kConvert = kEvenOddBlocks<T> && !std::is_same_v<C, T>;
      const auto run = [&](auto converted, auto native) {
        constexpr bool kConverted = decltype(converted)::value;
        constexpr bool kNative = decltype(native)::value;
        using Table = std::conditional_t<kConverted, M, C>;
        const int64_t converted_row = 2 * second_half<M>(d / 2);
        parallel_for_streaming(0, order.tiles(), grain, 2 * x.nbytes(), [&](int64_t begin, int64_t end, auto stream) {
          constexpr bool kStream = decltype(stream)::value;
          std::array<const Table*, RowOrder::kTileRows> cos_row, sin_row;
          // The tile's converted table rows: one per run of rows sharing the same ones.
          std::vector<Vec<M>> converted_rows(kConverted ? 2 * RowOrder::kTileRows * converted_row / kWidth<M> : 0);
          M* const converted_at = reinterpret_cast<M*>(converted_rows.data());
          for (int64_t tile = begin; tile < end; ++tile) {
            const int64_t o = tile / tiles_per_outer, first = (tile % tiles_per_outer) * RowOrder::kTileRows;
            const int64_t count = std::min(RowOrder::kTileRows, order.inner - first);
            RowWalk row(dims, o * order.shared * order.inner + first);
            for (int64_t i = 0, previous_cos = -1, previous_sin = -1; i < count; ++i, row.next()) {
              if constexpr (kConverted) {
                if (row.cos != previous_cos || row.sin != previous_sin) {
                  M* const at = converted_at + 2 * i * converted_row;
                  convert_table_row<T>(cp + row.cos, d / 2, at);
                  convert_table_row<T>(sp + row.sin, d / 2, at + converted_row);
                  previous_cos = row.cos, previous_sin = row.sin;
                  cos_row[i] = at, sin_row[i] = at + converted_row;
                } else {
                  cos_row[i] = cos_row[i - 1], sin_row[i] = sin_row[i - 1];
                }
              } else {
                cos_row[i] = cp + row.cos, sin_row[i] = sp + row.sin;
              }
            }
            for (int64_t h = 0; h < order.shared; ++h) {
              // x and y are contiguous: row r is at r * d.
              const int64_t r0 = (o * order.shared + h) * order.inner + first;
              for (int64_t i = 0; i < count; ++i) {
                const int64_t offset = (r0 + i) * d;
                if (offset * static_cast<int64_t>(sizeof(T)) + ahead + row_bytes <= rows * row_bytes) {
                  prefetch_bytes(reinterpret_cast<const char*>(xp + offset) + ahead, row_bytes);
                  // y for writing, unless streamed: a streaming store needs no read of its line.
                  if constexpr (!kStream) prefetch_bytes<true>(reinterpret_cast<const char*>(yp + offset) + ahead, row_bytes);
                }
                rope_row<T, Table, kBackward, kStream, kNative, kConverted>(xp + offset, cos_row[i], sin_row[i], d, half, yp + offset);
              }
            }
          }
        }, kStreamFrom);
      };
      with_native_rounding<T>([&](auto native) {
        if (half && kConvert) return run(std::true_type{}, native);
        run(std::false_type{}, native);
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
