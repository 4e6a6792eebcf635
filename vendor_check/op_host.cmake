# op_host judged by CANN's own code (vendor_check/README.md, "op_host and opbuild"):
#  - libairfuse_op_host.so: every op_host/*.cpp compiled against the real metadef/ge/platform
#    headers and linked with --no-undefined, as CANN's custom-op build links op_host;
#  - libcann_opdef_registry.so: metadef's OpDef registry (the part of CANN's libregister that
#    OP_ADD and opbuild use), built from its sources, shared by op_host and op_build so both see
#    one registry, as they share libregister.so in a CANN installation;
#  - op_build: asc-devkit's opbuild, built from its sources, run on libairfuse_op_host.so for each
#    chip into opbuild/<chip>/ (aclnn_<op>.h/.cpp, the op-info .ini, op_proto.h/.cc);
#  - opbuild_checks.cmake: what the generated files are checked against.
# opbuild and the OpDef registry are built from their sources, which an installed toolkit does not
# ship: there this part is skipped, with the reason recorded for tests/vendor/test_opbuild.py.
set(AIRFUSE_OPBUILD_DIR ${CMAKE_BINARY_DIR}/opbuild)
file(REMOVE ${AIRFUSE_OPBUILD_DIR}/skipped.txt)
if(NOT CANN_LAYOUT STREQUAL "open")
  string(CONCAT _why "op_host/opbuild part skipped: it builds opbuild and metadef's OpDef registry from CANN's open-source tree, "
           "and the ${CANN_LAYOUT} layout at ${CANN_ROOT} has no sources; set AIRFUSE_CANN_OPEN to such a tree")
  file(WRITE ${AIRFUSE_OPBUILD_DIR}/skipped.txt "${_why}\n")
  message(STATUS "vendor check: ${_why}")
  return()
endif()

set(_metadef ${CANN_ROOT}/metadef)
set(_opbuild_src ${CANN_ROOT}/asc-devkit/tools/build/opbuild)
# The chips airfuse's OpDefs register (op_host/opdef_common.h), as opbuild names them.
set(AIRFUSE_OPBUILD_CHIPS ascend910b ascend310p)

# The real headers first; vendor_check/nonpublic only supplies what CANN does not publish.
set(_cann_includes
  ${_metadef}/inc/external/asc ${_metadef}/inc/external ${_metadef}/inc
  ${CANN_ROOT}/ge/inc/graph_metadef/external ${CANN_ROOT}/ge/inc/graph_metadef
  ${CANN_ROOT}/asc-devkit/include/utils ${CANN_ROOT}/libboundscheck/include
  ${CMAKE_CURRENT_SOURCE_DIR}/nonpublic)
# The vendor's sources are compiled as they are: their warnings are the vendor's.
set(_vendor_flags -w)

file(GLOB _registry_sources ${_metadef}/base/asc/opdef/*.cc)
add_library(cann_opdef_registry SHARED ${_registry_sources}
  ${_metadef}/base/type/ascend_string_impl.cc ${_metadef}/base/type/types_impl.cc ${_metadef}/base/utils/type_utils_impl.cc
  ${_metadef}/base/runtime/runtime_attrs.cc)
target_include_directories(cann_opdef_registry PUBLIC ${_cann_includes} PRIVATE ${_metadef}/pkg_inc ${_metadef})
target_compile_options(cann_opdef_registry PRIVATE ${_vendor_flags})
target_link_options(cann_opdef_registry PRIVATE -Wl,--no-undefined)

# Adding an op is adding its op_host/<op>.cpp: the glob picks it up at the next build.
file(GLOB AIRFUSE_OP_HOST_SOURCES CONFIGURE_DEPENDS ${AIRFUSE_ROOT}/op_host/*.cpp)
add_library(airfuse_op_host SHARED ${AIRFUSE_OP_HOST_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/nonpublic/platform_ascendc_unreached.cpp)
target_include_directories(airfuse_op_host PRIVATE ${AIRFUSE_ROOT}/op_host ${AIRFUSE_ROOT}/op_host/tiling ${AIRFUSE_ROOT}/kernels)
target_compile_options(airfuse_op_host PRIVATE -Wall -Wno-deprecated-declarations)
target_link_libraries(airfuse_op_host PRIVATE cann_opdef_registry)
target_link_options(airfuse_op_host PRIVATE -Wl,--no-undefined)

# Linked in the order of asc-devkit's own CMakeLists: the generator factory's registry must be
# initialised before the generators' static registrations run.
set(_opbuild_parts op_build op_generator op_generator_factory op_cfg_generator op_proto_generator op_aclnn_generator
    op_custom_registry_generator op_aclnn_fallback_generator op_cpu_cfg_generator op_build_params)
list(TRANSFORM _opbuild_parts PREPEND ${_opbuild_src}/)
list(TRANSFORM _opbuild_parts APPEND .cpp)
add_executable(op_build ${_opbuild_parts})
target_include_directories(op_build PRIVATE ${CANN_ROOT}/asc-devkit/tools/build/common)
target_compile_options(op_build PRIVATE ${_vendor_flags} -DNO_OPERATOR_IMPL)
target_link_libraries(op_build PRIVATE cann_opdef_registry ${CMAKE_DL_LIBS})

# opbuild on op_host, once per chip: OPS_PRODUCT_NAME selects the chip's aclnn and .ini content.
foreach(chip ${AIRFUSE_OPBUILD_CHIPS})
  set(_out ${AIRFUSE_OPBUILD_DIR}/${chip})
  add_custom_command(
    OUTPUT ${_out}/generated.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${_out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_out}
    COMMAND ${CMAKE_COMMAND} -E env OPS_PRODUCT_NAME=${chip} OPS_ACLNN_GEN=1
            $<TARGET_FILE:op_build> $<TARGET_FILE:airfuse_op_host> ${_out} --compute_unit=${chip}
    COMMAND ${CMAKE_COMMAND} -E touch ${_out}/generated.stamp
    DEPENDS op_build airfuse_op_host
    COMMENT "opbuild: airfuse's op_host for ${chip}"
    VERBATIM)
  list(APPEND AIRFUSE_OPBUILD_STAMPS ${_out}/generated.stamp)
endforeach()
add_custom_target(airfuse_opbuild ALL DEPENDS ${AIRFUSE_OPBUILD_STAMPS})

include(${CMAKE_CURRENT_LIST_DIR}/opbuild_checks.cmake)
