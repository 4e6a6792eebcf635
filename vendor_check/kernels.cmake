# airfuse's kernels type-checked against CANN's real Ascend C headers (vendor_check/README.md,
# "Kernels"). One -fsyntax-only compile per chip, header branch and build CANN makes (one per
# kernel and dtype combination the op's OpDef declares for the chip, airfuse/kernel_builds.py),
# each leaving a stamp file; depfiles make a warm run recompile nothing.
#
# Written for tests/vendor: ${VENDOR_KERNELS}/flags.json (the compile command of each chip and
# branch, so negative controls compile exactly as the kernels do) and builds.json (every build
# and its stamp).

set(VENDOR_KERNELS ${CMAKE_BINARY_DIR}/kernels)
file(MAKE_DIRECTORY ${VENDOR_KERNELS})

if(NOT CANN_LAYOUT STREQUAL "open")
  # An installed toolkit ships these headers under other folders, and its own stub_fun.h; the
  # check is written for the open-source layout only, and says so rather than guess paths.
  file(WRITE ${VENDOR_KERNELS}/flags.json "{\"checked\": false, \"reason\": \"the kernel check reads CANN's open-source layout (AIRFUSE_CANN_OPEN); ${CANN_LAYOUT} layout found\"}\n")
  return()
endif()

set(ASC ${CANN_ROOT}/asc-devkit)
set(GENERATED ${CMAKE_BINARY_DIR}/generated)

# kernel_tiling.h, which CANN's build generates from asc-devkit's advanced-API tiling headers with
# asc-devkit's own script.
set(TILING_SCRIPT ${ASC}/impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py)
file(GLOB_RECURSE TILING_DEFS CONFIGURE_DEPENDS ${ASC}/include/adv_api/*_tilingdata.h)
add_custom_command(
  OUTPUT ${GENERATED}/kernel_tiling/kernel_tiling.h
  COMMAND ${AIRFUSE_PYTHON} ${TILING_SCRIPT} ${ASC}/include/adv_api ${GENERATED}/kernel_tiling/kernel_tiling.h > /dev/null
  DEPENDS ${TILING_SCRIPT} ${TILING_DEFS}
  COMMENT "vendor check: kernel_tiling.h from asc-devkit's gen_kernel_tiling_data_def.py")
add_custom_target(vendor_kernel_tiling DEPENDS ${GENERATED}/kernel_tiling/kernel_tiling.h)

# The builds, derived from the op definitions; reconfigured when one is added, removed or edited.
file(GLOB OP_DEFINITIONS CONFIGURE_DEPENDS ${AIRFUSE_ROOT}/airfuse/opdef.py ${AIRFUSE_ROOT}/airfuse/kernel_builds.py
     ${AIRFUSE_ROOT}/airfuse/ops/*.py ${AIRFUSE_ROOT}/kernels/*.cpp)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${OP_DEFINITIONS})
execute_process(
  COMMAND ${AIRFUSE_PYTHON} -m airfuse.kernel_builds
  WORKING_DIRECTORY ${AIRFUSE_ROOT}
  OUTPUT_VARIABLE KERNEL_BUILDS
  RESULT_VARIABLE KERNEL_BUILDS_RESULT)
if(NOT KERNEL_BUILDS_RESULT EQUAL 0 OR NOT KERNEL_BUILDS)
  message(FATAL_ERROR "vendor check: `python -m airfuse.kernel_builds` failed (${KERNEL_BUILDS_RESULT})")
endif()
# One build a line, its fields separated by commas.
string(STRIP "${KERNEL_BUILDS}" KERNEL_BUILDS)
string(REPLACE "\n" ";" KERNEL_BUILDS "${KERNEL_BUILDS}")

# The architecture each chip's kernels are compiled for: 910B2/910B3's vector core (dav_c220, one
# configuration for both SoCs) and 310P (dav_m200), as bisheng predefines them.
set(CHIP_DEFINES_ascend910b -D__NPU_ARCH__=2201 -D__DAV_C220__ -D__DAV_C220_VEC__ -D__DAV_VEC__ -D__CCE_AICORE__=220)
set(CHIP_DEFINES_ascend310p -D__NPU_ARCH__=2002 -D__DAV_M200__ -D__CCE_AICORE__=200)
# The headers' two branches: CPU-debug (the vendor's stub_def.h first) and NPU (what bisheng
# reads, its keywords stood in for by npu_keywords.h).
set(MODE_DEFINES_cpu -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1 -DASCENDC_DEBUG=1 -DASCENDC_DUMP=0)
set(MODE_DEFINES_npu -DASCENDC_DUMP=0)
set(MODE_FIRST_HEADER_cpu stub_def.h)
set(MODE_FIRST_HEADER_npu npu_keywords.h)
set(VENDOR_INCLUDES
  -I${CMAKE_CURRENT_SOURCE_DIR}/include -I${GENERATED}
  -I${ASC} -I${ASC}/include -I${ASC}/include/basic_api -I${ASC}/include/utils -I${ASC}/include/adv_api
  -I${ASC}/impl -I${ASC}/impl/basic_api -I${ASC}/impl/utils -I${ASC}/impl/adv_api
  -I${CANN_ROOT}/asc-tools/cpudebug/include)
set(KERNEL_INCLUDES -I${AIRFUSE_ROOT}/kernels -I${AIRFUSE_ROOT}/op_host/tiling)

set(FLAGS_JSON "{\"checked\": true, \"compiler\": \"${CMAKE_CXX_COMPILER}\", \"commands\": {")
set(BUILDS_JSON "[")
set(STAMPS)
set(separator "")
set(build_separator "")
foreach(chip ascend910b ascend310p)
  foreach(mode cpu npu)
    set(dir ${VENDOR_KERNELS}/${chip}/${mode})
    file(MAKE_DIRECTORY ${dir})
    # What every kernel build starts with, force-included as CANN's op compiler does: the branch's
    # first header, kernel_operator.h, and the op compiler's tiling macros.
    file(CONFIGURE OUTPUT ${dir}/prelude.h CONTENT
         "#include \"${MODE_FIRST_HEADER_${mode}}\"\n#include \"kernel_operator.h\"\n#include \"op_tiling_data.h\"\n")
    set(flags -std=c++17 ${CHIP_DEFINES_${chip}} ${MODE_DEFINES_${mode}} ${VENDOR_INCLUDES} ${KERNEL_INCLUDES})
    set(command ${CMAKE_CXX_COMPILER} ${flags} -fsyntax-only -Winvalid-pch -include ${dir}/prelude.h)
    set(prelude_depends)
    if(mode STREQUAL "cpu")
      # The headers take nearly all of a kernel build's time: precompiled once per chip (g++ uses
      # the .gch beside prelude.h only if every flag that matters matches, else reads the headers).
      # Not in the NPU branch, whose vendor-header errors g++ would not precompile.
      add_custom_command(
        OUTPUT ${dir}/prelude.h.gch
        COMMAND ${CMAKE_CXX_COMPILER} ${flags} -x c++-header ${dir}/prelude.h -o ${dir}/prelude.h.gch
                -MD -MF ${dir}/prelude.h.gch.d -MT ${dir}/prelude.h.gch
        DEPENDS ${dir}/prelude.h ${GENERATED}/kernel_tiling/kernel_tiling.h
        DEPFILE ${dir}/prelude.h.gch.d
        COMMENT "vendor check: ${chip} ${mode} headers precompiled"
        VERBATIM)
      set(prelude_depends ${dir}/prelude.h.gch)
    endif()
    list(JOIN command "\", \"" quoted)
    string(APPEND FLAGS_JSON "${separator}\"${chip}/${mode}\": [\"${quoted}\"]")
    set(separator ", ")
    set(limits)
    if(mode STREQUAL "npu")
      set(limits --npu-branch)
    endif()
    foreach(build ${KERNEL_BUILDS})
      string(REPLACE "," ";" fields "${build}")
      list(POP_FRONT fields build_chip source name)
      if(NOT build_chip STREQUAL chip)
        continue()
      endif()
      list(TRANSFORM fields PREPEND -D OUTPUT_VARIABLE macros)
      set(stamp ${dir}/${name}.ok)
      add_custom_command(
        OUTPUT ${stamp}
        COMMAND ${AIRFUSE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/syntax_check.py --stamp ${stamp} ${limits} --
                ${command} ${macros} -MD -MF ${stamp}.d -MT ${stamp} ${AIRFUSE_ROOT}/kernels/${source}
        DEPENDS ${AIRFUSE_ROOT}/kernels/${source} ${CMAKE_CURRENT_SOURCE_DIR}/syntax_check.py
                ${GENERATED}/kernel_tiling/kernel_tiling.h ${prelude_depends}
        DEPFILE ${stamp}.d
        COMMENT "vendor check: ${source} ${chip} ${mode} (${fields})"
        VERBATIM)
      list(APPEND STAMPS ${stamp})
      list(JOIN fields "\", \"" quoted_macros)
      string(APPEND BUILDS_JSON "${build_separator}\n {\"chip\": \"${chip}\", \"mode\": \"${mode}\", \"source\": \"${source}\", "
             "\"name\": \"${name}\", \"macros\": [\"${quoted_macros}\"], \"stamp\": \"${stamp}\"}")
      set(build_separator ",")
    endforeach()
  endforeach()
endforeach()
string(APPEND FLAGS_JSON "}}\n")
string(APPEND BUILDS_JSON "\n]\n")
file(WRITE ${VENDOR_KERNELS}/flags.json "${FLAGS_JSON}")
file(WRITE ${VENDOR_KERNELS}/builds.json "${BUILDS_JSON}")
add_custom_target(vendor_kernels ALL DEPENDS ${STAMPS})
