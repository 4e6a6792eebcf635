// The CPU dispatch of torch.ops.airfuse_cpu.*: each op calls the kernels of one instruction-set
// variant (kernels.h), chosen when the library loads and changeable at run time:
//  - by default the variant matching ATen's own choice (at::get_cpu_capability(): what the CPU
//    supports, lowered by ATEN_CPU_CAPABILITY), so airfuse's kernels use the vectors ATen's and
//    inductor's use; the highest variant below it if that one was not built;
//  - torch.ops.airfuse_cpu.set_capability(name) switches (airfuse.cpu_kernels.use_capability),
//    refusing a variant this build lacks or this CPU cannot run.
// torch.ops.airfuse_cpu.stream_bytes(kernel) gives the size from which a kernel's calls stream their
// stores (kernels.h).
// Compiled without any instruction-set flag: it runs on every CPU of the architecture.
#include <ATen/Version.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <string>
#include <vector>

#include "kernels.h"

namespace airfuse::cpu {

namespace DEFAULT {
extern const Kernels kernels;
}
#ifdef AIRFUSE_CPU_AVX2
namespace AVX2 {
extern const Kernels kernels;
}
#endif
#ifdef AIRFUSE_CPU_AVX512
namespace AVX512 {
extern const Kernels kernels;
}
#endif

namespace {

struct Variant {
  const char* name;  // ATen's name of the capability
  const Kernels* kernels;
  bool runs_here;  // this CPU has every instruction the variant was compiled for (kernels.cmake's flags)
};

// Every variant this library has, lowest first.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v{{"DEFAULT", &DEFAULT::kernels, true}};
#ifdef AIRFUSE_CPU_AVX2
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    v.push_back({"AVX2", &AVX2::kernels, avx2});
#endif
#ifdef AIRFUSE_CPU_AVX512
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
    v.push_back({"AVX512", &AVX512::kernels, avx512});
#endif
    return v;
  }();
  return all;
}

// ATen's capability names in its order; one it has that we do not build (e.g. an ARM one) counts as DEFAULT.
int aten_rank(const std::string& name) {
  static const std::vector<std::string> order{"DEFAULT", "AVX2", "AVX512"};
  const auto it = std::find(order.begin(), order.end(), name);
  return it == order.end() ? 0 : static_cast<int>(it - order.begin());
}

const Variant* default_variant() {
  const int wanted = aten_rank(at::get_cpu_capability());
  const Variant* chosen = &variants().front();
  for (const Variant& v : variants()) {
    if (v.runs_here && aten_rank(v.name) <= wanted) chosen = &v;
  }
  return chosen;
}

std::atomic<const Variant*> active{nullptr};

const Variant& current() {
  const Variant* v = active.load(std::memory_order_relaxed);
  if (v == nullptr) {
    v = default_variant();
    active.store(v, std::memory_order_relaxed);
  }
  return *v;
}

std::string capability() {
  return current().name;
}

std::vector<std::string> capabilities() {
  std::vector<std::string> names;
  for (const Variant& v : variants()) {
    if (v.runs_here) names.emplace_back(v.name);
  }
  return names;
}

// The bytes from which `kernel`'s calls stream their stores: the size the kernels themselves use
// (kernels.h's stream_bytes_of).
int64_t stream_bytes(c10::string_view kernel) {
  if (!is_kernel(kernel)) {
    std::vector<std::string> names;
#define AIRFUSE_CPU_KERNEL_NAME(name, result, parameters, arguments) names.emplace_back(#name);
    AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_NAME)
#undef AIRFUSE_CPU_KERNEL_NAME
    TORCH_CHECK(false, "airfuse CPU kernels: stream_bytes: no kernel named '", std::string(kernel), "' (kernels: ", c10::Join(", ", names), ")");
  }
  return stream_bytes_of(kernel);
}

void set_capability(c10::string_view requested) {
  std::string name(requested);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string built;
  for (const Variant& v : variants()) {
    if (v.name == name) {
      TORCH_CHECK(v.runs_here, "airfuse CPU kernels: set_capability: this CPU cannot run the ", v.name,
                  " variant; it can run: ", c10::Join(", ", capabilities()));
      active.store(&v, std::memory_order_relaxed);
      return;
    }
    built += (built.empty() ? "" : ", ") + std::string(v.name);
  }
  TORCH_CHECK(false, "airfuse CPU kernels: set_capability: no variant named '", std::string(requested), "' in this build (",
              built, ")");
}

#define AIRFUSE_CPU_KERNEL_WRAPPER(name, result, parameters, arguments) \
  result name parameters {                                              \
    return current().kernels->name arguments;                          \
  }
AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_WRAPPER)
#undef AIRFUSE_CPU_KERNEL_WRAPPER

}  // namespace

TORCH_LIBRARY_FRAGMENT(airfuse_cpu, m) {
  m.def("capability() -> str", &capability);
  m.def("capabilities() -> str[]", &capabilities);
  m.def("set_capability(str name) -> ()", &set_capability);
  m.def("stream_bytes(str kernel) -> int", &stream_bytes);
}

TORCH_LIBRARY_IMPL(airfuse_cpu, CPU, m) {
#define AIRFUSE_CPU_KERNEL_IMPL(name, result, parameters, arguments) m.impl(#name, &name);
  AIRFUSE_CPU_KERNELS(AIRFUSE_CPU_KERNEL_IMPL)
#undef AIRFUSE_CPU_KERNEL_IMPL
}

}  // namespace airfuse::cpu
