// Stands for CANN's stub_fun.h, which is not public: the declarations of the CCE intrinsics
// (the instructions bisheng knows as builtins) and of the enums they take, as the real Ascend C
// headers (asc-devkit/impl/basic_api) call them. The real headers include it by this name, in
// their CPU-debug branch (impl/basic_api/kernel_event.h) and, through npu_keywords.h, in the
// NPU-branch check too.
//
// Why it is safe for the check: the vendor check compiles with -fsyntax-only and never links or
// runs, so each intrinsic only has to be a name the headers can call. Every intrinsic is a
// catch-all template that accepts any arguments: the check therefore proves nothing about how the
// vendor's own headers call their intrinsics (the vendor builds those), but everything about how
// airfuse's kernels call the public API. Intrinsics whose result the headers use return the type
// the headers store it in (int64_t, or uint64_t where they return it as such); the others return
// void, so a header that used a value we declared void would fail loudly rather than pass.
//
// The names and enums come from cce_intrinsic_names.h, which the vendor-API twin shares.
#ifndef AIRFUSE_VENDOR_CHECK_STUB_FUN_H
#define AIRFUSE_VENDOR_CHECK_STUB_FUN_H
#include <cstdint>

#include "cce_intrinsic_names.h"

#define AIRFUSE_CCE_INTRINSIC(result, name) \
    template <typename... Operands>          \
    result name(Operands&&...);

#define AIRFUSE_CCE_EFFECT_INTRINSIC(name) AIRFUSE_CCE_INTRINSIC(void, name)
AIRFUSE_CCE_VALUE_INTRINSICS(AIRFUSE_CCE_INTRINSIC)
AIRFUSE_CCE_EFFECT_INTRINSICS(AIRFUSE_CCE_EFFECT_INTRINSIC)
#undef AIRFUSE_CCE_EFFECT_INTRINSIC
#undef AIRFUSE_CCE_INTRINSIC

#define AIRFUSE_BOOKKEEPING_CALL(name) \
    template <typename... Operands>    \
    void name(Operands&&...);
AIRFUSE_CPU_DEBUG_BOOKKEEPING(AIRFUSE_BOOKKEEPING_CALL)
#undef AIRFUSE_BOOKKEEPING_CALL

#endif
