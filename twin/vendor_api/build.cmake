# The vendor-API twin (twin/vendor_api/README.md): airfuse's kernels compiled against CANN's real
# Ascend C headers in their CPU-debug branch, linked with airfuse's model of the AI core (the CCE
# intrinsics and bookkeeping calls those headers make) and with asc-tools' own CPU-debug parameter
# checks, into build/vendor_check/vendor_api_twin/libairfuse_vendor_twin.so: the same C entry
# points as build/libairfuse_twin.so (airfuse/twin.py loads either). Included by
# vendor_check/CMakeLists.txt after kernels.cmake, whose generated kernel_tiling.h and include
# folders it shares; built only from CANN's open-source layout, as the kernel check.

set(VENDOR_TWIN ${CMAKE_BINARY_DIR}/vendor_api_twin)
file(MAKE_DIRECTORY ${VENDOR_TWIN}/kernels)
if(NOT CANN_LAYOUT STREQUAL "open")
  file(WRITE ${VENDOR_TWIN}/state.txt "not built: the vendor-API twin reads CANN's open-source layout (AIRFUSE_CANN_OPEN); ${CANN_LAYOUT} layout found\n")
  return()
endif()

set(VENDOR_TWIN_DIR ${AIRFUSE_ROOT}/twin/vendor_api)
set(CPUDEBUG ${CANN_ROOT}/asc-tools/cpudebug)

# The kernels whose every reached intrinsic the model implements; the others join as it grows
# (intrinsics it lacks stop a launch naming them, so a kernel listed too early fails its test).
set(VENDOR_TWIN_KERNELS add.cpp rms_norm.cpp add_rms_norm.cpp silu_mul.cpp silu_mul_grad.cpp swiglu.cpp swiglu_grad.cpp gelu.cpp gelu_grad.cpp
    rope.cpp rope_grad.cpp rms_norm_grad.cpp)

# The chips whose builds the twin holds, each compiled in its own CPU-debug branch (kernels.cmake's
# chip defines: dav_c220 for 910B, dav_m200 for 310P). Every branch defines the API's inline
# functions in namespace AscendC under the same names with the chip's own bodies (dav_c220's and
# dav_m200's DataCopyGM2UBImpl, say), and the kernels' own templates in namespace airfuse_kernel
# differ per chip too (kernels/gm_copy.h); the linker would fold each pair into one. So each chip
# but 910B sees both namespaces under names of its own (VENDOR_TWIN_NAMESPACE_<chip>), in its
# kernels, its parameter checks and src/vendor_namespace.cpp alike
# (tests/vendor/test_vendor_api_twin.py checks that no kernel code is shared across chips).
set(VENDOR_TWIN_CHIPS ascend910b ascend310p)
set(VENDOR_TWIN_NAMESPACE_ascend910b)
set(VENDOR_TWIN_NAMESPACE_ascend310p -DAscendC=AscendC_dav_m200 -Dairfuse_kernel=airfuse_kernel_dav_m200)

# The CPU-debug branch as kernels.cmake compiles it, less the chip; the twin's own stub_fun.h comes
# before vendor_check's. Every load and store of the kernel's code calls the model
# (src/scalar_access.cpp: the scalar unit's accesses, which the headers make as host ones).
set(VENDOR_TWIN_SCALAR_ACCESS -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0 --param asan-globals=0
    --param asan-stack=0)
set(VENDOR_TWIN_UNWATCHED_FLAGS -std=c++17 -O1 -fPIC ${MODE_DEFINES_cpu} -I${VENDOR_TWIN_DIR}/include ${VENDOR_INCLUDES} ${KERNEL_INCLUDES} -w)
set(VENDOR_TWIN_FLAGS ${VENDOR_TWIN_UNWATCHED_FLAGS} ${VENDOR_TWIN_SCALAR_ACCESS})
set(VENDOR_TWIN_UNWATCHED_OBJECTS)
foreach(chip ${VENDOR_TWIN_CHIPS})
  set(VENDOR_TWIN_CHIP_FLAGS_${chip} ${CHIP_DEFINES_${chip}} ${VENDOR_TWIN_NAMESPACE_${chip}})
  set(prelude ${VENDOR_TWIN}/${chip}/prelude.h)
  file(CONFIGURE OUTPUT ${prelude} CONTENT
       "#include \"stub_def.h\"\n#include \"kernel_operator.h\"\n#include \"op_tiling_data.h\"\n")
  add_custom_command(
    OUTPUT ${prelude}.gch
    COMMAND ${CMAKE_CXX_COMPILER} ${VENDOR_TWIN_FLAGS} ${VENDOR_TWIN_CHIP_FLAGS_${chip}} -x c++-header ${prelude} -o ${prelude}.gch
            -MD -MF ${prelude}.gch.d -MT ${prelude}.gch
    DEPENDS ${prelude} ${GENERATED}/kernel_tiling/kernel_tiling.h ${VENDOR_TWIN_DIR}/include/stub_fun.h ${VENDOR_TWIN_DIR}/build.cmake
    DEPFILE ${prelude}.gch.d
    COMMENT "vendor-API twin: CANN's headers precompiled for ${chip}"
    VERBATIM)
  # TPipe's construction without the instrumentation, linked before the kernels (src/tpipe_unwatched.cpp).
  set(object ${VENDOR_TWIN}/${chip}/tpipe_unwatched.o)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_CXX_COMPILER} ${VENDOR_TWIN_UNWATCHED_FLAGS} ${VENDOR_TWIN_CHIP_FLAGS_${chip}} -c ${VENDOR_TWIN_DIR}/src/tpipe_unwatched.cpp
            -o ${object} -MD -MF ${object}.d -MT ${object}
    DEPENDS ${VENDOR_TWIN_DIR}/src/tpipe_unwatched.cpp ${GENERATED}/kernel_tiling/kernel_tiling.h ${VENDOR_TWIN_DIR}/include/stub_fun.h
            ${VENDOR_TWIN_DIR}/build.cmake
    DEPFILE ${object}.d
    COMMENT "vendor-API twin: TPipe's construction for ${chip}, not instrumented"
    VERBATIM)
  list(APPEND VENDOR_TWIN_UNWATCHED_OBJECTS ${object})
endforeach()

# The twin's kernel builds (`python -m airfuse.kernel_builds --vendor-twin`: chip, source, entry
# symbol, the twin's name for it, the DTYPE_<NAME> macros), for the kernels above.
execute_process(
  COMMAND ${AIRFUSE_PYTHON} -m airfuse.kernel_builds --vendor-twin
  WORKING_DIRECTORY ${AIRFUSE_ROOT}
  OUTPUT_VARIABLE TWIN_BUILDS
  RESULT_VARIABLE TWIN_BUILDS_RESULT)
if(NOT TWIN_BUILDS_RESULT EQUAL 0 OR NOT TWIN_BUILDS)
  message(FATAL_ERROR "vendor-API twin: `python -m airfuse.kernel_builds --vendor-twin` failed (${TWIN_BUILDS_RESULT})")
endif()
string(STRIP "${TWIN_BUILDS}" TWIN_BUILDS)
string(REPLACE "\n" ";" TWIN_BUILDS "${TWIN_BUILDS}")
set(VENDOR_TWIN_OBJECTS)
foreach(build ${TWIN_BUILDS})
  string(REPLACE "," ";" fields "${build}")
  list(POP_FRONT fields chip source symbol twin_name)
  if(NOT source IN_LIST VENDOR_TWIN_KERNELS)
    continue()
  endif()
  list(TRANSFORM fields PREPEND -D OUTPUT_VARIABLE macros)
  set(prelude ${VENDOR_TWIN}/${chip}/prelude.h)
  set(object ${VENDOR_TWIN}/kernels/${twin_name}.o)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_CXX_COMPILER} ${VENDOR_TWIN_FLAGS} ${VENDOR_TWIN_CHIP_FLAGS_${chip}} -Winvalid-pch -include ${prelude} -include ${VENDOR_TWIN_DIR}/include/sync_site.h -D${symbol}=${twin_name} ${macros}
            -c ${AIRFUSE_ROOT}/kernels/${source} -o ${object} -MD -MF ${object}.d -MT ${object}
    DEPENDS ${AIRFUSE_ROOT}/kernels/${source} ${prelude}.gch ${VENDOR_TWIN_DIR}/include/sync_site.h
    DEPFILE ${object}.d
    COMMENT "vendor-API twin: ${source} for ${chip} (${fields})"
    VERBATIM)
  list(APPEND VENDOR_TWIN_OBJECTS ${object})
endforeach()

# asc-tools' CPU-debug parameter checks (the AscendC::check::CheckFunc* the headers call), built
# from the vendor's tree; their one non-public header is model/model_factory_mask.h (the mask
# registers, from the core model).
file(GLOB API_CHECK_SOURCES ${CPUDEBUG}/src/api_check/*.cpp)
set(VENDOR_TWIN_CHIP_OBJECTS)
foreach(chip ${VENDOR_TWIN_CHIPS})
  add_library(vendor_twin_api_check_${chip} OBJECT ${API_CHECK_SOURCES})
  target_compile_options(vendor_twin_api_check_${chip} PRIVATE ${VENDOR_TWIN_CHIP_FLAGS_${chip}} ${MODE_DEFINES_cpu} -include stub_def.h -O1 -w)
  target_include_directories(vendor_twin_api_check_${chip} PRIVATE ${VENDOR_TWIN_DIR}/include ${AIRFUSE_ROOT}/vendor_check/include
                             ${AIRFUSE_ROOT}/vendor_check/nonpublic ${CPUDEBUG}/include ${CPUDEBUG}/src/api_check
                             ${CPUDEBUG}/src/api_check/inc ${CANN_ROOT}/libboundscheck/include ${GENERATED}
                             ${ASC} ${ASC}/include ${ASC}/include/basic_api ${ASC}/include/utils ${ASC}/impl ${ASC}/impl/basic_api ${ASC}/impl/utils)
  set_target_properties(vendor_twin_api_check_${chip} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_STANDARD 17)
  # What the headers expect airfuse to define in namespace AscendC, under the chip's name for it.
  add_library(vendor_twin_namespace_${chip} OBJECT ${VENDOR_TWIN_DIR}/src/vendor_namespace.cpp)
  target_compile_options(vendor_twin_namespace_${chip} PRIVATE ${VENDOR_TWIN_CHIP_FLAGS_${chip}} ${MODE_DEFINES_cpu} -O1
                         -D__ASCENDC_INCLUDE_INTERNAL_HEADERS__)
  target_include_directories(vendor_twin_namespace_${chip} PRIVATE ${VENDOR_TWIN_DIR}/include ${AIRFUSE_ROOT}/vendor_check/include ${CPUDEBUG}/include
                             ${ASC}/impl/basic_api)
  set_target_properties(vendor_twin_namespace_${chip} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_STANDARD 17)
  list(APPEND VENDOR_TWIN_CHIP_OBJECTS $<TARGET_OBJECTS:vendor_twin_api_check_${chip}> $<TARGET_OBJECTS:vendor_twin_namespace_${chip}>)
endforeach()
# asc-tools' print lock (regfwk) and scalar half arithmetic (acl_stub), which the headers link against.
add_library(vendor_twin_print_lock OBJECT ${CPUDEBUG}/src/regfwk/kernel_print_lock.cpp ${CPUDEBUG}/src/acl_stub/kernel_fp16.cpp)
target_compile_options(vendor_twin_print_lock PRIVATE ${CHIP_DEFINES_ascend910b} ${MODE_DEFINES_cpu} -w)
target_include_directories(vendor_twin_print_lock PRIVATE ${CPUDEBUG}/utils ${CPUDEBUG}/include ${AIRFUSE_ROOT}/vendor_check/nonpublic
                           ${CANN_ROOT}/libboundscheck/include)
set_target_properties(vendor_twin_print_lock PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_STANDARD 17)
# The scalar half and bfloat16_t members the headers call out of line (copy assignment among them:
# a LocalTensor<half>::SetValue stores through it) are the kernel's scalar code too; the core model
# moves half and bfloat16 data as bits, never through them.
set_source_files_properties(${CPUDEBUG}/src/acl_stub/kernel_fp16.cpp ${VENDOR_TWIN_DIR}/src/host_runtime.cpp PROPERTIES
                            COMPILE_OPTIONS "${VENDOR_TWIN_SCALAR_ACCESS}")

# The core model, the tiling entry points of the home-made twin (op_host's tiling core only) and
# its cost model (twin/src/cost.cpp: one copy for both twins, fed here by the intrinsics).
add_library(airfuse_vendor_twin SHARED
  ${VENDOR_TWIN_DIR}/src/core_model.cpp ${VENDOR_TWIN_DIR}/src/bookkeeping.cpp ${VENDOR_TWIN_DIR}/src/sync_intrinsics.cpp
  ${VENDOR_TWIN_DIR}/src/copy_intrinsics.cpp ${VENDOR_TWIN_DIR}/src/vector_intrinsics.cpp ${VENDOR_TWIN_DIR}/src/reduce_intrinsics.cpp ${VENDOR_TWIN_DIR}/src/pipe_order.cpp ${VENDOR_TWIN_DIR}/src/gm_order.cpp ${VENDOR_TWIN_DIR}/src/scalar_access.cpp ${VENDOR_TWIN_DIR}/src/launch.cpp ${VENDOR_TWIN_DIR}/src/blocks.cpp ${VENDOR_TWIN_DIR}/src/host_runtime.cpp
  ${AIRFUSE_ROOT}/twin/src/capi.cpp ${AIRFUSE_ROOT}/twin/src/cost.cpp ${VENDOR_TWIN_CHIP_OBJECTS} $<TARGET_OBJECTS:vendor_twin_print_lock> ${VENDOR_TWIN_UNWATCHED_OBJECTS}
  ${VENDOR_TWIN_OBJECTS})
target_include_directories(airfuse_vendor_twin PRIVATE ${VENDOR_TWIN_DIR}/include ${AIRFUSE_ROOT}/vendor_check/include ${CPUDEBUG}/include ${ASC}/impl/basic_api
                           ${AIRFUSE_ROOT}/op_host/tiling ${AIRFUSE_ROOT}/kernels)
target_compile_options(airfuse_vendor_twin PRIVATE -O1 -DASCENDC_CPU_DEBUG=1 -D__ASCENDC_INCLUDE_INTERNAL_HEADERS__)
set_target_properties(airfuse_vendor_twin PROPERTIES CXX_STANDARD 17 LIBRARY_OUTPUT_DIRECTORY ${VENDOR_TWIN})
target_link_options(airfuse_vendor_twin PRIVATE -Wl,--no-undefined)
target_link_libraries(airfuse_vendor_twin PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(airfuse_vendor_twin vendor_kernel_tiling)

# The deliberately broken kernels of tests/kernels/broken (the home-made twin's negative tests),
# compiled the same way for 910B, so tests/vendor/test_vendor_api_twin_checks.py can hold each against
# the vendor-API twin too; and the cost model's hand-timed kernels (tests/kernels/cost), so
# tests/kernels/test_twin_cost.py runs on this twin (libairfuse_vendor_twin_cost_kernels.so).
set(VENDOR_TWIN_BROKEN_OBJECTS)
set(VENDOR_TWIN_COST_SOURCE ${AIRFUSE_ROOT}/tests/kernels/cost/cost_kernels.cpp)
file(GLOB VENDOR_TWIN_BROKEN_SOURCES CONFIGURE_DEPENDS ${AIRFUSE_ROOT}/tests/kernels/broken/*.cpp)
foreach(source ${VENDOR_TWIN_BROKEN_SOURCES} ${VENDOR_TWIN_COST_SOURCE})
  get_filename_component(name ${source} NAME_WE)
  set(object ${VENDOR_TWIN}/kernels/${name}.o)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_CXX_COMPILER} ${VENDOR_TWIN_FLAGS} ${VENDOR_TWIN_CHIP_FLAGS_ascend910b} -Winvalid-pch -include ${VENDOR_TWIN}/ascend910b/prelude.h
            -include ${VENDOR_TWIN_DIR}/include/sync_site.h -c ${source} -o ${object} -MD -MF ${object}.d -MT ${object}
    DEPENDS ${source} ${VENDOR_TWIN}/ascend910b/prelude.h.gch ${VENDOR_TWIN_DIR}/include/sync_site.h
    DEPFILE ${object}.d
    COMMENT "vendor-API twin: ${source}"
    VERBATIM)
  if(NOT source STREQUAL VENDOR_TWIN_COST_SOURCE)
    list(APPEND VENDOR_TWIN_BROKEN_OBJECTS ${object})
  endif()
endforeach()
# Their 310P build too, each entry point under the name airfuse/twin.py asks a 310P launch for
# (kernel_builds.vendor_twin_name: "__ascend310p" appended), as read from the source.
file(STRINGS ${VENDOR_TWIN_COST_SOURCE} VENDOR_TWIN_COST_ENTRIES REGEX "^extern \"C\" __global__ __aicore__ void [a-z_0-9]+\\(")
list(TRANSFORM VENDOR_TWIN_COST_ENTRIES REPLACE "^extern \"C\" __global__ __aicore__ void ([a-z_0-9]+)\\(.*" "-D\\1=\\1__ascend310p")
set(object ${VENDOR_TWIN}/kernels/cost_kernels__ascend310p.o)
add_custom_command(
  OUTPUT ${object}
  COMMAND ${CMAKE_CXX_COMPILER} ${VENDOR_TWIN_FLAGS} ${VENDOR_TWIN_CHIP_FLAGS_ascend310p} -Winvalid-pch -include ${VENDOR_TWIN}/ascend310p/prelude.h
          -include ${VENDOR_TWIN_DIR}/include/sync_site.h ${VENDOR_TWIN_COST_ENTRIES} -c ${VENDOR_TWIN_COST_SOURCE} -o ${object} -MD -MF ${object}.d -MT ${object}
  DEPENDS ${VENDOR_TWIN_COST_SOURCE} ${VENDOR_TWIN}/ascend310p/prelude.h.gch ${VENDOR_TWIN_DIR}/include/sync_site.h
  DEPFILE ${object}.d
  COMMENT "vendor-API twin: ${VENDOR_TWIN_COST_SOURCE} for ascend310p"
  VERBATIM)
add_library(airfuse_vendor_twin_cost_kernels SHARED ${VENDOR_TWIN}/kernels/cost_kernels.o ${object})
set_target_properties(airfuse_vendor_twin_cost_kernels PROPERTIES LINKER_LANGUAGE CXX LIBRARY_OUTPUT_DIRECTORY ${VENDOR_TWIN})
target_link_libraries(airfuse_vendor_twin_cost_kernels PRIVATE airfuse_vendor_twin)
target_link_options(airfuse_vendor_twin_cost_kernels PRIVATE -Wl,--no-undefined)
add_library(airfuse_vendor_twin_broken SHARED ${VENDOR_TWIN_BROKEN_OBJECTS})
set_target_properties(airfuse_vendor_twin_broken PROPERTIES LINKER_LANGUAGE CXX LIBRARY_OUTPUT_DIRECTORY ${VENDOR_TWIN})
target_link_libraries(airfuse_vendor_twin_broken PRIVATE airfuse_vendor_twin)
target_link_options(airfuse_vendor_twin_broken PRIVATE -Wl,--no-undefined)
