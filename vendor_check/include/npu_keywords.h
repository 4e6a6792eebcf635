// Stands for what bisheng (CANN's kernel compiler) knows without any header, so that g++ can read
// the real headers' NPU branch (no ASCENDC_CPU_DEBUG): the address-space qualifiers and function
// attributes of its CCE dialect, its 16-bit float types and its CCE intrinsics.
//
// Why it is safe for the check: the qualifiers expand to nothing, as the vendor's own CPU-debug
// headers (asc-tools' stub_def.h) expand them, so g++ checks the C++ underneath (types, const,
// overloads, templates) and not the address spaces. half and bfloat16_t are the vendor's public
// CPU-debug classes (asc-tools' kernel_fp16.h, kernel_bf16.h). What an empty address space hides
// is listed in vendor_check/README.md ("NPU branch"): overloads that differ only in the address
// space of a pointer, which g++ then sees as one function defined twice.
#ifndef AIRFUSE_VENDOR_CHECK_NPU_KEYWORDS_H
#define AIRFUSE_VENDOR_CHECK_NPU_KEYWORDS_H
// Before any vendor header: asc-devkit's impl/utils/std/utility/integer_sequence.h includes
// <cstddef> inside namespace AscendC::Std, which only works where the toolchain has included it
// already (bisheng's driver and the CPU-debug stub_def.h both have).
#include <cstddef>
#include <cstdint>
#include "kernel_fp16.h"
#include "kernel_bf16.h"

#define __aicore__
#define __host__
#define __global__
#define __host_aicore__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __biasbuf__
#define __ssbuf__
#define __inout_pipe__(...)
#define __in_pipe__(...)
#define __out_pipe__(...)
#define __sync_alias__
#define __sync_noalias__
#define __sync_in__
#define __sync_out__
#define __check_sync_alias__
#define __simd_callee__
#define __simd_vf__

// Register types of the vector-function dialect: only named by reg_compute headers of chips
// airfuse does not build for, so opaque types are enough.
struct vector_bool {};
struct vector_align {};
struct vector_address {};

// The core's index, a builtin variable of bisheng that 310P's headers read.
extern int64_t block_idx;

// bisheng's profiling builtins.
namespace bisheng::cce {
void metrics_prof_start();
void metrics_prof_stop();
}  // namespace bisheng::cce

#include "stub_fun.h"
#endif
