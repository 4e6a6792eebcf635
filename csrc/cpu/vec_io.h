// Shared pieces of airfuse's fused CPU kernels (csrc/cpu): the math type of each storage dtype,
// vector loads and stores that convert on the fly, and the row-parallel driver.
//
// Every kernel reads its inputs in their own dtype, computes in M (float32 for the IR dtypes,
// float64 for the float64 reference dtype) and rounds once when it stores, as the Python math it
// replaced did (airfuse/ops/*.py keeps that math as *_reference). Partial vectors at the end of a
// row go through the same vector code via a padded buffer, so an element's result never depends on
// where it falls in a row (swiglu and silu_mul agree bit for bit, whatever the split).
//
// Compiled once per instruction-set variant (kernels.h): everything here lives in the variant's
// namespace, CPU_CAPABILITY, as at::vec does, so the variants' copies never merge at link time.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
#include <c10/util/Unroll.h>
#include <torch/library.h>

#include <algorithm>
#include <type_traits>

#include "kernels.h"

namespace airfuse::cpu {
inline namespace CPU_CAPABILITY {

// The dtype a kernel computes in for storage dtype T.
template <class T>
using Math = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class M>
using Vec = at::vec::Vectorized<M>;

template <class M>
constexpr int64_t kWidth = Vec<M>::size();

// n (<= kWidth) elements of p as a vector of M; the rest of the lanes are 0.
template <class M, class T>
C10_ALWAYS_INLINE Vec<M> load(const T* p, int64_t n = kWidth<M>) {
  if (n == kWidth<M>) {
    if constexpr (std::is_same_v<T, M>) {
      return Vec<M>::loadu(p);
    } else {
      Vec<float> out;
      at::vec::load_to_float<T>(p, out);
      return out;
    }
  }
  alignas(64) M buffer[kWidth<M>] = {};
  for (int64_t i = 0; i < n; ++i) buffer[i] = static_cast<M>(p[i]);
  return Vec<M>::loadu(buffer);
}

// The first n lanes of v, rounded once to T (round to nearest even, as torch's .to()).
template <class T, class M>
C10_ALWAYS_INLINE void store(T* p, const Vec<M>& v, int64_t n = kWidth<M>) {
  if (n == kWidth<M>) {
    if constexpr (std::is_same_v<T, M>) {
      v.store(p);
#if defined(CPU_CAPABILITY_AVX2)
    } else if constexpr (std::is_same_v<T, at::BFloat16>) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), at::vec::cvtfp32_bf16(__m256(v)));
    } else if constexpr (std::is_same_v<T, at::Half>) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), at::vec::cvtfp32_fp16(__m256(v)));
#elif defined(CPU_CAPABILITY_AVX512)
    } else if constexpr (std::is_same_v<T, at::BFloat16>) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), at::vec::cvtfp32_bf16(__m512(v)));
    } else if constexpr (std::is_same_v<T, at::Half>) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), at::vec::cvtfp32_fp16(__m512(v)));
#endif
    } else {
      at::vec::convert_from_float<T>(v, v).store(p, kWidth<M>);
    }
    return;
  }
  alignas(64) M buffer[kWidth<M>];
  v.store(buffer);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(buffer[i]);
}

// Calls body(start, count) for the vectors of [0, n): full ones, then a partial one. Mark bodies
// C10_ALWAYS_INLINE_ATTRIBUTE: called from two places, GCC would keep them out of line, a call
// per vector with its vectors passed through memory.
template <class M, class Body>
C10_ALWAYS_INLINE void for_each_vector(int64_t n, const Body& body) {
  int64_t i = 0;
  for (; i + kWidth<M> <= n; i += kWidth<M>) body(i, kWidth<M>);
  if (i < n) body(i, n - i);
}

// Work split: enough elements per task that a thread's start-up cost stays small.
inline int64_t grain_in_rows(int64_t row_length) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, row_length));
}

// Calls segment(row, begin, end) for [begin, end) pieces of rows x length elements, in parallel
// over the flat index: a few long rows still use every thread, many short rows are grouped.
template <class Segment>
inline void parallel_segments(int64_t rows, int64_t length, const Segment& segment) {
  at::parallel_for(0, rows * length, at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t row = begin / length;
      const int64_t offset = begin - row * length;
      const int64_t stop = std::min(length, offset + (end - begin));
      segment(row, offset, stop);
      begin += stop - offset;
    }
  });
}

// Runs f with a value of the storage type of dtype (float, Half, BFloat16 or double).
template <class F>
inline auto with_dtype(at::ScalarType dtype, const F& f) {
  switch (dtype) {
    case at::kFloat: return f(float{});
    case at::kHalf: return f(at::Half{});
    case at::kBFloat16: return f(at::BFloat16{});
    case at::kDouble: return f(double{});
    default: TORCH_CHECK(false, "airfuse CPU kernels: unsupported dtype ", dtype, " (the Python checks should have refused it)");
  }
}

// A second floating input that is either in T or in M (e.g. gamma, cos/sin tables): f(T{}) or f(M{}).
template <class T, class F>
inline auto with_same_or_math(at::ScalarType dtype, const F& f) {
  if (dtype == c10::CppTypeToScalarType<T>::value) return f(T{});
  TORCH_CHECK(dtype == c10::CppTypeToScalarType<Math<T>>::value, "airfuse CPU kernels: unsupported dtype ", dtype,
              " for a ", c10::CppTypeToScalarType<T>::value, " input");
  return f(Math<T>{});
}


// An elementwise kernel over rows x length elements: input k of row r starts at in[k] + r * in_row[k]
// (likewise outputs), so one driver serves flat tensors (1 row) and the halves of swiglu's x.
// f maps the input vectors, in M, to the output vectors, in M; stores round once to T.
template <class T, size_t NI, size_t NO, class F>
void elementwise(int64_t rows, int64_t length, std::array<const T*, NI> in, std::array<int64_t, NI> in_row,
                 std::array<T*, NO> out, std::array<int64_t, NO> out_row, const F& f) {
  using M = Math<T>;
  parallel_segments(rows, length, [&](int64_t row, int64_t begin, int64_t end) {
    std::array<const T*, NI> src;
    std::array<T*, NO> dst;
    for (size_t k = 0; k < NI; ++k) src[k] = in[k] + row * in_row[k] + begin;
    for (size_t k = 0; k < NO; ++k) dst[k] = out[k] + row * out_row[k] + begin;
    // Forced inline (with the inputs and outputs unrolled) so that the full vectors' loop has a
    // constant n and keeps everything in registers.
    for_each_vector<M>(end - begin, [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
      std::array<Vec<M>, NI> args;
      c10::ForcedUnroll<NI>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { args[k] = load<M>(src[k] + i, n); });
      const std::array<Vec<M>, NO> results = f(args);
      c10::ForcedUnroll<NO>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { store<T>(dst[k] + i, results[k], n); });
    });
  });
}

// z = f(x, y) elementwise, z of x's shape and dtype: the kernels of the two-input elementwise ops
// (add, silu_mul). x and y have one shape and dtype (the Python checks made sure).
template <class F>
at::Tensor binary_elementwise(const at::Tensor& x_in, const at::Tensor& y_in, const F& f) {
  const at::Tensor x = x_in.contiguous(), y = y_in.contiguous();
  at::Tensor z = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    elementwise<T, 2, 1>(1, x.numel(), {x.const_data_ptr<T>(), y.const_data_ptr<T>()}, {0, 0}, {z.mutable_data_ptr<T>()}, {0}, f);
  });
  return z;
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
