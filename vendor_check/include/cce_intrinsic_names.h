// The names and operand enums of the CCE intrinsics (the instructions bisheng knows as builtins)
// and the CPU-debug bookkeeping calls that CANN's real Ascend C headers (asc-devkit/impl/basic_api)
// reach on the 910B vector core (dav_c220) and 310P (dav_m200), as X-macro lists. CANN's own
// stub_fun.h, which declares them, is not public. Two users declare them from these lists:
// vendor_check/include/stub_fun.h (catch-all templates for a syntax check) and
// twin/vendor_api/include/stub_fun.h (the vendor-API twin: typed declarations of the intrinsics it
// implements, and a refusal for the others).
//
// The names are those the headers call on the paths airfuse's kernels reach, and those their other
// vector APIs call there: the compiler names any that is missing, so a newer asc-devkit that calls
// a new intrinsic fails with "'<name>' was not declared", and the name is added here.
#ifndef AIRFUSE_CCE_INTRINSIC_NAMES_H
#define AIRFUSE_CCE_INTRINSIC_NAMES_H
#include <cstdint>

// Pipes and events of set_flag / wait_flag / pipe_barrier (the values only name them).
enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX };
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// Operand enums the headers only cast to, compare or pass through: the enumerators are the ones
// the headers name.
enum mem_t {};
enum mem_dsb_t {};
enum pad_t { PAD_NONE };
enum atomic_type_t {};
enum atomic_op_t {};
enum addr_cal_mode_t { inc, dec };
enum ub_addr8_t { VA0, VA1, VA2, VA3, VA4, VA5, VA6, VA7 };
enum vtrans_half_t { L128, H128 };
enum csize_t { CSIZE0, CSIZE1 };
enum ConvRelu_t {
    CRMODE_NONE, CRMODE_F32toF16_NONE, CRMODE_F32toF16_RELU, CRMODE_S32toF16_NONE, CRMODE_F16toF32_NONE,
    CRMODE_NONE_RELU, CRMODE_F16_MUL, CRMODE_S32toF16_DEQSCALE_SPR, CRMODE_DEQSCALE_VDEQ8, CRMODE_DEQSCALE_DEQ8,
    CRMODE_DEQSCALE_VDEQ16, CRMODE_DEQSCALE_DEQ16, CRMODE_DEQSCALE_VDEQS16, CRMODE_DEQSCALE_DEQS16
};
enum class cache_line_t { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE };
enum class dcci_dst_t { CACHELINE_ALL, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum class Order_t { VALUE_INDEX, INDEX_VALUE, ONLY_VALUE, ONLY_INDEX };
enum class QuantMode_t {
    NoQuant, F322F16, F322BF16, DEQF16, VDEQF16, DEQS16, VDEQS16, REQ8, VREQ8, REQ4, VREQ4,
    QF322B8_PRE, VQF322B8_PRE, QF322F16_PRE, VQF322F16_PRE, QF322BF16_PRE, VQF322BF16_PRE, QS322BF16_PRE, VQS322BF16_PRE,
    QF322F32_PRE, VQF322F32_PRE, QF322FP8_PRE, VQF322FP8_PRE, QF322HIF8_PRE, VQF322HIF8_PRE, QF322HIF8_PRE_HYBRID,
    VQF322HIF8_PRE_HYBRID, QF162B8_PRE, VQF162B8_PRE, QF162S16_PRE, VQF162S16_PRE, QF162S4_PRE, VQF162S4_PRE
};

// Scalar-unit instructions whose result the headers use, with the type they store it in.
#define AIRFUSE_CCE_VALUE_INTRINSICS(X)                                                                          \
    X(int64_t, get_block_idx) X(int64_t, get_block_num) X(int64_t, get_subblockdim) X(int64_t, get_coreid)     \
    X(int64_t, get_data_main_base) X(int64_t, get_subblockid) X(int64_t, get_ctrl)          \
    X(int64_t, get_status) X(int64_t, get_vms4_sr) X(int64_t, get_acc_val) X(int64_t, get_max_min_cnt)           \
    X(int64_t, get_rsvd_cnt) X(int64_t, get_arch_ver) X(int64_t, get_sys_cnt) X(int64_t, get_pc) X(int64_t, get_icache_prl_st)           \
    X(int64_t, get_st_atomic_cfg) X(int64_t, sff0) X(int64_t, sff1) X(int64_t, bcnt0) X(int64_t, bcnt1)          \
    X(int64_t, clz) X(int64_t, sflbits) X(uint64_t, get_imm) X(uint64_t, sbitset0) X(uint64_t, sbitset1)         \
    X(int32_t, conv_f322s32a) X(int32_t, conv_f322s32c) X(int32_t, conv_f322s32f) X(int32_t, conv_f322s32r)     \
    X(uint16_t, conv_f322f16o)

// Instructions the headers call for their effect only.
#define AIRFUSE_CCE_EFFECT_INTRINSICS(X)                                                                         \
    /* synchronisation, control registers, caches */                                                            \
    X(set_flag) X(wait_flag) X(pipe_barrier) X(hset_flag) X(hwait_flag) X(ffts_cross_core_sync) X(wait_flag_dev) \
    X(set_ffts_base_addr) X(dsb) X(dcci) X(preload) X(dc_preload) X(trap) X(set_ctrl) X(set_fpc) X(ld_dev)       \
    X(st_dev) X(set_st_atomic_cfg) X(set_mask_count) X(set_mask_norm) X(set_vector_mask) X(set_cmpmask)          \
    X(set_deqscale) X(set_va_reg_sb) X(vld_va_reg) X(set_padding) X(set_mov_pad_val) X(set_nd_para)              \
    X(set_quant_pre) X(set_l1_3d_size) X(set_l3d_rpt) X(set_fmatrix) X(set_fmatrix_b)                             \
    X(set_atomic_add) X(set_atomic_max) X(set_atomic_min) X(set_atomic_none) X(set_atomic_f32) X(set_atomic_f16) \
    X(set_atomic_bf16) X(set_atomic_s32) X(set_atomic_s16) X(set_atomic_s8)                                      \
    X(set_data_exp_0) X(set_data_exp_1) X(set_data_exp_2) X(set_data_exp_3)                                      \
    X(set_aipp_spr_0) X(set_aipp_spr_1) X(set_aipp_spr_2) X(set_aipp_spr_3) X(set_aipp_spr_4) X(set_aipp_spr_5)  \
    X(set_aipp_spr_6) X(set_aipp_spr_7) X(set_aipp_spr_8) X(set_aipp_spr_9) X(set_aipp_spr_18)                   \
    X(set_aipp_spr_19) X(set_aipp_spr_20) X(set_aipp_spr_21)                                                     \
    /* data movement between global memory, L1 (cbuf), unified buffer (ubuf) and the cube buffers */             \
    X(copy_gm_to_ubuf) X(copy_gm_to_ubuf_align_b16) X(copy_gm_to_ubuf_align_b32) X(copy_ubuf_to_gm)         \
    X(copy_ubuf_to_gm_align_b16) X(copy_ubuf_to_gm_align_b32)               \
    X(copy_ubuf_to_ubuf) X(copy_gm_to_cbuf) X(copy_cbuf_to_gm) X(copy_cbuf_to_ubuf) X(copy_ubuf_to_cbuf)          \
    X(copy_cbuf_to_bt) X(copy_cbuf_to_fbuf) X(copy_gm_to_cbuf_multi_nd2nz_b8) X(copy_gm_to_cbuf_multi_nd2nz_b16)  \
    X(copy_gm_to_cbuf_multi_nd2nz_b32s) X(copy_matrix_cc_to_ubuf) X(copy_matrix_ubuf_to_cc)                       \
    X(copy_vector_cc_to_ubuf) X(copy_vector_ubuf_to_cc) X(create_ca_matrix) X(create_cb_matrix)                   \
    X(create_cbuf_matrix) X(img2colv2_cbuf_to_ca) X(img2colv2_cbuf_to_ca_s4) X(img2colv2_cbuf_to_cb)              \
    X(img2colv2_cbuf_to_cb_s4) X(load_cbuf_to_ca_s4) X(load_cbuf_to_cb_s4) X(load_cbuf_to_cb_sp)                  \
    X(load_cbuf_to_cb_transpose_s4) X(load_gm_to_cb_unzip) X(load_gm_to_cbuf_unzip) X(load_unzip_index_from_gm)   \
    X(mad_sp) X(v4dtrans) X(vtranspose) X(scatter_vnchwconv_b8) X(scatter_vnchwconv_b16)                         \
    X(scatter_vnchwconv_b32) X(vgather) X(vscatter) X(vpadding) X(vbrcb) X(vector_dup) X(vcopy)                   \
    /* vector arithmetic, reductions, comparisons */                                                            \
    X(vadd) X(vsub) X(vmul) X(vdiv) X(vmax) X(vmin) X(vand) X(vor) X(vnot) X(vshr) X(vabs) X(vexp) X(vln)         \
    X(vsqrt) X(vrec) X(vadds) X(vmuls) X(vmaxs) X(vmins) X(vaxpy) X(vmla) X(vmadd) X(vadddeqrelu) X(vsel)          \
    X(vreduce)                                                                                                  \
    X(vreducev2) X(vcadd) X(vcmax) X(vcmin) X(vcgadd) X(vcgmax) X(vcmpv_eq) X(vcmpv_ne) X(vcmpv_gt)              \
    X(vcmpv_ge) X(vcmpv_lt) X(vcmpv_le) X(vcmpvs_eq) X(vcmpvs_ne) X(vcmpvs_gt) X(vcmpvs_ge) X(vcmpvs_lt)          \
    X(vcmpvs_le) X(vcmp_eq) X(vcmp_ne) X(vcmp_gt) X(vcmp_ge) X(vcmp_lt) X(vcmp_le) X(vcgmin) X(vcpadd)           \
    X(vrelu) X(vlrelu) X(vrsqrt) X(vshl) X(vaddrelu) X(vsubrelu) X(vmaddrelu) X(vbi) X(vbitsort) X(vconcat)       \
    X(vextract) X(vgatherb) X(vmrgsort4) X(vmulconv_f162s8) X(vmulconv_f162u8) X(vcbd_s322s16) X(vconv_deq)       \
    X(vconv_deqs162b8) X(vaddreluconv_f162s8) X(copy_gm_to_ubuf_align_b8) X(copy_ubuf_to_gm_align_b8)            \
    /* vector conversions: source to destination type, then the round mode (a, c, f, r, z, o) */               \
    X(vconv_f162f32) X(vconv_f322f16) X(vconv_f322f16a) X(vconv_f322f16c) X(vconv_f322f16f) X(vconv_f322f16o)     \
    X(vconv_f322f16r) X(vconv_f322f16z) X(vconv_f322f32a) X(vconv_f322f32c) X(vconv_f322f32f) X(vconv_f322f32r)   \
    X(vconv_f322f32z) X(vconv_bf162f32) X(vconv_f322bf16a) X(vconv_f322bf16c) X(vconv_f322bf16f)                  \
    X(vconv_f322bf16r) X(vconv_f322bf16z) X(vconv_bf162s32a) X(vconv_bf162s32c) X(vconv_bf162s32f)                \
    X(vconv_bf162s32r) X(vconv_bf162s32z) X(vconv_f162s16a) X(vconv_f162s16c) X(vconv_f162s16f)                   \
    X(vconv_f162s16r) X(vconv_f162s16z) X(vconv_f162s32a) X(vconv_f162s32c) X(vconv_f162s32f) X(vconv_f162s32r)   \
    X(vconv_f162s32z) X(vconv_f162s4) X(vconv_f162s4a) X(vconv_f162s4c) X(vconv_f162s4f) X(vconv_f162s4r)         \
    X(vconv_f162s4z) X(vconv_f162s8) X(vconv_f162s8a) X(vconv_f162s8c) X(vconv_f162s8f) X(vconv_f162s8r)          \
    X(vconv_f162s8z) X(vconv_f162u8) X(vconv_f162u8a) X(vconv_f162u8c) X(vconv_f162u8f) X(vconv_f162u8r)          \
    X(vconv_f162u8z) X(vconv_f322s16a) X(vconv_f322s16c) X(vconv_f322s16f) X(vconv_f322s16r) X(vconv_f322s16z)    \
    X(vconv_f322s32a) X(vconv_f322s32c) X(vconv_f322s32f) X(vconv_f322s32r) X(vconv_f322s32z) X(vconv_f322s64a)   \
    X(vconv_f322s64c) X(vconv_f322s64f) X(vconv_f322s64r) X(vconv_f322s64z) X(vconv_s162f16) X(vconv_s162f16a)    \
    X(vconv_s162f16c) X(vconv_s162f16f) X(vconv_s162f16r) X(vconv_s162f16z) X(vconv_s162f32) X(vconv_s322f32)     \
    X(vconv_s322f32a) X(vconv_s322f32c) X(vconv_s322f32f) X(vconv_s322f32r) X(vconv_s322f32z) X(vconv_s322s16)    \
    X(vconv_s322s64) X(vconv_s42f16) X(vconv_s642f32a) X(vconv_s642f32c) X(vconv_s642f32f) X(vconv_s642f32r)      \
    X(vconv_s642f32z) X(vconv_s642s32) X(vconv_s82f16) X(vconv_u82f16)

// The CPU-debug runtime's bookkeeping of queues and buffers (asc-tools' libregfwk, whose header is
// not public), and its stand-ins for cross-core synchronisation.
#define AIRFUSE_CPU_DEBUG_BOOKKEEPING(X)                                                                         \
    X(AscendCBufInit) X(AscendCBufAlloc) X(AscendCBufFree) X(AscendCBufEnque) X(AscendCBufDeque) X(AscendCBufGet)  \
    X(AscendCBufAbsAddr) X(AscendCQueCreate) X(AscendCRecordPoolHierarchy) X(AscendCTBufPoolInit)                 \
    X(AscendCTBufPoolResetCheck) X(AscendCUpdateTbufPoolStatus) X(__ib_set_stub) X(__ib_wait_stub)               \
    X(__sync_all_stub)

#endif
