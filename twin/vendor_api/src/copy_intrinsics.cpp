// GM <-> UB copies. Operands as asc-devkit impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h
// passes them: DataCopyGM2UBImpl / DataCopyUB2GMImpl (copy_gm_to_ubuf, copy_ubuf_to_gm: DataCopyParams
// in 32 B blocks) and DataCopyPadGm2UBImpl / DataCopyPadUB2GMImpl (copy_*_align_b8/16/32:
// DataCopyExtParams, burst length in bytes, the GM gap in bytes, the UB gap in 32 B blocks, each UB
// burst 32 B-aligned). Semantics of the parameters: CANN's DataCopy（GM与UB高维切分数据搬运）.md,
// DataCopyPad（GMToUB非对齐数据搬运）.md, DataCopyPad（UBToGM非对齐数据搬运）.md.
#include <cstring>
#include <iterator>
#include "core_model.h"
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

using namespace airfuse_vendor_twin;

namespace {
constexpr uint64_t kBlock = 32;

uint64_t RoundUp(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

void CheckUbAligned(const char* intrinsic, const char* operand, const void* p, uint64_t bytes) {
    uint64_t off = CheckUb(intrinsic, operand, p, bytes);
    if (off % kBlock) Fail(intrinsic, Fmt("%s at UB offset %llu is not 32 B-aligned", operand, (unsigned long long)off));
}

// The copy data paths, by the TPosition of the UB side's InitBuffer (the docs' "具体支持的数据通路"
// of DataCopy（GM与UB连续数据搬运）.md, DataCopy（GM与UB高维切分数据搬运）.md, DataCopyPad（GMToUB非对齐数据搬运）.md,
// DataCopyPad（UBToGM非对齐数据搬运）.md, as the home-made twin reads them): DataCopy GM -> UB only
// into VECIN and UB -> GM only from VECOUT; DataCopyPad either way with VECIN or VECOUT.
constexpr uint8_t kVecIn = 9, kVecOut = 10;
const char* PositionName(uint8_t p) { return p == kVecIn ? "VECIN" : p == kVecOut ? "VECOUT" : p == 11 ? "VECCALC" : "another TPosition"; }

void CheckPath(const char* intrinsic, const char* operand, const uint8_t* ub, bool padCopy, bool toUb) {
    const Core& c = Cur();
    uint64_t addr = uint64_t(uintptr_t(ub));
    auto it = c.ubRegions.upper_bound(addr);
    if (it == c.ubRegions.begin() || addr >= std::prev(it)->first + std::prev(it)->second.bytes)
        Fail(intrinsic, Fmt("%s at UB offset %llu lies in no InitBuffer", operand, (unsigned long long)(ub - c.ub)));
    uint8_t position = std::prev(it)->second.position;
    bool allowed = padCopy ? position == kVecIn || position == kVecOut : position == (toUb ? kVecIn : kVecOut);
    if (!allowed)
        Fail(intrinsic, Fmt("%s is in TPosition %s; %s %s takes %s only", operand, PositionName(position), padCopy ? "DataCopyPad" : "DataCopy",
                            toUb ? "GM -> UB" : "UB -> GM", padCopy ? "VECIN or VECOUT" : toUb ? "VECIN" : "VECOUT"));
}

// nBurst bursts of `burst` bytes; GM bursts gmStep apart, UB bursts ubStep apart.
struct Bursts {
    uint16_t n;
    uint64_t burst, gmStep, ubStep, ubBurst;  // ubBurst: what one burst occupies in UB
    uint64_t GmSpan() const { return n ? (n - 1) * gmStep + burst : 0; }
    uint64_t UbSpan() const { return n ? (n - 1) * ubStep + ubBurst : 0; }
};

void In(const char* intrinsic, uint8_t* ub, const uint8_t* gm, const Bursts& b, uint32_t left, uint32_t right, uint32_t elem, bool padCopy) {
    if (b.n == 0 || b.burst == 0) return;
    const GmBuffer& arg = CheckGm(intrinsic, "src", gm, b.GmSpan());
    CheckUbAligned(intrinsic, "dst", ub, b.UbSpan());
    CheckPath(intrinsic, "dst", ub, padCopy, true);
    Core& c = Cur();
    Instr in = c.order.Issue(kPipeMte2, intrinsic);
    twin::CostOpen(c.cost, kPipeMte2);
    for (uint16_t i = 0; i < b.n; ++i) {
        uint8_t* to = ub + i * b.ubStep;
        c.order.Touch(in, "dst", uint64_t(to - c.ub), b.ubBurst, true);
        c.gmOrder->Touch(c, in, "src", gm + i * b.gmStep, b.burst, false);
        twin::CostGm(c.cost, arg.base, uint64_t(gm + i * b.gmStep - arg.base), b.burst, false);
        if (c.countOnly) continue;
        // What the padding does not define stays undefined on the hardware: poisoned (NaN for
        // float types), so a kernel that reads it fails its comparison.
        std::memset(to, 0xff, b.ubBurst);
        for (uint32_t k = 0; k < left; ++k) std::memcpy(to + k * elem, &c.padValue, elem);
        std::memcpy(to + left * elem, gm + i * b.gmStep, b.burst);
        for (uint32_t k = 0; k < right; ++k) std::memcpy(to + left * elem + b.burst + k * elem, &c.padValue, elem);
    }
    c.gmRead += uint64_t(b.n) * b.burst;
}

void Out(const char* intrinsic, uint8_t* gm, const uint8_t* ub, const Bursts& b, bool padCopy) {
    if (b.n == 0 || b.burst == 0) return;
    CheckUbAligned(intrinsic, "src", ub, b.UbSpan());
    CheckPath(intrinsic, "src", ub, padCopy, false);
    const GmBuffer& arg = CheckGm(intrinsic, "dst", gm, b.GmSpan());
    Core& c = Cur();
    Instr in = c.order.Issue(kPipeMte3, intrinsic);
    twin::CostOpen(c.cost, kPipeMte3);
    for (uint16_t i = 0; i < b.n; ++i) {
        c.order.Touch(in, "src", uint64_t(ub + i * b.ubStep - c.ub), b.burst, false);
        c.gmOrder->Touch(c, in, "dst", gm + i * b.gmStep, b.burst, true);
        twin::CostGm(c.cost, arg.base, uint64_t(gm + i * b.gmStep - arg.base), b.burst, true);
        if (!c.countOnly) std::memcpy(gm + i * b.gmStep, ub + i * b.ubStep, b.burst);
    }
    c.gmWritten += uint64_t(b.n) * b.burst;
}

void PadIn(const char* intrinsic, void* ub, void* gm, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad, uint8_t rightPad,
           uint32_t srcGap, uint32_t dstGap, uint32_t elem) {
    if (leftPad * elem > kBlock || rightPad * elem > kBlock)
        Fail(intrinsic, Fmt("padding %u/%u elements exceeds 32 bytes", leftPad, rightPad));
    uint64_t ubBurst = RoundUp(uint64_t(leftPad) * elem + lenBurst + uint64_t(rightPad) * elem);
    Bursts b{nBurst, lenBurst, uint64_t(lenBurst) + srcGap, ubBurst + uint64_t(dstGap) * kBlock, ubBurst};
    In(intrinsic, static_cast<uint8_t*>(ub), static_cast<const uint8_t*>(gm), b, leftPad, rightPad, elem, true);
}

void PadOut(const char* intrinsic, void* gm, void* ub, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad, uint8_t rightPad,
            uint32_t srcGap, uint32_t dstGap) {
    if (leftPad || rightPad) Fail(intrinsic, "UB -> GM takes no padding");
    Bursts b{nBurst, lenBurst, uint64_t(lenBurst) + dstGap, RoundUp(lenBurst) + uint64_t(srcGap) * kBlock, lenBurst};
    Out(intrinsic, static_cast<uint8_t*>(gm), static_cast<const uint8_t*>(ub), b, true);
}
}  // namespace

void copy_gm_to_ubuf(void* ub, void* gm, uint8_t, uint16_t nBurst, uint16_t lenBurst, uint16_t srcGap, uint16_t dstGap) {
    uint64_t burst = uint64_t(lenBurst) * kBlock;
    Bursts b{nBurst, burst, burst + uint64_t(srcGap) * kBlock, burst + uint64_t(dstGap) * kBlock, burst};
    In("copy_gm_to_ubuf", static_cast<uint8_t*>(ub), static_cast<const uint8_t*>(gm), b, 0, 0, 1, false);
}

void copy_ubuf_to_gm(void* gm, void* ub, uint8_t, uint16_t nBurst, uint16_t lenBurst, uint16_t srcGap, uint16_t dstGap) {
    uint64_t burst = uint64_t(lenBurst) * kBlock;
    Bursts b{nBurst, burst, burst + uint64_t(dstGap) * kBlock, burst + uint64_t(srcGap) * kBlock, burst};
    Out("copy_ubuf_to_gm", static_cast<uint8_t*>(gm), static_cast<const uint8_t*>(ub), b, false);
}

#define AIRFUSE_ALIGN_COPIES(bits)                                                                                                  \
    void copy_gm_to_ubuf_align_b##bits(void* ub, void* gm, uint8_t, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad,             \
                                       uint8_t rightPad, uint32_t srcGap, uint32_t dstGap) {                                        \
        PadIn("copy_gm_to_ubuf_align_b" #bits, ub, gm, nBurst, lenBurst, leftPad, rightPad, srcGap, dstGap, bits / 8);               \
    }                                                                                                                              \
    void copy_ubuf_to_gm_align_b##bits(void* gm, void* ub, uint8_t, uint16_t nBurst, uint32_t lenBurst, uint8_t leftPad,             \
                                       uint8_t rightPad, uint32_t srcGap, uint32_t dstGap) {                                        \
        PadOut("copy_ubuf_to_gm_align_b" #bits, gm, ub, nBurst, lenBurst, leftPad, rightPad, srcGap, dstGap);                        \
    }
AIRFUSE_ALIGN_COPIES(8)
AIRFUSE_ALIGN_COPIES(16)
AIRFUSE_ALIGN_COPIES(32)
