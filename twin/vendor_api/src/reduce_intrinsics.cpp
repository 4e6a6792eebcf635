// Reductions and data rearrangement. Operands as asc-devkit impl/basic_api/dav_c220 passes them
// (dav_m200's vcadd and vgather below, where they differ):
// kernel_operator_vec_reduce_impl.h (vcadd: ReduceSumImpl's count form runs it in counter mode
// with the accumulate flag 1, then reads the sum on the scalar unit with get_acc_val and stores it
// to dst[0] itself; WholeReduceSumImpl runs it with flag 0, one result per repeat at
// dst + r * dstRepStride elements), kernel_operator_vec_brcb_impl.h (vbrcb, after ResetMask) and
// kernel_operator_vec_gather_impl.h (vgather: the source's host address reaches the model through
// SetModelGatherbSrc0Tensor, the instruction gets its low 32 bits).
// The order of a sum is not documented: each repeat's active elements are summed as a pairwise
// tree, and the repeats of an accumulating vcadd one after another (home-made reading,
// twin/include/twin/vector.h ReduceSum / WholeReduceSum).
#include <vector>
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"
#include "vector_engine.h"

using namespace airfuse_vendor_twin;

namespace {
float TreeSum(std::vector<float>& v) {
    if (v.empty()) return 0.0f;
    for (size_t w = 1; w < v.size(); w *= 2)
        for (size_t i = 0; i + w < v.size(); i += 2 * w) v[i] = v[i] + v[i + w];
    return v[0];
}
}  // namespace

namespace {
// Each repeat's active elements of src, summed as a pairwise tree; the instruction issued.
std::vector<float> RepeatSums(uint8_t repeat, float* src, uint16_t srcBlockStride, uint16_t srcRepeatStride, Instr& in) {
    std::vector<std::vector<float>> repeats;
    VecOperand ops[1] = {{"src", reinterpret_cast<uint8_t*>(src), sizeof(float), srcBlockStride, srcRepeatStride, false}};
    in = ForEachActive("vcadd", repeat, ops, [&](uint64_t r, uint8_t* const* at) {
        if (repeats.size() <= r) repeats.resize(r + 1);
        repeats[r].push_back(Load<float>(at[0]));
    });
    std::vector<float> sums;
    for (std::vector<float>& r : repeats) sums.push_back(TreeSum(r));
    // Count-only: no element was read; every repeat still stores its (unknown) sum.
    const Core& c = Cur();
    if (c.countOnly) sums.assign(c.counterMode ? (c.maskLow + 63) / 64 : repeat, 0.0f);
    return sums;
}

// One sum per repeat at dst + r * dstRepeatStride elements.
void StoreRepeatSums(const Instr& in, float* dst, uint16_t dstRepeatStride, const std::vector<float>& sums) {
    Core& c = Cur();
    for (size_t r = 0; r < sums.size(); ++r) {
        uint8_t* to = reinterpret_cast<uint8_t*>(dst + r * dstRepeatStride);
        c.order.Touch(in, "dst", CheckUb("vcadd", "dst", to, sizeof(float)), sizeof(float), true);
        if (!c.countOnly) Store<float>(to, sums[r]);
    }
}
}  // namespace

// dav_c220: accumulate 1 sums the repeats in order into the accumulator (dst not written); 0 writes each repeat's sum.
void vcadd(float* dst, float* src, uint8_t repeat, uint16_t dstRepeatStride, uint16_t srcBlockStride, uint16_t srcRepeatStride, uint8_t accumulate) {
    Instr in;
    std::vector<float> sums = RepeatSums(repeat, src, srcBlockStride, srcRepeatStride, in);
    if (!accumulate) return StoreRepeatSums(in, dst, dstRepeatStride, sums);
    Core& c = Cur();
    float sum = 0.0f;
    for (size_t r = 0; r < sums.size(); ++r) sum = r == 0 ? sums[r] : sum + sums[r];
    c.accumulator = 0;
    std::memcpy(&c.accumulator, &sum, sizeof sum);
    c.accumulatorWriter = in;
}

// dav_m200 has no accumulator: every vcadd writes each repeat's sum (WholeReduceSumImpl, and the
// steps of ReduceSumImpl, which sum the repeats' sums again with vcadd).
void vcadd(float* dst, float* src, uint8_t repeat, uint16_t dstRepeatStride, uint16_t srcBlockStride, uint16_t srcRepeatStride) {
    Instr in;
    std::vector<float> sums = RepeatSums(repeat, src, srcBlockStride, srcRepeatStride, in);
    StoreRepeatSums(in, dst, dstRepeatStride, sums);
}

// The accumulated sum's bits in the low bytes (ReduceSumImpl reinterprets them as the element type).
// A register read on the scalar unit: ordered after the vcadd, but no UB or GM access, so the cost
// model charges nothing for it (the scalar store of the sum that follows is costed).
int64_t get_acc_val() {
    Core& c = Cur();
    c.order.ReadResult(c.order.Issue(kPipeS, "get_acc_val"), c.accumulatorWriter, "the accumulator");
    int64_t v;
    std::memcpy(&v, &c.accumulator, sizeof v);
    return v;
}

// Each repeat takes 8 source elements; element j fills the 32 B block j of the repeat's
// destination (Brcb.md), blocks dstBlockStride and repeats dstRepeatStride 32 B units apart.
void vbrcb(uint32_t* dst, uint32_t* src, uint16_t dstBlockStride, uint16_t dstRepeatStride, uint8_t repeat) {
    Core& c = Cur();
    uint8_t* d = reinterpret_cast<uint8_t*>(dst);
    Instr in = c.order.Issue(kPipeV, "vbrcb");
    twin::CostOpen(c.cost, kPipeV);
    twin::CostVector(c.cost, IntrinsicVecClass("vbrcb"), uint64_t(repeat) * 64, sizeof(uint32_t), "vbrcb");  // a 256 B repeat each
    uint64_t srcBytes = uint64_t(repeat) * 8 * sizeof(uint32_t);
    uint64_t srcAt = CheckUb("vbrcb", "src", src, srcBytes), dstAt = CheckUb("vbrcb", "dst", d, 0);
    if (dstAt % 32) Fail("vbrcb", "dst is not 32 B-aligned");
    // Brcb.md's constraints: a dst block stride of 0 is undefined behaviour, and src and dst must
    // not share memory (refused for any overlap of src with the span dst's blocks cover).
    if (dstBlockStride == 0) Fail("vbrcb", "dst block stride 0 is not supported (Brcb.md: undefined behaviour)");
    uint64_t dstSpan = repeat ? ((uint64_t(repeat) - 1) * dstRepeatStride + 7 * uint64_t(dstBlockStride) + 1) * 32 : 0;
    if (srcAt < dstAt + dstSpan && dstAt < srcAt + srcBytes)
        Fail("vbrcb", Fmt("src UB [%llu, %llu) overlaps dst's span [%llu, %llu): src and dst must not share memory (Brcb.md)",
                          (unsigned long long)srcAt, (unsigned long long)(srcAt + srcBytes), (unsigned long long)dstAt,
                          (unsigned long long)(dstAt + dstSpan)));
    c.order.Touch(in, "src", srcAt, srcBytes, false);
    for (uint32_t r = 0; r < repeat; ++r)
        for (uint32_t j = 0; j < 8; ++j) {
            uint8_t* block = d + (uint64_t(r) * dstRepeatStride + uint64_t(j) * dstBlockStride) * 32;
            c.order.Touch(in, "dst", CheckUb("vbrcb", "dst", block, 32), 32, true);
            if (c.countOnly) continue;
            uint32_t v = src[r * 8 + j];
            for (uint32_t k = 0; k < 8; ++k) Store<uint32_t>(block + k * 4, v);
        }
}

// vgather's source, from the model hook of the CPU-debug Gather (src/vendor_namespace.cpp).
namespace airfuse_vendor_twin {
void SetGatherSource(uint64_t src, uint32_t length) {
    Core& c = Cur();
    c.gatherSource = reinterpret_cast<uint8_t*>(uintptr_t(src));
    c.gatherSourceLength = length;
}
}  // namespace airfuse_vendor_twin

namespace {
// dst element i = the 32-bit word at byte offset offsets[i] from the source (Gather.md); offsets
// walk contiguously, dst repeats dstRepeatStride 32 B units apart, under the mask.
void Gather(uint32_t* dst, uint32_t* offsets, uint32_t sourceAddress, uint16_t dstRepeatStride, uint8_t repeat) {
    Core& c = Cur();
    if (!c.gatherSource || uint32_t(uintptr_t(c.gatherSource)) != sourceAddress)
        Fail("vgather", "the source address does not match the one SetModelGatherbSrc0Tensor gave");
    VecOperand ops[2] = {{"dst", reinterpret_cast<uint8_t*>(dst), 4, 1, dstRepeatStride, true},
                         {"offsets", reinterpret_cast<uint8_t*>(offsets), 4, 1, 8, false}};
    Instr in = ForEachActive("vgather", repeat, ops, [&](uint64_t, uint8_t* const* at) {
        uint32_t off = Load<uint32_t>(at[1]);
        if (off % 4) Fail("vgather", Fmt("offset %u is not element-aligned", off));
        if (off + 4 > uint64_t(c.gatherSourceLength) * 4)
            Fail("vgather", Fmt("offset %u bytes lies outside the %u-element source", off, c.gatherSourceLength));
        CheckUb("vgather", "source", c.gatherSource + off, 4);
        Store<uint32_t>(at[0], Load<uint32_t>(c.gatherSource + off));
    });
    // Which source elements the offsets pick is data: the whole source counts as read.
    uint64_t bytes = uint64_t(c.gatherSourceLength) * 4;
    c.order.Touch(in, "source", CheckUb("vgather", "source", c.gatherSource, bytes), bytes, false);
}
}  // namespace

// dav_c220: the source address, dst repeat stride and repeat as operands.
void vgather(uint32_t* dst, uint32_t* offsets, uint32_t sourceAddress, uint16_t dstRepeatStride, uint8_t repeat) {
    Gather(dst, offsets, sourceAddress, dstRepeatStride, repeat);
}

// dav_m200: one config word, bits 0-31 the source address, 32-39 the dst repeat stride, 56-63 the
// repeat (dav_m200 GatherImpl).
void vgather(uint32_t* dst, uint32_t* offsets, uint64_t config) {
    Gather(dst, offsets, uint32_t(config), uint16_t(config >> 32 & 0xff), uint8_t(config >> 56));
}
