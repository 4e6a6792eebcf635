// Fused CPU kernels of rms_norm, rms_norm_backward (and rms_norm_backward_add, add_rms_norm's eager
// backward), add_rms_norm and add (math: airfuse/ops/rms_norm.py, add_rms_norm.py, add.py). Rows
// run in parallel; each row is read once for its statistic and once more, from cache, for the outputs.
#include "vec_io.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {
namespace {

// Sum over a row of term(i, n), the block of elements [i, i + n). Four independent vector
// accumulators keep the adds from waiting on each other; rms_norm and add_rms_norm share this order,
// so they agree bit for bit. side(i, n) is called for each block of the row too (the blocks
// for_each_block gives), in the same loop: other work whose loads and stores then interleave with
// term's (rms_norm_backward's dx of the row before, while this row comes in from memory).
template <class M>
M row_sum(int64_t d, const auto& term, const auto& side) {
  constexpr int64_t b = kBlock<M>;
  Vec<M> acc[4] = {Vec<M>(M(0)), Vec<M>(M(0)), Vec<M>(M(0)), Vec<M>(M(0))};
  int64_t i = 0;
  for (; i + 2 * b <= d; i += 2 * b) {
    const Block<M> first = term(i, b), second = term(i + b, b);
    side(i, b);
    side(i + b, b);
    acc[0] = acc[0] + first[0], acc[1] = acc[1] + first[1];
    acc[2] = acc[2] + second[0], acc[3] = acc[3] + second[1];
  }
  for_each_block<M>(d - i, [&](int64_t j, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    const Block<M> t = term(i + j, n);
    side(i + j, n);
    acc[0] = acc[0] + t[0], acc[1] = acc[1] + t[1];
  });
  const Vec<M> total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  return at::vec::vec_reduce_all<M>([](const Vec<M>& a, const Vec<M>& b) { return a + b; }, total);
}

template <class M>
M row_sum(int64_t d, const auto& term) {
  return row_sum<M>(d, term, [](int64_t, int64_t) C10_ALWAYS_INLINE_ATTRIBUTE {});
}

// The row after row r of a thread's rows [.., end), for prefetching; r itself at the last one
// (prefetching it again costs nothing, it is in cache).
inline int64_t row_after(int64_t r, int64_t end) {
  return r + 1 < end ? r + 1 : r;
}

// That row at offset row * d of p.
template <class T>
const T* next_row(const T* p, int64_t r, int64_t end, int64_t d) {
  return p + row_after(r, end) * d;
}

// The end of a row of rms_norm, given the row's sum of squares: y = x * rstd * gamma with
// rstd = 1 / sqrt(mean(x^2) + epsilon), y stored with kStream and kNative (vec_io.h's store_block).
// prefetch(i) asks for block i of the next row's inputs, which this pass, reading x from cache,
// leaves memory free to bring in.
template <bool kStream, bool kNative, class T, class G, class M = Math<T>>
void normalize_row(const T* x, const G* gamma, int64_t d, M sum, M epsilon, T* y, M* rstd, const auto& prefetch) {
  const M r = M(1) / std::sqrt(sum / static_cast<M>(d) + epsilon);
  *rstd = r;
  const Vec<M> rv(r);
  for_each_block<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    prefetch(i);
    const Block<M> xb = load_block<T, M>(x + i, n), gb = load_block<T, M>(gamma + i, n);
    const auto scaled = [&](const Vec<M>& xv, const Vec<M>& gv) C10_ALWAYS_INLINE_ATTRIBUTE { return xv * rv * gv; };
    store_block<T, kStream, kEvenOddBlocks<T>, kNative>(y + i, each(scaled, xb, gb), n);
  });
}

// One row of rms_norm; next and next_y are the rows of x and y to prefetch (y for writing, unless
// streamed: a streaming store needs no read of its line).
template <bool kStream, bool kNative, class T, class G, class M = Math<T>>
void rms_norm_row(const T* x, const G* gamma, int64_t d, M epsilon, T* y, M* rstd, const T* next, const T* next_y) {
  const M sum = row_sum<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    return each([](const Vec<M>& v) C10_ALWAYS_INLINE_ATTRIBUTE { return v * v; }, load_block<T, M>(x + i, n));
  });
  normalize_row<kStream, kNative>(x, gamma, d, sum, epsilon, y, rstd, [&](int64_t i) C10_ALWAYS_INLINE_ATTRIBUTE {
    prefetch_block<M>(next + i);
    if constexpr (!kStream) prefetch_block<M, true>(next_y + i);
  });
}

// One row of add_rms_norm: x = x1 + x2 rounded to T, then rms_norm of that x. The sum of squares
// is taken as each block of x is stored (read back rounded, from the store just made), in
// rms_norm_row's order: one pass less than add then rms_norm, and the same bits. x is never
// streamed (it is read back at once, twice), y as rms_norm_row's.
template <bool kStream, bool kNative, class T, class G, class M = Math<T>>
void add_rms_norm_row(const T* x1, const T* x2, const G* gamma, int64_t d, M epsilon, T* x, T* y, M* rstd,
                      const T* next1, const T* next2, const T* next_y) {
  const M sum = row_sum<M>(d, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
    const auto plus = [](const Vec<M>& a, const Vec<M>& b) C10_ALWAYS_INLINE_ATTRIBUTE { return a + b; };
    store_block<T, false, kEvenOddBlocks<T>, kNative>(x + i, each(plus, load_block<T, M>(x1 + i, n), load_block<T, M>(x2 + i, n)), n);
    return each([](const Vec<M>& v) C10_ALWAYS_INLINE_ATTRIBUTE { return v * v; }, load_block<T, M>(x + i, n));
  });
  normalize_row<kStream, kNative>(x, gamma, d, sum, epsilon, y, rstd, [&](int64_t i) C10_ALWAYS_INLINE_ATTRIBUTE {
    prefetch_block<M>(next1 + i);
    prefetch_block<M>(next2 + i);
    if constexpr (!kStream) prefetch_block<M, true>(next_y + i);
  });
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
      with_native_rounding<T>([&](auto native) {
        parallel_for_streaming(0, rows, grain_in_rows(d), 2 * x.nbytes(), [&](int64_t begin, int64_t end, auto stream) {
          for (int64_t r = begin; r < end; ++r) {
            rms_norm_row<decltype(stream)::value, decltype(native)::value>(xp + r * d, gp, d, static_cast<M>(epsilon), yp + r * d,
                                                                           rp + r, next_row(xp, r, end, d), next_row<T>(yp, r, end, d));
          }
        });
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
      with_native_rounding<T>([&](auto native) {
        parallel_for_streaming(0, rows, grain_in_rows(d), 4 * x.nbytes(), [&](int64_t begin, int64_t end, auto stream) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r * d;
            add_rms_norm_row<decltype(stream)::value, decltype(native)::value>(
                ap + o, bp + o, gp, d, static_cast<M>(epsilon), xp + o, yp + o, rp + r, next_row(ap, r, end, d), next_row(bp, r, end, d),
                next_row<T>(yp, r, end, d));
          }
        }, stream_bytes_of("add_rms_norm"));
      });
    });
    return std::make_tuple(y, rstd, x);
  });
}

// A [.., width] tensor of float sums laid out in T's block order (vec_io.h), padded to whole
// blocks, as d values in element order.
template <class T>
at::Tensor in_element_order(const at::Tensor& blocks, int64_t d) {
  using M = Math<T>;
  if constexpr (kEvenOddBlocks<T>) {
    return blocks.view({-1, 2, kWidth<M>}).transpose(1, 2).reshape(-1).narrow(0, 0, d);
  } else {
    return blocks.narrow(0, 0, d);
  }
}

namespace {

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
// v rounded to bfloat16 and back, in v's own float lanes: at::vec's cvtfp32_bf16 rounding (add
// 0x7fff plus the lowest bit kept, nearest even) with the low half cleared instead of packed to
// 16-bit lanes, and a NaN kept as is. On AVX2 at::vec's pack and unpack shuffles made this
// rounding a quarter of rms_norm_backward_add's time (bfloat16 2048 x 4096, 1 thread: 5.9 ms with
// them, 5.1 ms with this, 4.4 ms without rounding at all); on AVX512 about 2 %.
C10_ALWAYS_INLINE Vec<float> bfloat16_rounded(const Vec<float>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  const __m512i i = _mm512_castps_si512(v);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(i, 16), _mm512_set1_epi32(1)));
  const __m512 r = _mm512_castsi512_ps(_mm512_and_si512(_mm512_add_epi32(i, bias), _mm512_set1_epi32(int32_t(0xffff0000))));
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
#else
  const __m256i i = _mm256_castps_si256(v);
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(_mm256_srli_epi32(i, 16), _mm256_set1_epi32(1)));
  const __m256 r = _mm256_castsi256_ps(_mm256_and_si256(_mm256_add_epi32(i, bias), _mm256_set1_epi32(int32_t(0xffff0000))));
  return _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
#endif
}
#endif

// b's values as storing them in T and loading them back gives them (the same rounding as
// store_block's), without that round trip through memory.
template <class T, class M>
C10_ALWAYS_INLINE Block<M> rounded(const Block<M>& b) {
  if constexpr (std::is_same_v<T, M>) {
    return b;
#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
  } else if constexpr (std::is_same_v<T, at::BFloat16>) {
    return each(bfloat16_rounded, b);
#endif
  } else {
    const auto [first, second] = at::vec::convert_to_float<T>(at::vec::convert_from_float<T>(b[0], b[1]));
    return {first, second};
  }
}

// dx = rstd * (dxhat - xhat * mean(dxhat * xhat)) with xhat = x * rstd, dxhat = dy * gamma;
// dgamma = sum over rows of dy * xhat, summed per thread (in block order) then across threads.
// Each row is read once from memory, for its sum; its dx and dgamma come from cache. With normal
// stores, they come in the same loop as the next row's sum (row_sum's side work), so memory is
// read at an even pace; a pass for the sum then a pass from cache for dx left it idle during the
// second, which the next row's prefetches did not fill (bfloat16 2048 x 4096, 1 thread, old and
// new calls alternating in one process: rms_norm_backward 0.91-0.94 of the time, with the
// residual 0.94-0.96). Streaming calls keep the two passes: streaming the stores from that shared
// loop took 1.07-1.11x as long (bfloat16, 8192 x 4096).
//
// With a residual (defined: rms_norm_backward_add), dx + residual is stored instead of dx, with dx
// rounded to T first and the sum in M rounded once: what rms_norm_backward then ATen's
// dx.add_(residual) give (ATen adds reduced floating types in float, rounding once), in one pass
// over memory instead of two.
std::tuple<at::Tensor, at::Tensor> backward(const at::Tensor& dy_in, const at::Tensor& x_in, const at::Tensor& rstd_in,
                                            const at::Tensor& gamma_in, const at::Tensor& residual_in) {
  const at::Tensor dy = dy_in.contiguous(), x = x_in.contiguous(), gamma = gamma_in.contiguous();
  // The Python caller makes sure of this; a mismatch would read out of bounds.
  TORCH_CHECK(!residual_in.defined() || (residual_in.sizes() == x.sizes() && residual_in.scalar_type() == x.scalar_type()),
              "airfuse CPU kernels: rms_norm_backward_add: dx_residual must have x's shape and dtype");
  const at::Tensor residual = residual_in.defined() ? residual_in.contiguous() : residual_in;
  const int64_t d = x.size(-1), rows = x.numel() / d;
  at::Tensor dx = at::empty(x.sizes(), x.options());
  return with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    using M = Math<T>;
    const int64_t padded = (d + kBlock<M> - 1) / kBlock<M> * kBlock<M>;
    const at::Tensor rstd = rstd_in.to(scalar_type_of<M>()).contiguous();
    at::Tensor partial = at::zeros({at::get_num_threads(), padded}, x.options().dtype(scalar_type_of<M>()));
    // The residual's presence as a compile-time flag: rms_norm_backward's rows stay as they were.
    const auto run = [&](auto with_residual, auto g, auto native) {
      constexpr bool kAdd = decltype(with_residual)::value;
      constexpr bool kNative = decltype(native)::value;
      using G = decltype(g);
      const T *dyp = dy.const_data_ptr<T>(), *xp = x.const_data_ptr<T>();
      const T* resp = kAdd ? residual.const_data_ptr<T>() : nullptr;
      const G* gp = gamma.const_data_ptr<G>();
      const M* rp = rstd.const_data_ptr<M>();
      T* dxp = dx.mutable_data_ptr<T>();
      M* partial_p = partial.mutable_data_ptr<M>();
      constexpr int64_t kStreamFrom = stream_bytes_of(kAdd ? "rms_norm_backward_add" : "rms_norm_backward");
      parallel_for_streaming(0, rows, grain_in_rows(d), (kAdd ? 4 : 3) * x.nbytes(), [&](int64_t begin, int64_t end, auto stream) {
        constexpr bool kStream = decltype(stream)::value;
        M* dgamma = partial_p + at::get_thread_num() * padded;
        // Row r's sum term: dxhat * xhat, block [i, i + n).
        const auto term_of = [&](int64_t r) C10_ALWAYS_INLINE_ATTRIBUTE {
          return [dyr = dyp + r * d, xr = xp + r * d, rv = Vec<M>(rp[r]), gp](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
            return each([&](const Vec<M>& dyv, const Vec<M>& gv, const Vec<M>& xv)
                            C10_ALWAYS_INLINE_ATTRIBUTE { return dyv * gv * (xv * rv); },
                        load_block<T, M>(dyr + i, n), load_block<T, M>(gp + i, n), load_block<T, M>(xr + i, n));
          };
        };
        // Row p's dx and dgamma, block [i, i + n), given its sum; meanwhile the same block of row
        // `in`'s dy and x, and of row `out`'s dx (for normal stores: a streaming store reads no
        // line) and residual, are prefetched. The rows' pointers are taken by value, so that the
        // loop keeps them in registers: captured by reference they were loaded again for every
        // block, as d was for the residual pass's dx address before (rms_norm_backward_add float32
        // 2048 x 4096, a streaming call, the same two passes: 0.79-0.85 of that code's time).
        const auto dx_of = [&](int64_t p, M sum, int64_t in, int64_t out) C10_ALWAYS_INLINE_ATTRIBUTE {
          return [=, dyr = dyp + p * d, xr = xp + p * d, dxr = dxp + p * d, resr = kAdd ? resp + p * d : nullptr,
                  dy_in = dyp + in * d, x_in = xp + in * d, dx_out = dxp + out * d, res_out = kAdd ? resp + out * d : nullptr,
                  rv = Vec<M>(rp[p]), mean = Vec<M>(sum / static_cast<M>(d))](int64_t i, int64_t n)
                     C10_ALWAYS_INLINE_ATTRIBUTE {
            prefetch_block<M>(dy_in + i);
            prefetch_block<M>(x_in + i);
            if constexpr (!kStream) prefetch_block<M, true>(dx_out + i);
            const auto xhat_of = [&](const Vec<M>& xv) C10_ALWAYS_INLINE_ATTRIBUTE { return xv * rv; };
            const Block<M> dyb = load_block<T, M>(dyr + i, n), xhat = each(xhat_of, load_block<T, M>(xr + i, n));
            const Block<M> gb = load_block<T, M>(gp + i, n);
            Block<M> dxb = each([&](const Vec<M>& dyv, const Vec<M>& gv, const Vec<M>& xh)
                                    C10_ALWAYS_INLINE_ATTRIBUTE { return rv * (dyv * gv - xh * mean); },
                                dyb, gb, xhat);
            if constexpr (kAdd) {
              prefetch_block<M>(res_out + i);
              dxb = each([](const Vec<M>& a, const Vec<M>& b) C10_ALWAYS_INLINE_ATTRIBUTE { return a + b; },
                         rounded<T>(dxb), load_block<T, M>(resr + i, n));
            }
            store_block<T, kStream, kEvenOddBlocks<T>, kNative>(dxr + i, dxb, n);
            // Lanes past n are 0 (the padded loads), so whole blocks are summed.
            c10::ForcedUnroll<2>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE {
              M* sums = dgamma + i + k * kWidth<M>;
              (Vec<M>::loadu(sums) + dyb[k] * xhat[k]).store(sums);
            });
          };
        };
        if constexpr (kStream) {
          for (int64_t r = begin; r < end; ++r) {
            for_each_block<M>(d, dx_of(r, row_sum<M>(d, term_of(r)), row_after(r, end), row_after(r, end)));
          }
        } else {
          // Each loop sums row r and stores row r - 1.
          M sum = row_sum<M>(d, term_of(begin));
          for (int64_t r = begin + 1; r < end; ++r) sum = row_sum<M>(d, term_of(r), dx_of(r - 1, sum, row_after(r, end), r));
          for_each_block<M>(d, dx_of(end - 1, sum, end - 1, end - 1));
        }
      }, kStreamFrom);
    };
    with_same_or_math<T>(gamma.scalar_type(), [&](auto g) {
      with_native_rounding<T>([&](auto native) {
        residual.defined() ? run(std::true_type{}, g, native) : run(std::false_type{}, g, native);
      });
    });
    return std::make_tuple(dx, in_element_order<T>(partial.sum(0), d).to(gamma.scalar_type()));
  });
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> rms_norm_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& rstd,
                                                     const at::Tensor& gamma) {
  return backward(dy, x, rstd, gamma, at::Tensor());
}

std::tuple<at::Tensor, at::Tensor> rms_norm_backward_add(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& rstd,
                                                         const at::Tensor& gamma, const at::Tensor& dx_residual) {
  return backward(dy, x, rstd, gamma, dx_residual);
}

at::Tensor add(const at::Tensor& x_in, const at::Tensor& y_in) {
  return binary_elementwise(x_in, y_in, Streaming::kLargeCalls,
                            [](auto) { return [](const auto& v) { return std::array{v[0] + v[1]}; }; });
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
