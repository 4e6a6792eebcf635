// Sums of several rows at once (a step's rows of the RmsNorm kernels): n rows of d floats, `stride`
// floats apart (a multiple of 8), summed into sums[i * kSumStride]. No scalar work and no V -> S
// round trip per row: the caller waits for V once, then reads every row's sum.
//  - WholeRowSums below (WholeReduceSum: ReduceRepeat.md lists A2/A3 and the 310P AI Core), on
//    A2, and on 310P for a step's rows whose sums it packs (the RmsNorm forward's vector rstd).
//  - else (310P's other sums) one ReduceSum per row, the documented reduction, each with its own
//    sharedTmpBuffer slot (no barrier between them).
#pragma once
#include "common.h"

namespace airfuse_kernel {

constexpr uint32_t kSumStride = 8;  // one 32 B block per row's sum: ReduceSum's dst alignment
constexpr uint32_t kRepeatFloats = 64;
constexpr uint32_t kMaxRepeat = 255;
constexpr uint32_t kMaxRepStrideBlocks = 255;  // kept within a uint8 repeat stride

__aicore__ inline uint32_t CeilDivU(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// RowSums' sums packed, one float per row (WholeRowSums), in calls of a multiple of 8 rows.
constexpr uint32_t kCompactSums = 1;
constexpr uint32_t kCompactCallRows = 248;

// Sums of n rows of len floats (stride apart, stride % 8 == 0), each into its own block:
// sums[i * kSumStride]. `scratch` is laid out as op_host/tiling/rms_norm.h RowSumsScratch counts.
// A 32 B block is written by one instruction between barriers (the vector pipe orders nothing
// else), so:
//  - one repeat per row (len <= 64): one instruction, a repeat per row;
//  - more rows than repeats per row (and a row stride a repeat stride can hold): slice j of every
//    row is reduced by one instruction into plane j (a block per row), the planes then added by
//    halving;
//  - else row by row, a row's partials contiguous (one instruction per row), then the partials
//    reduced the same way as rows of ceil(len / 64).
// `sumStride` 1 (kCompactSums) packs the sums (and the planes) instead, one float per row: then
// calls split rows at a multiple of 8, so no two write one block; not with rows too long for a
// repeat stride (those sums need a block each).
__aicore__ inline void WholeRowSums(const LocalTensor<float>& sums, const LocalTensor<float>& src, uint32_t stride, uint32_t n, uint32_t len,
                                    const LocalTensor<float>& scratch, uint32_t sumStride = kSumStride) {
    uint32_t q = CeilDivU(len, kRepeatFloats);
    bool repStrideFits = stride / 8 <= kMaxRepStrideBlocks;
    if (q == 1 || (q <= n && repStrideFits)) {
        // Packed planes are whole blocks too: the halving adds below write the packed sums' blocks only.
        uint32_t plane = sumStride == kSumStride ? n * kSumStride : CeilDivU(n, 8) * 8, callRows = sumStride == kSumStride ? kMaxRepeat : kCompactCallRows;
        for (uint32_t j = 0; j < q; ++j) {
            LocalTensor<float> dst = q == 1 ? sums : scratch[j * plane];
            uint32_t m = len - j * kRepeatFloats < kRepeatFloats ? len - j * kRepeatFloats : kRepeatFloats;
            if (!repStrideFits) {  // q == 1: a repeat per row, one row per instruction
                for (uint32_t i = 0; i < n; ++i) WholeReduceSum(dst[i * kSumStride], src[i * stride], int32_t(m), 1, 1, 1, 8);
                continue;
            }
            for (uint32_t r0 = 0; r0 < n; r0 += callRows) {
                uint32_t rows = n - r0 < callRows ? n - r0 : callRows;
                WholeReduceSum(dst[r0 * sumStride], src[r0 * stride + j * kRepeatFloats], int32_t(m), int32_t(rows), int32_t(sumStride), 1,
                               int32_t(stride / 8));
            }
        }
        if (q == 1) return;
        for (uint32_t count = q; count > 1;) {
            PipeBarrier<PIPE_V>();
            uint32_t half = count / 2;
            LocalTensor<float> dst = count == 2 ? sums : scratch;
            Add(dst, scratch, scratch[(count - half) * plane], half * plane);
            count -= half;
        }
        return;
    }
    uint32_t full = len / kRepeatFloats, tail = len - full * kRepeatFloats, partStride = RoundUpTo(q, 8);
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j0 = 0; j0 < full; j0 += kMaxRepeat) {
            uint32_t reps = full - j0 < kMaxRepeat ? full - j0 : kMaxRepeat;
            if (j0 % 8) PipeBarrier<PIPE_V>();  // this call's first partial shares a block with the last call's
            WholeReduceSum(scratch[i * partStride + j0], src[i * stride + j0 * kRepeatFloats], int32_t(kRepeatFloats), int32_t(reps), 1, 1, 8);
        }
        if (!tail) continue;
        if (full % 8) PipeBarrier<PIPE_V>();
        WholeReduceSum(scratch[i * partStride + full], src[i * stride + full * kRepeatFloats], int32_t(tail), 1, 1, 1, 8);
    }
    PipeBarrier<PIPE_V>();
    // The partials' own reduction needs scratch past them only when a row's partials span more
    // than one repeat; a call within one repeat never touches its scratch, and a view at the end
    // of `scratch` would be out of range (CANN's LocalTensor::operator[] refuses an offset at or
    // past a tensor's end).
    WholeRowSums(sums, scratch, partStride, n, q, q > kRepeatFloats ? scratch[n * partStride] : scratch, sumStride);
}

// sums[i * kSumStride] = sum of row i's first d floats (rows left alone), for n rows `stride`
// floats apart: WholeRowSums when `wholeReduce`, else one ReduceSum per row, each with its own
// sharedTmpBuffer slot of reduceTmpFloats in `scratch`.
__aicore__ inline void RowSums(bool wholeReduce, const LocalTensor<float>& sums, const LocalTensor<float>& rows, uint32_t stride, uint32_t n,
                               uint32_t d, const LocalTensor<float>& scratch, uint32_t reduceTmpFloats, uint32_t sumStride = kSumStride) {
    if (wholeReduce) return WholeRowSums(sums, rows, stride, n, d, scratch, sumStride);
    for (uint32_t i = 0; i < n; ++i) ReduceSum(sums[i * kSumStride], rows[i * stride], scratch[i * reduceTmpFloats], int32_t(d));
}

// Rows per call of MulRows' level-0 Muls: at most 255 repeats, a multiple of 8 (a whole number of
// Brcb blocks of 8 rows).
constexpr uint32_t kMulCallRows = 248;

// Where MulRows takes each row's factor: kRowBlock, row i's own 32 B block of `factors` (a Brcb
// block per row: block stride 0, repeat stride 1); kSharedRow, the same span floats of `factors`
// for every row (block stride 1, repeat stride 0).
enum class RowFactor { kRowBlock, kSharedRow };

// What RowsByFactor does with a row and its factor: multiplies (kMul), adds the product to out
// (kMulAddDst, A2 only) or divides by it (kDiv).
enum class RowsOp { kMul, kMulAddDst, kDiv };

// One level-0 op of RowsByFactor.
template <RowsOp kOp>
__aicore__ inline void RowsOpCall(const LocalTensor<float>& out, const LocalTensor<float>& src, const LocalTensor<float>& f, uint64_t mask,
                                  uint8_t repeats, const BinaryRepeatParams& params) {
    if constexpr (kOp == RowsOp::kMulAddDst) {
        MulAddDst(out, src, f, mask, repeats, params);
    } else if constexpr (kOp == RowsOp::kDiv) {
        Div(out, src, f, mask, repeats, params);
    } else {
        Mul(out, src, f, mask, repeats, params);
    }
}

// Per-row factors on the vector unit: out row i = src row i `op` its factor, n rows of span floats
// `stride` floats apart (stride % 8 == 0; BinaryRepeatParams strides count 32 B blocks). Rows a
// repeat stride can step (stride / 8 <= kMaxRepStrideBlocks): per 64-column slice, one op per
// kMulCallRows rows, a repeat per row. Rows further apart: one op per row and kMaxRepeat
// 64-column slices, a repeat per slice.
template <RowsOp kOp>
__aicore__ inline void RowsByFactor(const LocalTensor<float>& out, const LocalTensor<float>& src, const LocalTensor<float>& factors, RowFactor kind,
                                    uint32_t n, uint32_t span, uint32_t stride) {
    bool rowBlock = kind == RowFactor::kRowBlock;
    if (stride / 8 > kMaxRepStrideBlocks) {
        BinaryRepeatParams params(1, 1, rowBlock ? 0 : 1, 8, 8, rowBlock ? 0 : 8);
        for (uint32_t i = 0; i < n; ++i) {
            for (uint32_t c = 0; c < span; c += kMaxRepeat * kRepeatFloats) {
                uint32_t len = span - c < kMaxRepeat * kRepeatFloats ? span - c : kMaxRepeat * kRepeatFloats;
                uint32_t whole = len / kRepeatFloats * kRepeatFloats;
                uint32_t at = i * stride + c;
                if (whole) RowsOpCall<kOp>(out[at], src[at], rowBlock ? factors[i * 8] : factors[c], kRepeatFloats, uint8_t(whole / kRepeatFloats), params);
                if (len > whole)
                    RowsOpCall<kOp>(out[at + whole], src[at + whole], rowBlock ? factors[i * 8] : factors[c + whole], len - whole, 1, params);
            }
        }
        return;
    }
    uint8_t rep = uint8_t(stride / 8);
    BinaryRepeatParams params(1, 1, rowBlock ? 0 : 1, rep, rep, rowBlock ? 1 : 0);
    for (uint32_t r0 = 0; r0 < n; r0 += kMulCallRows) {
        uint8_t rows = uint8_t(n - r0 < kMulCallRows ? n - r0 : kMulCallRows);
        for (uint32_t c = 0; c < span; c += kRepeatFloats) {
            uint64_t mask = span - c < kRepeatFloats ? span - c : kRepeatFloats;
            RowsOpCall<kOp>(out[r0 * stride + c], src[r0 * stride + c], rowBlock ? factors[r0 * 8] : factors[c], mask, rows, params);
        }
    }
}

// out row i = src row i * its factor (kAccumulate: out row i += that, by MulAddDst, A2 only).
template <bool kAccumulate = false>
__aicore__ inline void MulRows(const LocalTensor<float>& out, const LocalTensor<float>& src, const LocalTensor<float>& factors, RowFactor kind,
                               uint32_t n, uint32_t span, uint32_t stride) {
    RowsByFactor<kAccumulate ? RowsOp::kMulAddDst : RowsOp::kMul>(out, src, factors, kind, n, span, stride);
}

}  // namespace airfuse_kernel
