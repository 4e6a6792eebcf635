# airfuse's fused CPU kernels (csrc/cpu): build/libairfuse_cpu.so, the CPU dispatch of the
# torch.ops.airfuse_cpu ops that airfuse's CPU kernels call after their input checks
# (airfuse/cpu_kernels.py). Included from csrc/npu/binding.cmake, which finds torch.

add_library(airfuse_cpu SHARED csrc/cpu/norm.cpp csrc/cpu/act.cpp csrc/cpu/rope.cpp)
airfuse_torch_target(airfuse_cpu)
# -O2 over the shared -O1; no FMA contraction, so the scalar paths round as the Python math does.
target_compile_options(airfuse_cpu PRIVATE -O2 -ffp-contract=off -fvisibility=hidden -fvisibility-inlines-hidden)

# at::vec picks its implementation from CPU_CAPABILITY_*: AVX2 where the build host has it (the
# library is built where it runs, by `make twin`), else the portable one.
include(CheckCXXSourceRuns)
check_cxx_source_runs("int main() { return __builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\") && __builtin_cpu_supports(\"f16c\") ? 0 : 1; }"
  AIRFUSE_HOST_HAS_AVX2)
if(AIRFUSE_HOST_HAS_AVX2)
  target_compile_definitions(airfuse_cpu PRIVATE CPU_CAPABILITY=AVX2 CPU_CAPABILITY_AVX2)
  target_compile_options(airfuse_cpu PRIVATE -mavx2 -mfma -mf16c)
  list(APPEND AIRFUSE_BUILT "fused CPU kernels, AVX2 (${CMAKE_BINARY_DIR}/libairfuse_cpu.so)")
else()
  target_compile_definitions(airfuse_cpu PRIVATE CPU_CAPABILITY=DEFAULT)
  list(APPEND AIRFUSE_BUILT "fused CPU kernels, portable vectors (${CMAKE_BINARY_DIR}/libairfuse_cpu.so)")
endif()
