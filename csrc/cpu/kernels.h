// The kernels of csrc/cpu, as every instruction-set variant provides them. norm.cpp, act.cpp and
// rope.cpp are compiled once per variant (kernels.cmake), each time with CPU_CAPABILITY set to the
// variant's name (DEFAULT, AVX2, AVX512, as ATen names them), which puts their functions, and
// at::vec's, in a namespace of that name; dispatch.cpp registers one wrapper per kernel that calls
// the variant chosen at run time.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <stdexcept>
#include <string_view>
#include <tuple>

namespace airfuse::cpu {

using Tensor = at::Tensor;
using Tensors2 = std::tuple<at::Tensor, at::Tensor>;
using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// X(name, result, parameters, arguments) for every kernel; name is its torch.ops.airfuse_cpu name.
#define AIRFUSE_CPU_KERNELS(X)                                                                                           \
  X(rms_norm, Tensors2, (const Tensor& x, const Tensor& gamma, double epsilon), (x, gamma, epsilon))                     \
  X(rms_norm_backward, Tensors2, (const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& gamma),           \
    (dy, x, rstd, gamma))                                                                                                \
  X(rms_norm_backward_add, Tensors2,                                                                                     \
    (const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& gamma, const Tensor& dx_residual),             \
    (dy, x, rstd, gamma, dx_residual))                                                                                   \
  X(add_rms_norm, Tensors3, (const Tensor& x1, const Tensor& x2, const Tensor& gamma, double epsilon),                   \
    (x1, x2, gamma, epsilon))                                                                                            \
  X(add, Tensor, (const Tensor& x, const Tensor& y), (x, y))                                                             \
  X(silu_mul, Tensor, (const Tensor& a, const Tensor& b), (a, b))                                                        \
  X(silu_mul_backward, Tensors2, (const Tensor& dy, const Tensor& a, const Tensor& b), (dy, a, b))                       \
  X(swiglu, Tensor, (const Tensor& x, int64_t dim), (x, dim))                                                            \
  X(swiglu_backward, Tensor, (const Tensor& dy, const Tensor& x, int64_t dim), (dy, x, dim))                             \
  X(gelu, Tensor, (const Tensor& x, c10::string_view approximate), (x, approximate))                                     \
  X(gelu_backward, Tensor, (const Tensor& dy, const Tensor& x, c10::string_view approximate), (dy, x, approximate))      \
  X(rope, Tensor, (const Tensor& x, const Tensor& cos, const Tensor& sin, c10::string_view mode), (x, cos, sin, mode))    \
  X(rope_backward, Tensor, (const Tensor& dy, const Tensor& cos, const Tensor& sin, c10::string_view mode),              \
    (dy, cos, sin, mode))

// The bytes a call moves (its inputs and outputs) from which it writes its outputs with streaming
// stores, on the variants that have them (vec_io.h, where the measurements are): kStreamBytes, or
// the kernel's own size in kKernelStreamBytes (below). Here, outside the variants, for
// torch.ops.airfuse_cpu.stream_bytes(kernel) (the tests size their calls from it).
constexpr int64_t kStreamBytes = int64_t(96) << 20;
// rope streams from 64 MB: its rows hop between heads (rope.cpp's tiles), and
// at 64 MB (float32 2048 tokens, bfloat16 4096, x [1, 32, tokens, 128]) streaming took 0.72-0.77 of
// the normal stores' time (vec_io.h), where rms_norm's rows lost; measured again (1 thread, in
// one process, forward and backward): 0.65-0.82, and 0.72-0.74 with old and new calls alternating
// (float32 2048). At 32 MB (bfloat16 2048) it lost as often as it won; the forward, timed in a loop
// as cpu_ops.py does (its output block freed and handed back, in cache, each call), took 1.3-1.4x as
// long streaming (cpu_ops.py --ops rope --clock cpu, load 15-25: 2218-2502 vs 1667-1740 us).
constexpr int64_t kRopeStreamBytes = int64_t(64) << 20;
// rope_backward streams from 32 MB (bfloat16 2048 tokens): its dx goes to whichever block the
// allocator hands out while the forward's activations are still alive (as in training, and in
// cpu_ops.py, which keeps the forward's output until the next forward), a block not just written,
// so a normal store first reads each line from memory. Streaming / normal at 32 MB, 1 thread,
// through autograd after a forward as cpu_ops.py times it: 0.79 (bfloat16 2048) and 0.74 (float32
// 1024) in one process, the two alternating each round (21-30 rounds, thread CPU time, load
// 40-50); cpu_ops.py --ops rope --clock cpu rows (load 15-25): 2543-2834 vs 2714-3490 us. Called
// in a loop (dx's block freed and handed back each call) 0.92 and 0.99 at load 40-50. At 16 MB
// (bfloat16 1024) after a forward 0.77, in a loop 1.02: not taken, a streamed dx being out of
// cache for the op that reads it next.
constexpr int64_t kRopeBackwardStreamBytes = int64_t(32) << 20;

// rms_norm_backward and rms_norm_backward_add stream from 48 MB (rms_norm_backward at bfloat16
// 2048 x 4096), as rope_backward from 32 MB (above) for the same reason, dx's block rarely being in
// cache. Chosen at 64 MB on a Zen 3 host (AVX2; 1 thread, through autograd, alternating each round
// in one process, thread CPU time, load 40-50): streaming / normal at bfloat16 2048, 64 MB
// (rms_norm_backward_add) 0.83-0.91; 48 MB (rms_norm_backward) 0.99 after a forward and 1.04 in a
// loop; 1024 (24 MB) 1.07 and 1.03, rms_norm_backward_add 1024 (32 MB) 1.00 and 1.08. Lowered to
// 48 MB on a Zen 5 host (AVX512, L3 32 MB, idle): cpu_ops.py --dtypes bfloat16 --clock cpu, the
// two builds alternating (4 runs each), rms_norm_backward bfloat16 2048 1584-1936 us streaming
// against 2324-2445 normal (0.65-0.83). One size serves both variants: on the Zen 3 host 48 MB
// broke even (above).
constexpr int64_t kNormBackwardStreamBytes = int64_t(48) << 20;

// add_rms_norm streams its y from 64 MB (bfloat16 2048 x 4096: x1, x2, x and y; x, read back at
// once, never streams): on the Zen 5 host as above, 1736-2000 us streaming against 2303-2493
// normal (0.70-0.87), where the 96 MB of the other kernels kept it normal. (Not measured on an
// AVX2 host, where the same size applies.)
constexpr int64_t kAddRmsNormStreamBytes = int64_t(64) << 20;

// The kernels that stream from a size of their own, and that size: the one table both the kernels
// (through stream_bytes_of, as parallel_for_streaming's stream_from) and
// torch.ops.airfuse_cpu.stream_bytes (dispatch.cpp) read, so the two cannot drift.
struct KernelStreamBytes {
  std::string_view kernel;  // its AIRFUSE_CPU_KERNELS name
  int64_t bytes;
};
inline constexpr KernelStreamBytes kKernelStreamBytes[] = {
    {"rope", kRopeStreamBytes},
    {"rope_backward", kRopeBackwardStreamBytes},
    {"rms_norm_backward", kNormBackwardStreamBytes},
    {"rms_norm_backward_add", kNormBackwardStreamBytes},
    {"add_rms_norm", kAddRmsNormStreamBytes},
};

constexpr bool is_kernel(std::string_view name) {
#define AIRFUSE_CPU_KERNEL_IS(kernel, result, parameters, arguments) \
  if (name == #kernel) return true;
  AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_IS)
#undef AIRFUSE_CPU_KERNEL_IS
  return false;
}

static_assert([] {
  for (const KernelStreamBytes& entry : kKernelStreamBytes) {
    if (!is_kernel(entry.kernel)) return false;
  }
  return true;
}(), "kKernelStreamBytes names a kernel AIRFUSE_CPU_KERNELS lacks");

// The size from which `kernel`'s calls stream: its kKernelStreamBytes entry, else kStreamBytes. An
// unknown name throws, which in a constant expression (the kernels' use) fails the build.
constexpr int64_t stream_bytes_of(std::string_view kernel) {
  if (!is_kernel(kernel)) throw std::invalid_argument("airfuse CPU kernels: stream_bytes_of: unknown kernel");
  for (const KernelStreamBytes& entry : kKernelStreamBytes) {
    if (entry.kernel == kernel) return entry.bytes;
  }
  return kStreamBytes;
}

// One variant's kernels.
struct Kernels {
#define AIRFUSE_CPU_KERNEL_POINTER(name, result, parameters, arguments) result(*name) parameters;
  AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_POINTER)
#undef AIRFUSE_CPU_KERNEL_POINTER
};

#ifdef CPU_CAPABILITY
// In a variant's build: its kernels (defined in norm.cpp, act.cpp, rope.cpp) and their table (table.cpp).
inline namespace CPU_CAPABILITY {
#define AIRFUSE_CPU_KERNEL_DECLARATION(name, result, parameters, arguments) result name parameters;
AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_DECLARATION)
#undef AIRFUSE_CPU_KERNEL_DECLARATION
extern const Kernels kernels;
}  // namespace CPU_CAPABILITY
#endif

}  // namespace airfuse::cpu
