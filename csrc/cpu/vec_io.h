// Shared pieces of airfuse's fused CPU kernels (csrc/cpu): the math type of each storage dtype,
// vector loads and stores that convert on the fly (the stores streaming past the caches in large
// calls), and the row-parallel driver.
//
// Every kernel reads its inputs in their own dtype, computes in M (float32 for the IR dtypes,
// float64 for the float64 reference dtype) and rounds once when it stores, as the Python math it
// replaced did (airfuse/ops/*.py keeps that math as *_reference). Partial blocks at the end of a
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
#include <array>
#include <concepts>
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

// Streaming (non-temporal) stores. A normal store to a line that is not in cache first reads the
// line (read for ownership), so an output written to memory costs its bytes twice; a streaming
// store writes whole lines to memory through the core's write-combining buffers, without that read
// and without keeping the line in cache. Measured on the development machine (a 2-core VM, 1
// thread, AVX512), a loop c = a + b over float32, best of 15, normal vs streaming stores per
// tensor: 1 MB 125 vs 152 us, 2 MB 231 vs 252, 4 MB 593 vs 479, 8 MB 1197 vs 867, 64 MB 11815 vs
// 8401; below 512 KB (in L2) normal stores were 5-8x faster. So a kernel streams its outputs only
// when the call moves at least kStreamBytes (kernels.h; its inputs and outputs), chosen from
// airfuse's own kernels (below), and then each store streams only a full vector at an address
// aligned to its size (as the streaming instructions require), the rest being normal stores. AVX2
// and AVX512 only: DEFAULT keeps at::vec's portable stores, and float64, the reference dtype,
// normal ones.
//
// kStreamBytes = 96 MB, from streaming / normal time per call (1 thread, AVX512, tokens x 4096,
// 2 shared cores), by bytes a call moves: at 8-48 MB mixed (rms_norm bfloat16 up to 1.30 slower,
// add 0.76-0.99); from 64 MB mostly faster (128 MB and up: 0.67-0.96); and a streamed output is
// out of cache for what reads it next (a sum of it took 1.1-2x as long at 8-24 MB, 0.83-0.93x at
// 64-96 MB). The activations stream in float32 only (act.cpp).
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
constexpr bool kCanStream = true;

C10_ALWAYS_INLINE void store_vector(void* p, const __m128i& v, bool stream) {
  stream ? _mm_stream_si128(static_cast<__m128i*>(p), v) : _mm_storeu_si128(static_cast<__m128i*>(p), v);
}
C10_ALWAYS_INLINE void store_vector(void* p, const __m256i& v, bool stream) {
  stream ? _mm256_stream_si256(static_cast<__m256i*>(p), v) : _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
C10_ALWAYS_INLINE void store_vector(void* p, const __m256& v, bool stream) {
  stream ? _mm256_stream_ps(static_cast<float*>(p), v) : _mm256_storeu_ps(static_cast<float*>(p), v);
}
#if defined(CPU_CAPABILITY_AVX512)
C10_ALWAYS_INLINE void store_vector(void* p, const __m512i& v, bool stream) {
  stream ? _mm512_stream_si512(static_cast<__m512i*>(p), v) : _mm512_storeu_si512(p, v);
}
C10_ALWAYS_INLINE void store_vector(void* p, const __m512& v, bool stream) {
  stream ? _mm512_stream_ps(static_cast<float*>(p), v) : _mm512_storeu_ps(p, v);
}
#endif

// Vector v stored at p: streamed if kStream and p is aligned to the vector's size.
template <bool kStream, class V>
C10_ALWAYS_INLINE void store_vector(void* p, const V& v) {
  store_vector(p, v, kStream && reinterpret_cast<uintptr_t>(p) % sizeof(V) == 0);
}
#else
constexpr bool kCanStream = false;
#endif

// The first n lanes of v, rounded once to T (round to nearest even, as torch's .to()); a full
// vector streamed where kStream allows (above).
template <class T, bool kStream = false, class M>
C10_ALWAYS_INLINE void store(T* p, const Vec<M>& v, int64_t n = kWidth<M>) {
  if (n == kWidth<M>) {
    if constexpr (std::is_same_v<T, double>) {
      v.store(p);
#if defined(CPU_CAPABILITY_AVX2)
    } else if constexpr (std::is_same_v<T, float>) {
      store_vector<kStream>(p, __m256(v));
    } else if constexpr (std::is_same_v<T, at::BFloat16>) {
      store_vector<kStream>(p, at::vec::cvtfp32_bf16(__m256(v)));
    } else if constexpr (std::is_same_v<T, at::Half>) {
      store_vector<kStream>(p, at::vec::cvtfp32_fp16(__m256(v)));
#elif defined(CPU_CAPABILITY_AVX512)
    } else if constexpr (std::is_same_v<T, float>) {
      store_vector<kStream>(p, __m512(v));
    } else if constexpr (std::is_same_v<T, at::BFloat16>) {
      store_vector<kStream>(p, at::vec::cvtfp32_bf16(__m512(v)));
    } else if constexpr (std::is_same_v<T, at::Half>) {
      store_vector<kStream>(p, at::vec::cvtfp32_fp16(__m512(v)));
#endif
    } else if constexpr (std::is_same_v<T, M>) {
      v.store(p);
    } else {
      at::vec::convert_from_float<T>(v, v).store(p, kWidth<M>);
    }
    return;
  }
  alignas(64) M buffer[kWidth<M>];
  v.store(buffer);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(buffer[i]);
}

// Blocks: two vectors of M, the unit in which every kernel reads and writes T (norm.cpp, rope.cpp,
// and act.cpp's and add's through elementwise() below). A block holds kBlock<M> consecutive
// elements; which element sits in which lane is the block order of T, the same for every block
// load and store of T, so elementwise math on blocks is unchanged and only a sum over lanes
// (row_sum) sees the order.
//
// bfloat16 is kept in even/odd order on AVX2 and AVX512: the first vector holds elements 0, 2, 4,
// ..., the second 1, 3, 5, .... Its loads are then a shift and a mask, and its stores round two
// vectors with 16-bit lane ops and no shuffle. at::vec's natural order costs a shuffle per vector
// each way and its rounding store several more instructions (on AVX512 9 a vector: most of a norm
// row's time; on AVX2, per 8 elements, a vpmovzxwd and a shift to load, two shifts, a pack, a
// vpermq and a blend to store, on two of Zen 3's four vector pipes: rope's hot loop had 40 of them
// per 32 outputs, 6 in even/odd order, and took 0.69-0.79x the time in it). Only sums over lanes
// see the order: a row's float32 sum in norm.cpp adds its lanes in another order than natural
// order would. Every other storage type and variant keeps natural order and at::vec's conversions.
template <class M>
using Block = std::array<Vec<M>, 2>;

template <class M>
constexpr int64_t kBlock = 2 * kWidth<M>;

template <class T>
constexpr bool kEvenOddBlocks =
#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
    std::is_same_v<T, at::BFloat16>;
#else
    false;
#endif

#if defined(CPU_CAPABILITY_AVX512)
// 32 bfloat16 to floats in even/odd order: a bfloat16 is the high half of its float.
C10_ALWAYS_INLINE Block<float> load_even_odd(const at::BFloat16* p) {
  const __m512i v = _mm512_loadu_si512(p);
  return {Vec<float>(_mm512_castsi512_ps(_mm512_slli_epi32(v, 16))),
          Vec<float>(_mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(int32_t(0xffff0000)))))};
}

// 32 floats, natural order, to even/odd order (a float input such as gamma beside bfloat16 x).
C10_ALWAYS_INLINE Block<float> load_even_odd(const float* p) {
  const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  return {Vec<float>(_mm512_permutex2var_ps(a, even, b)), Vec<float>(_mm512_permutex2var_ps(a, odd, b))};
}

// Whether this CPU has AVX512-BF16, whose vcvtne2ps2bf16 rounds two vectors of floats to 32
// bfloat16 in one instruction (store_even_odd<kStream, true>). The variant is compiled without
// -mavx512bf16, so the compiler emits it nowhere; store_even_odd writes it in inline assembly, run
// only where this holds.
inline bool has_avx512_bf16() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}

// A block in even/odd order rounded to 32 bfloat16 as at::vec's cvtfp32_bf16 rounds (nearest even,
// NaN to 0xffff), bit for bit, and streamed where kStream allows. The high and low halves of the 32
// floats are gathered into two vectors of 16-bit lanes, then the high half is rounded up where
// low + (high & 1) > 0x8000. With kNative (only where has_avx512_bf16()), a block holding neither
// NaN nor denormal is rounded by vcvtne2ps2bf16 instead: its rounding to nearest even is the same
// on every other float (checked over all 2^32), but it flushes denormals to 0 and keeps NaN's
// payload. Its 16-bit lanes (the even elements' results, then the odd ones') are put back in
// memory order by one vpermw. 6 instructions a block (its test and the store included) against 11:
// gelu bfloat16 on an AMD EPYC (Zen 5, 1 thread, 128 and 2048 tokens x 4096, in one process) took
// 0.80x the time, its backward 0.85x, silu_mul, swiglu and their backwards 0.87-0.95x.
template <bool kStream = false, bool kNative = false>
C10_ALWAYS_INLINE void store_even_odd(at::BFloat16* p, const Block<float>& b) {
  if constexpr (kNative) {
    // 0xA1: quiet NaN, denormal, signalling NaN.
    // (Values, not b's elements, as the asm's operands: with those GCC stored every block to the
    // stack; gelu bfloat16 took 1.02-1.03x the time, swiglu_backward at 128 tokens 1.10x.)
    const __m512 even = b[0], odd = b[1];
    if (C10_LIKELY((_mm512_fpclass_ps_mask(even, 0xA1) | _mm512_fpclass_ps_mask(odd, 0xA1)) == 0)) {
      __m512i rounded;  // AT&T order: the low half from the first operand (even), the high from the second
      asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(rounded) : "v"(odd), "v"(even));
      const __m512i memory_order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                                    21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
      store_vector<kStream>(p, _mm512_permutexvar_epi16(memory_order, rounded));
      return;
    }
  }
  const __m512i even = _mm512_castps_si512(b[0]), odd = _mm512_castps_si512(b[1]);
  const __m512i high_words = _mm512_set1_epi32(int32_t(0xffff0000));
  if (C10_UNLIKELY(_mm512_cmp_ps_mask(b[0], b[1], _CMP_UNORD_Q) != 0)) {
    // A NaN in the block: at::vec's per-vector rounding, whose results sit in the high halves.
    const auto rounded = [&](const __m512& v) {
      const __m512i i = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(i, 16), _mm512_set1_epi32(1));
      const __m512i r = _mm512_add_epi32(_mm512_add_epi32(i, _mm512_set1_epi32(0x7fff)), lsb);
      return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(-1));
    };
    // 0xCA = a ? b : c bitwise: the high word from the odd element, the low from the even.
    store_vector<kStream>(p, _mm512_ternarylogic_epi32(high_words, rounded(b[1]), _mm512_srli_epi32(rounded(b[0]), 16), 0xCA));
    return;
  }
  const __m512i high = _mm512_ternarylogic_epi32(high_words, odd, _mm512_srli_epi32(even, 16), 0xCA);
  const __m512i low = _mm512_ternarylogic_epi32(high_words, _mm512_slli_epi32(odd, 16), even, 0xCA);
  const __m512i one = _mm512_set1_epi16(1);
  const __mmask32 up = _mm512_cmpgt_epu16_mask(_mm512_adds_epu16(low, _mm512_and_si512(high, one)), _mm512_set1_epi16(int16_t(0x8000)));
  store_vector<kStream>(p, _mm512_mask_add_epi16(high, up, high, one));
}
#elif defined(CPU_CAPABILITY_AVX2)
// As AVX512's (above), with 16 bfloat16 per block.
C10_ALWAYS_INLINE Block<float> load_even_odd(const at::BFloat16* p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return {Vec<float>(_mm256_castsi256_ps(_mm256_slli_epi32(v, 16))),
          Vec<float>(_mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(int32_t(0xffff0000)))))};
}

C10_ALWAYS_INLINE Block<float> load_even_odd(const float* p) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  // Within each 128-bit lane: a's two evens (odds), then b's; then the 64-bit pairs put in order.
  const auto ordered = [](const __m256& v) C10_ALWAYS_INLINE_ATTRIBUTE {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  return {Vec<float>(ordered(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)))),
          Vec<float>(ordered(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))))};
}

// AVX2 has no unsigned 16-bit compare: low + (high & 1) > 0x8000 is tested as a signed compare
// with the top bits flipped, and where it holds the rounded high word is high - (-1).
template <bool kStream = false>
C10_ALWAYS_INLINE void store_even_odd(at::BFloat16* p, const Block<float>& b) {
  const __m256i even = _mm256_castps_si256(b[0]), odd = _mm256_castps_si256(b[1]);
  const __m256i high_words = _mm256_set1_epi32(int32_t(0xffff0000));
  if (C10_UNLIKELY(_mm256_movemask_ps(_mm256_cmp_ps(b[0], b[1], _CMP_UNORD_Q)) != 0)) {
    // A NaN in the block: at::vec's per-vector rounding, whose results sit in the high halves.
    const auto rounded = [&](const __m256& v) {
      const __m256i i = _mm256_castps_si256(v);
      const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(i, 16), _mm256_set1_epi32(1));
      const __m256i r = _mm256_add_epi32(_mm256_add_epi32(i, _mm256_set1_epi32(0x7fff)), lsb);
      return _mm256_blendv_epi8(r, _mm256_set1_epi32(-1), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    };
    store_vector<kStream>(p, _mm256_or_si256(_mm256_and_si256(high_words, rounded(b[1])), _mm256_srli_epi32(rounded(b[0]), 16)));
    return;
  }
  const __m256i high = _mm256_or_si256(_mm256_and_si256(high_words, odd), _mm256_srli_epi32(even, 16));
  const __m256i low = _mm256_or_si256(_mm256_slli_epi32(odd, 16), _mm256_andnot_si256(high_words, even));
  const __m256i sum = _mm256_adds_epu16(low, _mm256_and_si256(high, _mm256_set1_epi16(1)));
  const __m256i up = _mm256_cmpgt_epi16(_mm256_xor_si256(sum, _mm256_set1_epi16(int16_t(0x8000))), _mm256_setzero_si256());
  store_vector<kStream>(p, _mm256_sub_epi16(high, up));
}
#endif

// n (<= kBlock) elements of p, of storage type S, as a block in T's order (kEvenOdd: even/odd, as
// kEvenOddBlocks<T> gives it); the rest of the lanes 0.
template <class T, class M, bool kEvenOdd = kEvenOddBlocks<T>, class S>
C10_ALWAYS_INLINE Block<M> load_block(const S* p, int64_t n = kBlock<M>) {
  if constexpr (kEvenOdd) {
    static_assert(std::is_same_v<M, float> && (std::is_same_v<S, T> || std::is_same_v<S, float>));
    if (n == kBlock<M>) return load_even_odd(p);
    alignas(64) S buffer[kBlock<M>] = {};
    std::copy(p, p + n, buffer);
    return load_even_odd(buffer);
  } else {
    return {load<M>(p, std::min(n, kWidth<M>)), load<M>(p + kWidth<M>, std::max<int64_t>(0, n - kWidth<M>))};
  }
}

// Whether a kernel storing T can round its blocks with vcvtne2ps2bf16 (store_even_odd's kNative),
// where has_avx512_bf16().
template <class T>
constexpr bool kCanRoundNatively =
#if defined(CPU_CAPABILITY_AVX512)
    std::is_same_v<T, at::BFloat16>;
#else
    false;
#endif

// Calls f(native) with native = std::true_type where this CPU rounds T's blocks natively
// (kCanRoundNatively<T> and has_avx512_bf16()), else std::false_type: the kNative a kernel then
// passes to store_block. Every kernel storing blocks chooses here, so that one run-time test serves them all.
template <class T, class F>
inline auto with_native_rounding(const F& f) {
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (kCanRoundNatively<T>) {
    if (has_avx512_bf16()) return f(std::true_type{});
  }
#endif
  return f(std::false_type{});
}

// The first n lanes of block b, in T's order (kEvenOdd as load_block's), rounded once to T; its
// full vectors streamed where kStream allows (above), its full blocks rounded by vcvtne2ps2bf16
// with kNative (kCanRoundNatively<T> only, in even/odd order).
template <class T, bool kStream = false, bool kEvenOdd = kEvenOddBlocks<T>, bool kNative = false, class M>
C10_ALWAYS_INLINE void store_block(T* p, const Block<M>& b, int64_t n = kBlock<M>) {
  static_assert(!kNative || (kCanRoundNatively<T> && kEvenOdd));
  if constexpr (kEvenOdd) {
#if defined(CPU_CAPABILITY_AVX512)
    if (n == kBlock<M>) return store_even_odd<kStream, kNative>(p, b);
#else
    if (n == kBlock<M>) return store_even_odd<kStream>(p, b);
#endif
    alignas(64) T buffer[kBlock<M>];
    store_even_odd(buffer, b);
    std::copy(buffer, buffer + n, p);
  } else {
    store<T, kStream>(p, b[0], std::min(n, kWidth<M>));
    if (n > kWidth<M>) store<T, kStream>(p + kWidth<M>, b[1], n - kWidth<M>);
  }
}

// f applied lane-vector by lane-vector to blocks: f(a[k], b[k], ...) for k = 0, 1.
template <class F, class... B>
C10_ALWAYS_INLINE auto each(const F& f, const B&... blocks) {
  using M = typename std::decay_t<decltype(f(blocks[0]...))>::value_type;
  return Block<M>{f(blocks[0]...), f(blocks[1]...)};
}

// Calls body(start, count) for the blocks of [0, n): full ones, then a partial one. Mark bodies
// C10_ALWAYS_INLINE_ATTRIBUTE: called from two places, GCC would keep them out of line, a call
// per block with its vectors passed through memory.
template <class M, class Body>
C10_ALWAYS_INLINE void for_each_block(int64_t n, const Body& body) {
  int64_t i = 0;
  for (; i + kBlock<M> <= n; i += kBlock<M>) body(i, kBlock<M>);
  if (i < n) body(i, n - i);
}

// Asks for the cache lines of kBlock<M> elements of p (of a row a kernel reads next, or with
// kWrite, writes next) to be brought into L1 while the current row is computed from cache: a row's
// second pass does no loads from memory, so without it the next row's loads only start when that
// pass ends, and its stores wait for their lines then. kWrite is for lines that normal stores
// write: prefetching a line a streaming store writes reads what streaming avoids reading (measured:
// rms_norm, rms_norm_backward, add_rms_norm and rope at 2048 and 8192 tokens x 4096 took 1.04-2.2x
// their normal-store time streaming with the write prefetch, 0.67-1.09x without it).
template <bool kWrite = false>
C10_ALWAYS_INLINE void prefetch_bytes(const void* p, int64_t bytes) {
  constexpr int64_t kLine = 64;
  for (int64_t b = 0; b < bytes; b += kLine) __builtin_prefetch(static_cast<const char*>(p) + b, kWrite, 3);
}

template <class M, bool kWrite = false, class T>
C10_ALWAYS_INLINE void prefetch_block(const T* p) {
  prefetch_bytes<kWrite>(p, kBlock<M> * static_cast<int64_t>(sizeof(T)));
}

// Work split: enough elements per task that a thread's start-up cost stays small.
inline int64_t grain_in_rows(int64_t row_length) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, row_length));
}

// at::parallel_for(begin, end, grain, f) for a kernel that stores with kStream (store_block<T,
// kStream>): f(b, e, stream) gets stream = std::bool_constant<kStream>, true when the call moves
// at least stream_from (bytes: its inputs and outputs; kStreamBytes, or for a kernel with a size of
// its own stream_bytes_of(its name), kernels.h) and this variant can stream.
template <class F>
inline void parallel_for_streaming(int64_t begin, int64_t end, int64_t grain, int64_t bytes, const F& f,
                                   int64_t stream_from = kStreamBytes) {
  const auto run = [&](auto stream) {
    at::parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
      f(b, e, stream);
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
      // Streaming stores are weakly ordered: they may still sit in write-combining buffers when a
      // later ordinary store (the one telling the calling thread this task is done) is seen by
      // others. The fence makes them visible first, so whoever reads the output sees them.
      if constexpr (decltype(stream)::value) _mm_sfence();
#endif
    });
  };
  // (std::bool_constant<kCanStream>: DEFAULT never instantiates a streaming kernel.)
  if (kCanStream && bytes >= stream_from) return run(std::bool_constant<kCanStream>{});
  run(std::false_type{});
}

// Calls segment(row, begin, end, stream) for [begin, end) pieces of rows x length elements, in
// parallel over the flat index (a few long rows still use every thread, many short rows are
// grouped), stream as parallel_for_streaming gives it for a call moving bytes.
template <class Segment>
inline void parallel_segments(int64_t rows, int64_t length, int64_t bytes, const Segment& segment) {
  parallel_for_streaming(0, rows * length, at::internal::GRAIN_SIZE, bytes, [&](int64_t begin, int64_t end, auto stream) {
    while (begin < end) {
      const int64_t row = begin / length;
      const int64_t offset = begin - row * length;
      const int64_t stop = std::min(length, offset + (end - begin));
      segment(row, offset, stop, stream);
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


// How far ahead of its blocks elementwise() prefetches its inputs and outputs, in bytes. Without
// it, the hardware's prefetchers alone left the activations well short of memory's speed on the
// development machine (1 thread, AVX512, tokens x 4096, in one process): with it, 4 KB ahead,
// gelu bfloat16 took 0.66-0.70x its time at 2048 and 8192 tokens (forward and backward), float32
// 0.85-0.86x; silu_mul and swiglu 0.60-0.89x (bfloat16) and 0.79-0.92x (float32). 8 and 16 KB
// ahead did no better; the inputs alone, less (gelu bfloat16 0.70-0.83x).
constexpr int64_t kElementwiseAhead = 4096;

// Whether an elementwise kernel's large calls stream their stores (parallel_for_streaming).
enum class Streaming { kLargeCalls, kNever };

// An elementwise kernel's math in two passes: f.first(inputs) -> one vector, f.second(inputs, that
// vector) -> the outputs, for math M (HasTwoPasses). See elementwise().
template <class F, class M, size_t NI>
concept HasTwoPasses = requires(const F& f, const std::array<Vec<M>, NI>& in) {
  { f.first(in) } -> std::convertible_to<Vec<M>>;
  f.second(in, f.first(in));
};

// The blocks a two-pass kernel runs each pass over before the other (elementwise()).
constexpr int64_t kPassBlocks = 16;

// Base of an elementwise() functor F that has a one-pass form, F::one(inputs), and for some M two
// passes (HasTwoPasses): called, it gives second(in, first(in)) where F has them, so the blocks
// elementwise() runs in one pass get the bits the two passes give.
template <class F>
struct OneOrTwoPasses {
  template <class M, size_t NI>
  C10_ALWAYS_INLINE auto operator()(const std::array<Vec<M>, NI>& in) const {
    const F& f = static_cast<const F&>(*this);
    if constexpr (HasTwoPasses<F, M, NI>) {
      return f.second(in, f.first(in));
    } else {
      return f.one(in);
    }
  }
};

// An elementwise kernel over rows x length elements: input k of row r starts at in[k] + r * in_row[k]
// (likewise outputs), so one driver serves flat tensors (1 row) and the halves of swiglu's x.
// f maps the input vectors, in M, to the output vectors, in M; stores round once to T. Inputs are
// read and outputs written in blocks (T's block order, cheaper conversions for bfloat16 on AVX512),
// and f is applied to each of a block's two vectors: f sees lanes, never positions, so an
// element's result is the same in any block order.
//
// Two passes (HasTwoPasses<F, M, NI>): over kPassBlocks blocks at a time, the first pass computes
// f.first of each block into a buffer (in L1), the second reads the inputs again and computes
// f.second; the rest of a segment goes through f itself, which must equal second(in, first(in))
// bit for bit. (Why: a long chain of dependent vector operations per block fills the core's
// schedulers with operations waiting for their inputs, so few blocks overlap; two shorter chains
// let more overlap. On an AMD EPYC (Zen 5, 1 thread, in one process against the same math in one
// pass), gelu, silu_mul, swiglu and their backwards in bfloat16 took 0.74-0.82x the time at 128
// tokens, 0.83-0.97x at 2048 and 8192, where memory takes a larger share.)
template <class T, size_t NI, size_t NO, class F>
void elementwise(int64_t rows, int64_t length, std::array<const T*, NI> in, std::array<int64_t, NI> in_row,
                 std::array<T*, NO> out, std::array<int64_t, NO> out_row, Streaming streaming, const F& f) {
  using M = Math<T>;
  // The bytes the call moves (none counted for a kernel that never streams).
  const int64_t bytes = streaming == Streaming::kNever ? 0 : rows * length * static_cast<int64_t>((NI + NO) * sizeof(T));
  with_native_rounding<T>([&](auto native) {
    parallel_segments(rows, length, bytes, [&](int64_t row, int64_t begin, int64_t end, auto stream) {
      constexpr bool kStream = decltype(stream)::value;
      std::array<const T*, NI> src;
      std::array<T*, NO> dst;
      for (size_t k = 0; k < NI; ++k) src[k] = in[k] + row * in_row[k] + begin;
      for (size_t k = 0; k < NO; ++k) dst[k] = out[k] + row * out_row[k] + begin;
      // Each input's and output's line kElementwiseAhead bytes on (prefetch_block; an output only
      // where normal stores write it), asked for while the block at i computes.
      constexpr int64_t kAhead = kElementwiseAhead / int64_t(sizeof(T));
      const auto prefetch_inputs = [&](int64_t i) C10_ALWAYS_INLINE_ATTRIBUTE {
        c10::ForcedUnroll<NI>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { prefetch_block<M>(src[k] + i + kAhead); });
      };
      const auto prefetch_outputs = [&](int64_t i) C10_ALWAYS_INLINE_ATTRIBUTE {
        if constexpr (!kStream) {
          c10::ForcedUnroll<NO>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { prefetch_block<M, true>(dst[k] + i + kAhead); });
        }
      };
      const auto load = [&](int64_t i, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
        std::array<Block<M>, NI> args;
        c10::ForcedUnroll<NI>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { args[k] = load_block<T, M>(src[k] + i, n); });
        return args;
      };
      // The input vectors of lanes v of a block's inputs.
      const auto lanes = [](const std::array<Block<M>, NI>& args, auto v) C10_ALWAYS_INLINE_ATTRIBUTE {
        std::array<Vec<M>, NI> vectors;
        c10::ForcedUnroll<NI>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { vectors[k] = args[k][v]; });
        return vectors;
      };
      // The outputs of a block, from output_of(input vectors, v) for v = 0, 1, stored.
      const auto store = [&](int64_t i, int64_t n, const auto& output_of) C10_ALWAYS_INLINE_ATTRIBUTE {
        std::array<Block<M>, NO> results;
        c10::ForcedUnroll<2>{}([&](auto v) C10_ALWAYS_INLINE_ATTRIBUTE {
          const std::array<Vec<M>, NO> outputs = output_of(v);
          c10::ForcedUnroll<NO>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE { results[k][v] = outputs[k]; });
        });
        c10::ForcedUnroll<NO>{}([&](auto k) C10_ALWAYS_INLINE_ATTRIBUTE {
          store_block<T, kStream, kEvenOddBlocks<T>, decltype(native)::value>(dst[k] + i, results[k], n);
        });
      };
      int64_t done = 0;
      if constexpr (HasTwoPasses<F, M, NI>) {
        constexpr int64_t kPass = kPassBlocks * kBlock<M>;
        std::array<Block<M>, kPassBlocks> firsts;
        for (; done + kPass <= end - begin; done += kPass) {
          for (int64_t b = 0; b < kPassBlocks; ++b) {
            const int64_t i = done + b * kBlock<M>;
            prefetch_inputs(i);
            const auto args = load(i, kBlock<M>);
            c10::ForcedUnroll<2>{}([&](auto v) C10_ALWAYS_INLINE_ATTRIBUTE { firsts[b][v] = f.first(lanes(args, v)); });
          }
          for (int64_t b = 0; b < kPassBlocks; ++b) {
            const int64_t i = done + b * kBlock<M>;
            prefetch_outputs(i);
            const auto args = load(i, kBlock<M>);
            store(i, kBlock<M>, [&](auto v) C10_ALWAYS_INLINE_ATTRIBUTE { return f.second(lanes(args, v), firsts[b][v]); });
          }
        }
      }
      // Forced inline (with the inputs, outputs and a block's two vectors unrolled) so that the full
      // blocks' loop has a constant n and keeps everything in registers.
      for_each_block<M>(end - begin - done, [&](int64_t j, int64_t n) C10_ALWAYS_INLINE_ATTRIBUTE {
        const int64_t i = done + j;
        prefetch_inputs(i);
        prefetch_outputs(i);
        const auto args = load(i, n);
        store(i, n, [&](auto v) C10_ALWAYS_INLINE_ATTRIBUTE { return f(lanes(args, v)); });
      });
    });
  });
}

// z = f(x, y) elementwise, z of x's shape and dtype: the kernels of the two-input elementwise ops
// (add, silu_mul), f = f_of(T{}) for x's storage type T. x and y have one shape and dtype (the
// Python checks made sure).
template <class FOf>
at::Tensor binary_elementwise(const at::Tensor& x_in, const at::Tensor& y_in, Streaming streaming, const FOf& f_of) {
  const at::Tensor x = x_in.contiguous(), y = y_in.contiguous();
  at::Tensor z = at::empty(x.sizes(), x.options());
  with_dtype(x.scalar_type(), [&](auto t) {
    using T = decltype(t);
    elementwise<T, 2, 1>(1, x.numel(), {x.const_data_ptr<T>(), y.const_data_ptr<T>()}, {0, 0}, {z.mutable_data_ptr<T>()}, {0}, streaming,
                         f_of(t));
  });
  return z;
}

}  // namespace CPU_CAPABILITY
}  // namespace airfuse::cpu
