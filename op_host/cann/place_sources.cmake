# cmake -P script: put airfuse's op_host and kernel sources into the msOpGen project at PROJ,
# replacing the generated stubs. msOpGen names files by OpType in snake case (airfuse_rms_norm);
# airfuse names them by base name (rms_norm), so each op's pair is copied under the generated name.
file(READ ${JSON} _json)
string(JSON _n LENGTH "${_json}")
math(EXPR _last "${_n} - 1")
file(GLOB _generated_tiling ${PROJ}/op_host/*_tiling.h)
if(_generated_tiling)
  file(REMOVE ${_generated_tiling})  # macro-style stubs; airfuse's tiling structs live in kernels/*_tiling.h and kernels/*/*_tiling.h
endif()
foreach(i RANGE ${_last})
  string(JSON _type GET "${_json}" ${i} op)
  # AirfuseRmsNormGrad -> airfuse_rms_norm_grad (the kernel entry symbol) -> base name rms_norm_grad
  string(REGEX REPLACE "([a-z0-9])([A-Z])" "\\1_\\2" _snake "${_type}")
  string(TOLOWER "${_snake}" _snake)
  string(REGEX REPLACE "^airfuse_" "" _base "${_snake}")
  configure_file(${SRC}/op_host/${_base}.cpp ${PROJ}/op_host/${_snake}.cpp COPYONLY)
  configure_file(${SRC}/kernels/${_base}.cpp ${PROJ}/op_kernel/${_snake}.cpp COPYONLY)
endforeach()
file(GLOB _kernel_headers ${SRC}/kernels/*.h)
file(COPY ${_kernel_headers} DESTINATION ${PROJ}/op_kernel)
# Strategy classes of an op live in kernels/<op>/ (e.g. kernels/rms_norm/grad_*.h), included from
# its entry as "<op>/..."; their tiling structs also go to op_host/tiling/<op>/, where the planners include them.
file(GLOB _kernel_dirs LIST_DIRECTORIES true ${SRC}/kernels/*)
foreach(_dir ${_kernel_dirs})
  if(IS_DIRECTORY ${_dir})
    file(COPY ${_dir} DESTINATION ${PROJ}/op_kernel)
    file(COPY ${_dir} DESTINATION ${PROJ}/op_host/tiling FILES_MATCHING PATTERN "*_tiling.h")
  endif()
endforeach()
file(GLOB _host_headers ${SRC}/op_host/*.h)
file(COPY ${_host_headers} DESTINATION ${PROJ}/op_host)
file(GLOB _tiling ${SRC}/op_host/tiling/*.h ${SRC}/kernels/*_tiling.h)
file(COPY ${_tiling} DESTINATION ${PROJ}/op_host/tiling)
