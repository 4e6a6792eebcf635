// Stands for CANN's stub_fun.h (not public) in the vendor-API twin: the CCE intrinsics and
// CPU-debug bookkeeping calls that CANN's real Ascend C headers make, declared as the headers call
// them (asc-devkit impl/basic_api/dav_c220; the table in twin/vendor_api/README.md names the
// caller of each), and implemented by airfuse's model of the AI core (twin/vendor_api/src).
//
// Every name of cce_intrinsic_names.h is also declared as `result name(AnyOperand, ...)`, defined
// to stop the launch naming the intrinsic. Its first operand needs a user-defined conversion and
// the rest an ellipsis, the worst matches overload resolution knows, so a call the typed
// declarations below accept always reaches them; a call they do not (an intrinsic, or operand
// types, the model does not implement) still compiles, since the headers instantiate paths no
// airfuse kernel runs (the cube core's copies, say), but refuses at run time instead of doing
// something unmodelled. Each name is also declared without operands, `result name()`: its
// refusal is a weak definition, which the model's own definition replaces where it implements it.
#ifndef AIRFUSE_VENDOR_TWIN_STUB_FUN_H
#define AIRFUSE_VENDOR_TWIN_STUB_FUN_H
#include <cstdint>
#include "cce_intrinsic_names.h"

struct AnyOperand {
    template <typename T> AnyOperand(const T&) {}
};
#define AIRFUSE_UNMODELLED_VALUE(result, name) result name(AnyOperand, ...); result name();
#define AIRFUSE_UNMODELLED_EFFECT(name) AIRFUSE_UNMODELLED_VALUE(void, name)
AIRFUSE_CCE_VALUE_INTRINSICS(AIRFUSE_UNMODELLED_VALUE)
AIRFUSE_CCE_EFFECT_INTRINSICS(AIRFUSE_UNMODELLED_EFFECT)
AIRFUSE_CPU_DEBUG_BOOKKEEPING(AIRFUSE_UNMODELLED_EFFECT)
#undef AIRFUSE_UNMODELLED_EFFECT
#undef AIRFUSE_UNMODELLED_VALUE

// ---- synchronisation and control registers ----
void set_flag(pipe_t from, pipe_t to, event_t id);
void wait_flag(pipe_t from, pipe_t to, event_t id);
void pipe_barrier(pipe_t pipe);
int64_t get_ctrl();
void set_mask_norm();
void set_mask_count();
void set_vector_mask(uint64_t high, uint64_t low);
void set_mov_pad_val(uint64_t bits);
void set_padding(uint64_t bits);
void set_l1_3d_size(uint64_t bytes);
void set_atomic_none();
void dcci(void* gm, uint64_t entire);
void dcci(void* gm, cache_line_t line);  // dav_m200 TPipe::Destroy, kernel_tpipe_impl.h
// Cross-core flags (SyncAll): config = 1 | mode << 4 | flag id << 8 (dav_c220 GetffstMsg).
void ffts_cross_core_sync(pipe_t pipe, uint64_t config);
void wait_flag_dev(int64_t flagId);
// ---- scalar bit operations (TPipe's event-id pool) ----
int64_t sff0(uint64_t bits);
uint64_t sbitset0(uint64_t bits, int64_t index);
uint64_t sbitset1(uint64_t bits, int64_t index);

// ---- GM <-> UB copies (MTE2 in, MTE3 out) ----
// DataCopy: nBurst bursts of lenBurst 32 B blocks, srcGap / dstGap 32 B blocks between bursts.
void copy_gm_to_ubuf(void* ub, void* gm, uint8_t sid, uint16_t nBurst, uint16_t lenBurst, uint16_t srcGap, uint16_t dstGap);
void copy_ubuf_to_gm(void* gm, void* ub, uint8_t sid, uint16_t nBurst, uint16_t lenBurst, uint16_t srcGap, uint16_t dstGap);
// DataCopyPad: nBurst bursts of lenBurst bytes; the GM gap in bytes, the UB gap in 32 B blocks;
// each UB burst starts 32 B-aligned, with leftPad / rightPad elements of set_mov_pad_val.
#define AIRFUSE_ALIGN_COPIES(bits)                                                                                       \
    void copy_gm_to_ubuf_align_b##bits(void* ub, void* gm, uint8_t sid, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad, \
                                       uint8_t rightPad, uint32_t srcGap, uint32_t dstGap);                              \
    void copy_ubuf_to_gm_align_b##bits(void* gm, void* ub, uint8_t sid, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad, \
                                       uint8_t rightPad, uint32_t srcGap, uint32_t dstGap);
AIRFUSE_ALIGN_COPIES(8)
AIRFUSE_ALIGN_COPIES(16)
AIRFUSE_ALIGN_COPIES(32)
#undef AIRFUSE_ALIGN_COPIES

// ---- vector instructions: repeat, block strides (32 B units), repeat strides (32 B units) ----
#define AIRFUSE_VECTOR_BINARY(name, T)                                                                            \
    void name(T* dst, T* src0, T* src1, uint8_t repeat, uint8_t dstBlockStride, uint8_t src0BlockStride,          \
              uint8_t src1BlockStride, uint8_t dstRepeatStride, uint8_t src0RepeatStride, uint8_t src1RepeatStride);
#define AIRFUSE_VECTOR_BINARY_TYPES(name) AIRFUSE_VECTOR_BINARY(name, float) AIRFUSE_VECTOR_BINARY(name, half)
AIRFUSE_VECTOR_BINARY_TYPES(vadd)
AIRFUSE_VECTOR_BINARY(vsub, float)
AIRFUSE_VECTOR_BINARY(vmul, float)
AIRFUSE_VECTOR_BINARY(vdiv, float)
AIRFUSE_VECTOR_BINARY(vmadd, float)
AIRFUSE_VECTOR_BINARY(vmla, float)
#undef AIRFUSE_VECTOR_BINARY_TYPES
#undef AIRFUSE_VECTOR_BINARY

// With a scalar operand: repeat, block strides, repeat strides.
void vadds(float* dst, float* src, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint16_t dstRepeatStride,
           uint16_t srcRepeatStride);
void vmuls(float* dst, float* src, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint16_t dstRepeatStride,
           uint16_t srcRepeatStride);
void vaxpy(float* dst, float* src, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride,
           uint8_t srcRepeatStride);
void vmaxs(float* dst, float* src, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride,
           uint8_t srcRepeatStride, bool flag0, bool flag1);
void vmins(float* dst, float* src, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride,
           uint8_t srcRepeatStride, bool flag0, bool flag1);
void vsqrt(float* dst, float* src, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride, uint8_t srcRepeatStride);
void vexp(float* dst, float* src, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride, uint8_t srcRepeatStride);
void vabs(float* dst, float* src, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride, uint8_t srcRepeatStride);
void vector_dup(float* dst, float scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride,
                uint8_t srcRepeatStride);
void vector_dup(uint32_t* dst, uint32_t scalar, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride,
                uint8_t srcRepeatStride);
// Reductions and data rearrangement (src/reduce_intrinsics.cpp).
// dav_c220 with the accumulate flag; dav_m200 without (kernel_operator_vec_reduce_impl.h of each).
void vcadd(float* dst, float* src, uint8_t repeat, uint16_t dstRepeatStride, uint16_t srcBlockStride, uint16_t srcRepeatStride, uint8_t accumulate);
void vcadd(float* dst, float* src, uint8_t repeat, uint16_t dstRepeatStride, uint16_t srcBlockStride, uint16_t srcRepeatStride);
int64_t get_acc_val();
void vbrcb(uint32_t* dst, uint32_t* src, uint16_t dstBlockStride, uint16_t dstRepeatStride, uint8_t repeat);
// dav_c220 with its operands; dav_m200 with one config word (kernel_operator_vec_gather_impl.h of each).
void vgather(uint32_t* dst, uint32_t* offsets, uint32_t sourceAddress, uint16_t dstRepeatStride, uint8_t repeat);
void vgather(uint32_t* dst, uint32_t* offsets, uint64_t config);

// Conversions vconv_<src>2<dst><round mode>: repeat, block strides, repeat strides.
#define AIRFUSE_VECTOR_CONVERT(name, D, S) \
    void name(D* dst, S* src, uint8_t repeat, uint16_t dstBlockStride, uint16_t srcBlockStride, uint8_t dstRepeatStride, uint8_t srcRepeatStride);
AIRFUSE_VECTOR_CONVERT(vconv_f162f32, float, half)
AIRFUSE_VECTOR_CONVERT(vconv_bf162f32, float, bfloat16_t)
AIRFUSE_VECTOR_CONVERT(vconv_f322f16, half, float)
AIRFUSE_VECTOR_CONVERT(vconv_f322f16r, half, float)
AIRFUSE_VECTOR_CONVERT(vconv_f322bf16r, bfloat16_t, float)
AIRFUSE_VECTOR_CONVERT(vconv_f322s32f, int32_t, float)
AIRFUSE_VECTOR_CONVERT(vconv_f322s32r, int32_t, float)
AIRFUSE_VECTOR_CONVERT(vconv_s322f32, float, int32_t)
#undef AIRFUSE_VECTOR_CONVERT

// ---- CPU-debug bookkeeping of TPipe / TQue (impl/basic_api/kernel_tpipe_impl.h, kernel_tquebind_impl.h) ----
void AscendCBufAbsAddr(uint8_t hardware, uint64_t addr, uint32_t bytes);
void AscendCBufInit(uint8_t position, uint8_t isTBuf, uint8_t num, uint64_t addr, uint32_t bytes);
void AscendCQueCreate(uint8_t src, uint8_t dst, int32_t depth);
void AscendCBufGet(uint8_t position, uint8_t hardware, uint64_t addr, uint32_t bytes);
void AscendCBufAlloc(uint8_t hardware, uint8_t position, uint64_t addr, uint64_t bytes);
void AscendCBufEnque(uint8_t src, uint8_t dst, uint8_t position, uint64_t addr);
void AscendCBufDeque(uint8_t src, uint8_t dst, uint8_t position, uint64_t addr);
void AscendCBufFree(uint8_t hardware, uint8_t position, uint64_t addr, uint64_t bytes);
void AscendCUpdateTbufPoolStatus(uint64_t pool, bool used);
void AscendCTBufPoolResetCheck(uint8_t position, uint64_t addr, uint64_t bytes, uint64_t pool);

#endif
