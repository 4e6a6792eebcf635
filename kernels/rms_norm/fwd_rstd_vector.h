// rstd of a resident step's rows on the vector unit (fwd_resident.h, tiling rstdVecBytes != 0):
// steps of many rows would otherwise meet the scalar unit once per row (~40 cycles each) to compute
// and apply rstd. The step's sums are packed (kernels/row_sums.h kCompactSums), so each op of the
// chain below is one repeat for up to 64 rows: 1 / sqrt(sum * avgFactor + epsilon) by Axpy onto
// epsilon (its product rounded, then the add, as Muls then Adds would), Sqrt and Div (exact: never
// the approximate Rsqrt); then a 32 B block of rstd per row, which strided Muls apply to the whole
// step (kernels/row_sums.h MulRows). A2 makes the blocks with Brcb; 310P with a Gather (the twin
// does not model Brcb's reserved UB there), its steps whole blocks of 8 rows so that each step's
// rstd starts a block of rstd's GmStream stage.
#pragma once
#include "../gm_copy.h"
#include "../row_sums.h"

namespace airfuse_kernel {

class RstdOnVector {
public:
    __aicore__ inline void Init(TPipe& pipe, uint32_t bytes, uint32_t rowsPerLoop, bool aligned, float epsilon, float avgFactor) {
        pipe.InitBuffer(buf_, bytes);
        rows8_ = RoundUpTo(rowsPerLoop, 8);
        aligned_ = aligned;
        epsilon_ = epsilon;
        avgFactor_ = avgFactor;
    }

    // Once per core: the ones (Div's numerator) and, on 310P, the Gather offsets 4 i for element 8 i + k
    // (built by doubling, as float in part 2, then cast: exact for these small integers), and part 3
    // zeroed: the Gather's source view runs past a short step's rstd (GatherSource).
    __aicore__ inline void BuildTables() {
        if (aligned_) {
            Duplicate(Part(3), 0.0f, int32_t(rows8_));
            LocalTensor<float> f = Part(2);
            Duplicate(f, 0.0f, 8);
            PipeBarrier<PIPE_V>();
            for (uint32_t have = 8; have < 8 * rows8_; have *= 2) {  // elements [have, 2 have) = [0, have) + have / 8 rows
                uint32_t more = 8 * rows8_ - have < have ? 8 * rows8_ - have : have;
                Adds(f[have], f, float(have / 8 * 4), int32_t(more));
                PipeBarrier<PIPE_V>();
            }
            Cast(Part<int32_t>(4), f, RoundMode::CAST_RINT, 8 * rows8_);  // the first step's barriers come before its Gather
        }
        Duplicate(Part(1), 1.0f, int32_t(rows8_));
    }

    // Where RowSums puts the step's packed sums.
    __aicore__ inline LocalTensor<float> Sums() { return Part(0); }

    // epsilon under the Axpy, laid beside the step's row sums (the barrier after them orders it).
    __aicore__ inline void LayEpsilon(uint32_t n) { Duplicate(Epsilon(RoundUpTo(n, 8)), epsilon_, int32_t(RoundUpTo(n, 8))); }

    // rstd of the step's n rows, after a barrier that follows the row sums: A2 into r (a buffer of
    // the rstd queue), 310P into rstd's stream stage; then a block per row for Scale. Ends with a barrier.
    __aicore__ inline void Compute(const LocalTensor<float>& r, uint32_t n, GmStream<float>& stream) {
        LocalTensor<float> e = Epsilon(RoundUpTo(n, 8));
        Axpy(e, Sums(), avgFactor_, int32_t(n));
        PipeBarrier<PIPE_V>();
        Sqrt(e, e, int32_t(n));
        PipeBarrier<PIPE_V>();
        if (aligned_) {
            Div(e, Part(1), e, int32_t(n));
            PipeBarrier<PIPE_V>();
            Gather(Part(2, n * 8), GatherSource(n), Part<uint32_t>(4, n * 8), 0, n * 8);
            Adds(stream.VectorSlot(n), e, 0.0f, int32_t(n));
            stream.VectorPut(n);
            PipeBarrier<PIPE_V>();
            return;
        }
#if AIRFUSE_HAS_DATA_COPY_PAD
        Div(r, Part(1), e, int32_t(n));
        PipeBarrier<PIPE_V>();
        Brcb(Part(2), r, uint8_t(CeilDivU(n, 8)), BrcbRepeatParams(1, 8));
        PipeBarrier<PIPE_V>();
#endif
    }

    // out = xf * rstd * gamma for the step's n rows, `stride` floats apart.
    __aicore__ inline void Scale(const LocalTensor<float>& out, const LocalTensor<float>& xf, const LocalTensor<float>& g, uint32_t n, uint32_t span,
                                 uint32_t stride) {
        MulRows(out, xf, Part(2), RowFactor::kRowBlock, n, span, stride);
        PipeBarrier<PIPE_V>();
        MulRows(out, out, g, RowFactor::kSharedRow, n, span, stride);
    }

private:
    // Part i of the buffer, `count` elements (default: the part whole), for steps of up to rows8_
    // rows: 0 the packed sums, 1 ones, 2 rstd a block per row (8 rows8_; A2: epsilon first, under
    // the Axpy, until Brcb overwrites it); 310P only: 3 epsilon, then rstd packed, 4 the Gather
    // offsets (8 rows8_, uint32).
    template <typename U = float> __aicore__ inline LocalTensor<U> Part(uint32_t i, uint32_t count = 0) {
        uint32_t at = i < 3 ? i * rows8_ : (i == 3 ? 10 * rows8_ : 11 * rows8_);
        return buf_.GetWithOffset<U>(count ? count : (i == 2 || i == 4 ? 8 * rows8_ : rows8_), at * uint32_t(sizeof(float)));
    }

    __aicore__ inline LocalTensor<float> Epsilon(uint32_t count) { return Part(aligned_ ? 3 : 2, count); }

    // 310P: the step's packed rstd as the source of its Gather, as long as CANN's check asks
    // (GatherSourceCount: up to 7 blocks past them, into the rest of part 3 and part 4's offsets,
    // both written by BuildTables).
    __aicore__ inline LocalTensor<float> GatherSource(uint32_t n) {
        uint32_t held = RoundUpTo(n, 8), asked = GatherSourceCount<float>(n * 8);
        return Part(3, held > asked ? held : asked);
    }

    TBuf<TPosition::VECCALC> buf_;
    uint32_t rows8_ = 0;
    bool aligned_ = false;
    float epsilon_ = 0.0f, avgFactor_ = 0.0f;
};

}  // namespace airfuse_kernel
