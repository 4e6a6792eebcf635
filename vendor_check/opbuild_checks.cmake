# What opbuild's output is checked against, per chip (vendor_check/README.md, "op_host and
# opbuild"); included by op_host.cmake after the opbuild runs are defined.
#  - aclnn_recorded/<chip>/libaclnn_recorded.so: the generated aclnn_<op>.cpp wrappers, the recording
#    nnopbase and aclnn_table_check.cpp, whose static_asserts hold op_table.h's rows against the
#    generated prototypes; tests/vendor/test_opbuild.py calls it;
#  - emulated_npu_signatures_<chip>: the emulated NPU's aclnn entry points
#    (tests/npu/emulated/cust_opapi.cpp) compiled after every generated aclnn_<op>.h, so any
#    signature that differs from opbuild's is a conflicting declaration of a C function.
# The generated files are named from op_host's: op_host/<op>.cpp gives aclnn_airfuse_<op>.h/.cpp.
set(_generated_names)
foreach(source ${AIRFUSE_OP_HOST_SOURCES})
  get_filename_component(_op ${source} NAME_WE)
  list(APPEND _generated_names aclnn_airfuse_${_op})
endforeach()

foreach(chip ${AIRFUSE_OPBUILD_CHIPS})
  set(_out ${AIRFUSE_OPBUILD_DIR}/${chip})
  set(_aggregate "// Every aclnn header opbuild generated for ${chip} (written by vendor_check/opbuild_checks.cmake).\n#pragma once\n")
  set(_wrappers)
  foreach(name ${_generated_names})
    string(APPEND _aggregate "#include \"${name}.h\"\n")
    list(APPEND _wrappers ${_out}/${name}.cpp)
  endforeach()
  set(_aggregate_dir ${CMAKE_BINARY_DIR}/aclnn_generated/${chip})
  file(GENERATE OUTPUT ${_aggregate_dir}/aclnn_generated.h CONTENT "${_aggregate}")
  set_source_files_properties(${_wrappers} PROPERTIES GENERATED TRUE OBJECT_DEPENDS ${_out}/generated.stamp)

  add_library(aclnn_recorded_${chip} SHARED ${_wrappers} ${CMAKE_CURRENT_SOURCE_DIR}/nnopbase_recorder.cpp
              ${CMAKE_CURRENT_SOURCE_DIR}/aclnn_table_check.cpp)
  add_dependencies(aclnn_recorded_${chip} airfuse_opbuild)
  target_include_directories(aclnn_recorded_${chip} PRIVATE ${_out} ${_aggregate_dir} ${AIRFUSE_ROOT}/csrc/npu ${_cann_includes})
  # The generated wrappers are the vendor's code, compiled as CANN compiles them; the rest is ours.
  set_source_files_properties(${_wrappers} PROPERTIES COMPILE_OPTIONS "${_vendor_flags}")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/aclnn_table_check.cpp PROPERTIES OBJECT_DEPENDS ${_out}/generated.stamp)
  target_link_options(aclnn_recorded_${chip} PRIVATE -Wl,--no-undefined)
  set_target_properties(aclnn_recorded_${chip} PROPERTIES OUTPUT_NAME aclnn_recorded NO_SONAME ON LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/aclnn_recorded/${chip})

  add_library(emulated_npu_signatures_${chip} OBJECT ${AIRFUSE_ROOT}/tests/npu/emulated/cust_opapi.cpp)
  add_dependencies(emulated_npu_signatures_${chip} airfuse_opbuild)
  target_include_directories(emulated_npu_signatures_${chip} PRIVATE ${_out} ${_aggregate_dir} ${_cann_includes})
  target_compile_options(emulated_npu_signatures_${chip} PRIVATE -include aclnn_generated.h)
endforeach()
