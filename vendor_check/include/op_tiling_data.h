// Stands for the header CANN's op compiler generates per op and force-includes when it compiles a
// kernel whose tiling is a standard C++ struct (asc-devkit's
// tools/build/asc_op_compile_base/asc_op_compiler/get_op_tiling.py): InitTilingData and the
// GET_TILING_DATA_WITH_STRUCT macro, in the form it emits when the struct is registered with
// REGISTER_TILING_DEFAULT. The macro is what a kernel sees: `tiling_data` is a non-const
// reference to a struct filled from the GM tiling buffer, so the check holds kernels to that.
//
// Why it is safe for the check: the macro expands as the op compiler writes it; InitTilingData's
// body is the compiler's CPU-debug form (a byte copy), since the NPU form only moves the same
// bytes through UB with intrinsics that a syntax check cannot tell apart.
#ifndef AIRFUSE_VENDOR_CHECK_OP_TILING_DATA_H
#define AIRFUSE_VENDOR_CHECK_OP_TILING_DATA_H
#include <cstdint>
#include "kernel_tiling/kernel_tiling.h"

#define REGISTER_TILINGDATA_SIZE(tiling_struct, counter)

template <class T>
inline __aicore__ void InitTilingData(const __gm__ uint8_t* p_tilingdata, T* tilingdata)
{
    for (uint64_t i = 0; i < sizeof(T); ++i) {
        reinterpret_cast<uint8_t*>(tilingdata)[i] = p_tilingdata[i];
    }
}

#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg)                            \
    REGISTER_TILINGDATA_SIZE(tiling_struct, __COUNTER__);                                              \
    struct __AUX__STRUCT_ascendc_struct_mocker_##tiling_data {                                         \
        uint8_t data[sizeof(tiling_struct)];                                                           \
    } __attribute__((__may_alias__));                                                                  \
    __AUX__STRUCT_ascendc_struct_mocker_##tiling_data __aux__tiling_##tiling_data;                     \
    InitTilingData<tiling_struct>(tiling_arg, reinterpret_cast<tiling_struct*>(&__aux__tiling_##tiling_data)); \
    tiling_struct& tiling_data = reinterpret_cast<tiling_struct&>(*(&__aux__tiling_##tiling_data))

#endif
