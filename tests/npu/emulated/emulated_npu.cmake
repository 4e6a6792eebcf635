# The emulated NPU of tests/npu, under build/emulated_npu/ (included after csrc/npu/binding.cmake):
#  - libemulated_npu_backend.so: the "npu" PrivateUse1 backend on host memory (backend.cpp);
#  - lib64/libopapi.so: stand-in for CANN's aclTensor API (opapi.cpp);
#  - vendors/customize/op_api/lib/libcust_opapi.so: stand-in for airfuse's CANN package, running
#    op_host's tiling and the Ascend C kernels on the twin (cust_opapi.cpp). No SONAME, so copies
#    of it in other directories load as distinct libraries (the lookup-order tests rely on it).
if(NOT TARGET airfuse_npu_emulated)
  return()
endif()
set(_emu ${CMAKE_BINARY_DIR}/emulated_npu)

add_library(emulated_npu_backend SHARED tests/npu/emulated/backend.cpp)
airfuse_torch_target(emulated_npu_backend)
set_target_properties(emulated_npu_backend PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_emu})

add_library(emulated_opapi SHARED tests/npu/emulated/opapi.cpp)
set_target_properties(emulated_opapi PROPERTIES OUTPUT_NAME opapi LIBRARY_OUTPUT_DIRECTORY ${_emu}/lib64)

add_library(emulated_cust_opapi SHARED tests/npu/emulated/cust_opapi.cpp)
target_link_libraries(emulated_cust_opapi PRIVATE emulated_opapi airfuse_twin airfuse_opdef_standin ${CMAKE_DL_LIBS})
set_target_properties(emulated_cust_opapi PROPERTIES OUTPUT_NAME cust_opapi NO_SONAME ON
                      LIBRARY_OUTPUT_DIRECTORY ${_emu}/vendors/customize/op_api/lib)
list(APPEND AIRFUSE_BUILT "emulated NPU for tests/npu (${_emu})")
