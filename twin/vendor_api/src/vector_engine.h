// How a vector instruction walks its operands (CANN's 矢量计算 overview, "repeat", "block stride",
// "repeat stride", and SetMaskCount.md / SetVectorMask.md): each repeat handles 256 bytes of its
// widest operand, in 8 blocks; a block of an operand is 32 B (its elements per repeat / 8 for a
// narrower operand of a conversion); an operand's block stride and repeat stride count 32 B units.
// Normal mask mode: `repeat` repeats, element i of a repeat active when bit i of the mask registers
// is (low word first; 64-element repeats read the low word only). Counter mode: the low mask word
// is the element count, the repeats it needs run and `repeat` is ignored.
#pragma once
#include <cstring>
#include "core_model.h"

namespace airfuse_vendor_twin {

struct VecOperand {
    const char* name;
    uint8_t* base;
    uint32_t elemBytes;
    uint32_t blockStride;   // 32 B units
    uint32_t repeatStride;  // 32 B units
    bool written;           // the destination (the V pipe's ordering checks, pipe_order.h)
};

// A count-only launch's walk (no data computed): the same operand checks as the element walk
// below, a 32 B block at a time instead of an element at a time (a block of 8 per repeat holds
// perBlock elements of the widest operand); within a repeat, every operand's reads are checked
// before its writes (the element walk interleaves them element by element).
template <size_t N>
void CheckBlocksOfActive(const Instr& in, const char* intrinsic, uint64_t repeats, uint64_t count, uint32_t perRepeat, uint32_t perBlock,
                         uint32_t widest, const VecOperand (&ops)[N]) {
    Core& c = Cur();
    for (uint64_t r = 0; r < repeats; ++r)
        for (int pass = 0; pass < 2; ++pass)
            for (uint32_t blk = 0; blk < 8; ++blk) {
                uint32_t first = perRepeat, last = 0;  // the block's active elements, first..last
                if (c.counterMode) {
                    uint64_t left = count - r * perRepeat;  // elements of this repeat on
                    if (left > blk * perBlock) first = blk * perBlock, last = uint32_t(left < (blk + 1) * perBlock ? left : (blk + 1) * perBlock) - 1;
                } else {
                    for (uint32_t i = blk * perBlock; i < (blk + 1) * perBlock; ++i)
                        if (i < 64 ? (c.maskLow >> i & 1) : (perRepeat > 64 && (c.maskHigh >> (i - 64) & 1))) {
                            first = first < i ? first : i;
                            last = i;
                        }
                }
                if (first == perRepeat) continue;
                for (size_t k = 0; k < N; ++k) {
                    const VecOperand& o = ops[k];
                    if (o.written != (pass == 1)) continue;
                    uint64_t blockBytes = uint64_t(perBlock) * o.elemBytes;
                    uint64_t off = r * o.repeatStride * 32 + blk * (o.elemBytes == widest ? o.blockStride * 32 : blockBytes);
                    uint8_t* from = o.base + off + (first % perBlock) * o.elemBytes;
                    uint8_t* to = o.base + off + (last % perBlock + 1) * o.elemBytes;
                    if (to > c.ub + c.ubBytes)
                        Fail(intrinsic, Fmt("%s: element %u of repeat %llu lies past the unified buffer", o.name, last, (unsigned long long)r));
                    c.order.Touch(in, o.name, uint64_t(from - c.ub), uint64_t(to - from), o.written);
                }
            }
}

// Issues the instruction on the V pipe and calls fn(repeat, the address of the element in each
// operand) for every active element, repeat by repeat (in a count-only launch: checks the
// operands' blocks and calls nothing); returns the instruction.
template <size_t N, typename Fn>
Instr ForEachActive(const char* intrinsic, uint8_t repeat, const VecOperand (&ops)[N], Fn fn) {
    Core& c = Cur();
    uint32_t widest = 0;
    for (const VecOperand& o : ops) widest = o.elemBytes > widest ? o.elemBytes : widest;
    const uint32_t perRepeat = 256 / widest, perBlock = perRepeat / 8;
    for (const VecOperand& o : ops) {
        uint64_t off = CheckUb(intrinsic, o.name, o.base, 0);
        if (off % 32) Fail(intrinsic, Fmt("%s at UB offset %llu is not 32 B-aligned", o.name, (unsigned long long)off));
        // A narrower operand of a conversion packs a repeat into fewer bytes; its layout inside a
        // repeat under other block strides is not documented, so only the contiguous one is modelled.
        if (o.elemBytes != widest && o.blockStride != 1)
            Fail(intrinsic, Fmt("%s: block stride %u of the narrower operand of a conversion is not modelled (only 1)", o.name, o.blockStride));
    }
    uint64_t repeats = repeat, count = 0;
    if (c.counterMode) {
        count = c.maskLow;
        repeats = (count + perRepeat - 1) / perRepeat;
    }
    Instr in = c.order.Issue(kPipeV, intrinsic);
    twin::CostOpen(c.cost, kPipeV);
    // The cost model takes the elements of the widest operand walked: the count in counter mode,
    // whole repeats in normal mode whatever the mask (as the home-made twin's level-0 forms).
    twin::CostVector(c.cost, IntrinsicVecClass(intrinsic), c.counterMode ? count : repeats * perRepeat, widest, intrinsic);
    if (c.countOnly) {
        CheckBlocksOfActive(in, intrinsic, repeats, count, perRepeat, perBlock, widest, ops);
        return in;
    }
    uint8_t* at[N];
    for (uint64_t r = 0; r < repeats; ++r)
        for (uint32_t i = 0; i < perRepeat; ++i) {
            bool active = c.counterMode ? r * perRepeat + i < count
                                        : (i < 64 ? (c.maskLow >> i & 1) : (perRepeat > 64 && (c.maskHigh >> (i - 64) & 1)));
            if (!active) continue;
            for (size_t k = 0; k < N; ++k) {
                const VecOperand& o = ops[k];
                uint64_t blockBytes = uint64_t(perBlock) * o.elemBytes;
                uint64_t off = r * o.repeatStride * 32 + (i / perBlock) * (o.elemBytes == widest ? o.blockStride * 32 : blockBytes) +
                               (i % perBlock) * o.elemBytes;
                at[k] = o.base + off;
                if (at[k] + o.elemBytes > c.ub + c.ubBytes)
                    Fail(intrinsic, Fmt("%s: element %u of repeat %llu lies past the unified buffer", o.name, i, (unsigned long long)r));
            }
            for (int pass = 0; pass < 2; ++pass)  // an element's operands are read before its result is written
                for (size_t k = 0; k < N; ++k)
                    if (ops[k].written == (pass == 1)) c.order.Touch(in, ops[k].name, uint64_t(at[k] - c.ub), ops[k].elemBytes, ops[k].written);
            fn(r, at);
        }
    return in;
}

template <typename T> T Load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <typename T> void Store(uint8_t* p, T v) { std::memcpy(p, &v, sizeof v); }

}  // namespace airfuse_vendor_twin
