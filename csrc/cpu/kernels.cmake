# airfuse's fused CPU kernels (csrc/cpu): build/libairfuse_cpu.so, the CPU dispatch of the
# torch.ops.airfuse_cpu ops that airfuse's CPU kernels call after their input checks
# (airfuse/cpu_kernels.py). Included from csrc/npu/binding.cmake, which finds torch.
#
# As ATen does for its CPU kernels, the kernel sources are compiled once per instruction-set
# variant with ATen's CPU_CAPABILITY macros and flags: DEFAULT (portable at::vec) everywhere, AVX2
# and AVX512 on x86-64. All go into one library whatever the build host has; dispatch.cpp,
# compiled without those flags, picks the variant at run time from the CPU that loads it.

set(_kernel_sources csrc/cpu/norm.cpp csrc/cpu/act.cpp csrc/cpu/rope.cpp csrc/cpu/table.cpp)
# ATen's flags per capability (its cmake/Codegen.cmake), with F16C for AVX2's float16 conversions.
set(_variants DEFAULT)
set(_flags_DEFAULT "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  list(APPEND _variants AVX2 AVX512)
  set(_flags_AVX2 -mavx2 -mfma -mf16c)
  set(_flags_AVX512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma)
endif()

include(CheckCXXCompilerFlag)
set(_variant_objects)
set(_variant_names)
foreach(_variant IN LISTS _variants)
  string(REPLACE ";" " " _joined "${_flags_${_variant}}")
  if(_joined)
    check_cxx_compiler_flag("${_joined}" AIRFUSE_CXX_HAS_${_variant})
    if(NOT AIRFUSE_CXX_HAS_${_variant})
      continue()
    endif()
  endif()
  add_library(airfuse_cpu_${_variant} OBJECT ${_kernel_sources})
  airfuse_torch_target(airfuse_cpu_${_variant})
  set_target_properties(airfuse_cpu_${_variant} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # -O2 over the shared -O1; no FMA contraction, so the scalar paths round as the Python math does.
  target_compile_options(airfuse_cpu_${_variant} PRIVATE -O2 -ffp-contract=off -fvisibility=hidden -fvisibility-inlines-hidden
                         ${_flags_${_variant}})
  target_compile_definitions(airfuse_cpu_${_variant} PRIVATE CPU_CAPABILITY=${_variant} CPU_CAPABILITY_${_variant})
  list(APPEND _variant_objects $<TARGET_OBJECTS:airfuse_cpu_${_variant}>)
  list(APPEND _variant_names ${_variant})
endforeach()

# dispatch.cpp and the DEFAULT objects come first: where the variants share an inline function
# the linker keeps one copy (the first), and that one must run on every CPU.
add_library(airfuse_cpu SHARED csrc/cpu/dispatch.cpp ${_variant_objects})
airfuse_torch_target(airfuse_cpu)
target_compile_options(airfuse_cpu PRIVATE -O2 -fvisibility=hidden -fvisibility-inlines-hidden)
foreach(_variant IN LISTS _variant_names)
  target_compile_definitions(airfuse_cpu PRIVATE AIRFUSE_CPU_${_variant})
endforeach()
string(REPLACE ";" ", " _variant_list "${_variant_names}")
list(APPEND AIRFUSE_BUILT "fused CPU kernels, ${_variant_list} variants (${CMAKE_BINARY_DIR}/libairfuse_cpu.so)")
