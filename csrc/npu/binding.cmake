# The NPU eager binding (csrc/npu), built wherever torch is importable by AIRFUSE_PYTHON, as are
# airfuse's fused CPU kernels (csrc/cpu/kernels.cmake, included below):
#  - build/libairfuse_npu_emulated.so: the same source without torch_npu, for the emulated "npu"
#    of tests/npu (loaded by the tests only);
#  - build/libairfuse_npu.so: the real binding, compiled against torch_npu's headers and linked
#    against its libtorch_npu.so. On an NPU host that is the installed torch_npu; elsewhere the
#    pinned wheel's SDK in airfuse's offline cache (`python -m airfuse.offline`), where it is
#    built and its symbols checked (tests/npu/test_real_flavour.py) but it cannot be loaded.
# Neither needs CANN: aclnn and aclCreateTensor are resolved at run time (op_api_lookup.cpp).

set(AIRFUSE_TORCH_NPU_ROOT "" CACHE PATH "torch_npu directory with include/ and lib/libtorch_npu.so (default: the installed torch_npu, else the offline cache's SDK)")

# One interpreter start: torch's lib dir, CXX11 ABI flag and include dirs, '|'-separated.
execute_process(
  COMMAND ${AIRFUSE_PYTHON} -c "import torch, torch.utils.cpp_extension as c; print('|'.join([c.library_paths()[0], str(int(torch._C._GLIBCXX_USE_CXX11_ABI)), *c.include_paths()]))"
  OUTPUT_VARIABLE _torch OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc ERROR_QUIET)
if(NOT _torch_rc EQUAL 0)
  list(APPEND AIRFUSE_NOT_BUILT "NPU binding and emulated NPU: ${AIRFUSE_PYTHON} cannot import torch (run `make setup`)")
  return()
endif()
string(REPLACE "|" ";" _torch "${_torch}")
list(GET _torch 0 AIRFUSE_TORCH_LIBDIR)
list(GET _torch 1 _abi)
list(SUBLIST _torch 2 -1 AIRFUSE_TORCH_INCLUDES)

# Compiled once for both flavours: no torch in it.
add_library(airfuse_op_api_lookup OBJECT csrc/npu/op_api_lookup.cpp)
set_target_properties(airfuse_op_api_lookup PROPERTIES POSITION_INDEPENDENT_CODE ON)

# Settings every torch-based target shares (torch 2.13's headers want C++20).
function(airfuse_torch_target target)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  target_compile_options(${target} PRIVATE -O1)
  target_compile_definitions(${target} PRIVATE _GLIBCXX_USE_CXX11_ABI=${_abi})
  target_include_directories(${target} SYSTEM PRIVATE ${AIRFUSE_TORCH_INCLUDES})
  target_link_directories(${target} PRIVATE ${AIRFUSE_TORCH_LIBDIR})
  target_link_libraries(${target} PRIVATE c10 torch_cpu ${CMAKE_DL_LIBS})
endfunction()

include(csrc/cpu/kernels.cmake)

if(AIRFUSE_CHECKS)
  add_library(airfuse_npu_emulated SHARED csrc/npu/binding.cpp $<TARGET_OBJECTS:airfuse_op_api_lookup>)
  airfuse_torch_target(airfuse_npu_emulated)
  list(APPEND AIRFUSE_BUILT "NPU binding, emulated flavour (${CMAKE_BINARY_DIR}/libairfuse_npu_emulated.so)")
endif()

if(NOT AIRFUSE_TORCH_NPU_ROOT)
  execute_process(
    COMMAND ${AIRFUSE_PYTHON} -c "import importlib.util, os, sys; s = importlib.util.find_spec('torch_npu'); sys.path.insert(0, '${CMAKE_SOURCE_DIR}'); from airfuse.offline import fetch; print(os.path.dirname(s.origin) if s else (fetch.torch_npu_sdk_root() if fetch.is_fetched() else ''))"
    OUTPUT_VARIABLE _npu_root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
else()
  set(_npu_root ${AIRFUSE_TORCH_NPU_ROOT})
endif()
if(_npu_root AND EXISTS ${_npu_root}/lib/libtorch_npu.so AND EXISTS ${_npu_root}/include/torch_npu)
  add_library(airfuse_npu SHARED csrc/npu/binding.cpp $<TARGET_OBJECTS:airfuse_op_api_lookup>)
  airfuse_torch_target(airfuse_npu)
  target_compile_definitions(airfuse_npu PRIVATE AIRFUSE_WITH_TORCH_NPU)
  target_include_directories(airfuse_npu SYSTEM PRIVATE ${_npu_root}/include ${_npu_root}/include/third_party/acl/inc)
  target_link_directories(airfuse_npu PRIVATE ${_npu_root}/lib)
  target_link_libraries(airfuse_npu PRIVATE torch_npu)
  list(APPEND AIRFUSE_BUILT "NPU binding, real flavour, against ${_npu_root} (${CMAKE_BINARY_DIR}/libairfuse_npu.so)")
else()
  list(APPEND AIRFUSE_NOT_BUILT "NPU binding, real flavour: no torch_npu installed and no torch_npu SDK in the offline cache (run `python -m airfuse.offline`)")
endif()
