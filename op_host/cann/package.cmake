# The CANN custom-op package (op_host + kernels + generated aclnn API), built where a CANN toolkit
# exists. Steps, all documented CANN tooling: msOpGen generates the op project from a JSON written
# from airfuse's op definitions; our op_host and kernel sources replace the generated stubs; the
# project's build.sh compiles for AIRFUSE_SOC_VERSION and packs build_out/custom_opp_*.run.
# Not exercisable without CANN: the twin (CMakeLists.txt) is what runs here.

set(AIRFUSE_SOC_VERSION "Ascend910B2" CACHE STRING "SoC the custom-op package is compiled for")
find_program(AIRFUSE_MSOPGEN msopgen HINTS "${AIRFUSE_CANN}/python/site-packages/bin" "${AIRFUSE_CANN}/bin")
find_package(Python3 COMPONENTS Interpreter)
if(NOT AIRFUSE_MSOPGEN OR NOT Python3_FOUND)
  message(FATAL_ERROR "airfuse: CANN found at ${AIRFUSE_CANN} but msopgen (python/site-packages/bin) or Python 3 is missing; "
                      "source ${AIRFUSE_CANN}/set_env.sh or configure with -DAIRFUSE_WITH_CANN=OFF")
endif()

set(_proj ${CMAKE_BINARY_DIR}/cann_project)
set(_json ${CMAKE_BINARY_DIR}/airfuse_ops.json)
set(_stamp ${CMAKE_BINARY_DIR}/cann_package.stamp)
file(GLOB _kernel_srcs ${CMAKE_SOURCE_DIR}/kernels/*.cpp ${CMAKE_SOURCE_DIR}/kernels/*.h ${CMAKE_SOURCE_DIR}/kernels/*/*.h)
file(GLOB _host_srcs ${CMAKE_SOURCE_DIR}/op_host/*.cpp ${CMAKE_SOURCE_DIR}/op_host/*.h ${CMAKE_SOURCE_DIR}/op_host/tiling/*.h)

add_custom_command(
  OUTPUT ${_stamp}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${_proj}
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${CMAKE_SOURCE_DIR} ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/op_host/cann/msopgen_json.py ${_json}
  COMMAND ${AIRFUSE_MSOPGEN} gen -i ${_json} -c ai_core-${AIRFUSE_SOC_VERSION} -lan cpp -out ${_proj}
  COMMAND ${CMAKE_COMMAND} -DPROJ=${_proj} -DSRC=${CMAKE_SOURCE_DIR} -DJSON=${_json} -P ${CMAKE_SOURCE_DIR}/op_host/cann/place_sources.cmake
  COMMAND bash ./build.sh
  COMMAND ${CMAKE_COMMAND} -E touch ${_stamp}
  WORKING_DIRECTORY ${_proj}
  DEPENDS ${_kernel_srcs} ${_host_srcs} ${CMAKE_SOURCE_DIR}/op_host/cann/msopgen_json.py
  COMMENT "airfuse: building the CANN custom-op package for ${AIRFUSE_SOC_VERSION} (msopgen + build.sh)"
  VERBATIM)
add_custom_target(cann_package ALL DEPENDS ${_stamp})
list(APPEND AIRFUSE_BUILT "CANN custom-op package (${_proj}/build_out/custom_opp_*.run)")
