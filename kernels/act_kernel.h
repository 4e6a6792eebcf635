// The elementwise activation kernels (silu_mul, swiglu, gelu and their Grad kernels): one tile
// loop, per-op float32 math. The work is [rows, cols] (act_tiling.h); each core takes consecutive
// units (a row, or a column chunk of one when rows are fewer than cores) and moves them in tiles
// through double-buffered queues. Operands are whole tensors or one half of swiglu's rows, so the
// same loop serves silu_mul (a, b separate) and swiglu (a, b the halves of x along any dim).
// half/bf16 are read and written, the math is float32 (common.h: AsFloat/FromFloat).
#pragma once
#include "gm_copy.h"
#include "act_tiling.h"

namespace airfuse_kernel {

// Where an operand's rows live: a whole tensor (rows cols apart), or the lower/upper half of rows
// of 2*cols (gatedStride apart).
enum class ActView : uint32_t { Whole, Lower, Upper };

struct ActOperand {
    GM_ADDR ptr;
    ActView view;
};

// Each Math provides kBuffers (act_tiling.h) and
//   Compute(out[], in[], tmp[], n, tiling): float32 tiles of n elements; may overwrite in[] and tmp[];
//   with resultsInTemps, out[i] may be tmp[temps - outputs + i] (written last).
template <typename T, class Math> class ActKernel {
    static constexpr uint32_t kIn = Math::kBuffers.inputs;
    static constexpr uint32_t kOut = Math::kBuffers.outputs;
    static constexpr uint32_t kTmp = Math::kBuffers.temps;
    static constexpr bool kResultsInTemps = Math::kBuffers.resultsInTemps != 0;

public:
    __aicore__ inline void Init(const ActOperand (&ins)[kIn], const ActOperand (&outs)[kOut], const AirfuseActTilingData& t) {
        t_ = t;
        uint32_t b = uint32_t(GetBlockIdx());
        if (b >= t.usedCores) return;  // a forced block_dim may leave the last cores idle
        uint64_t extra = b < t.unitRemainder ? b : t.unitRemainder;
        firstUnit_ = uint64_t(b) * t.unitsPerCore + extra;
        units_ = t.unitsPerCore + (b < t.unitRemainder ? 1 : 0);
        mover_ = Mover{t.alignedCopy != 0, t.natural != 0, kBlock<T>};
        for (uint32_t i = 0; i < kIn; ++i) Bind(inGm_[i], inView_[i], ins[i]);
        for (uint32_t i = 0; i < kOut; ++i) Bind(outGm_[i], outView_[i], outs[i]);
        for (uint32_t i = 0; i < kIn; ++i) pipe_.InitBuffer(inQue_[i], t.bufferNum, t.tileElems * sizeof(T));
        for (uint32_t i = 0; i < kOut; ++i) pipe_.InitBuffer(outQue_[i], t.bufferNum, t.tileElems * sizeof(T));
        if constexpr (!kIsFloat<T>) {
            for (uint32_t i = 0; i < kIn; ++i) pipe_.InitBuffer(inF_[i], t.tileElems * sizeof(float));
            if constexpr (!kResultsInTemps)
                for (uint32_t i = 0; i < kOut; ++i) pipe_.InitBuffer(outF_[i], t.tileElems * sizeof(float));
        }
        for (uint32_t i = 0; i < kTmp; ++i) pipe_.InitBuffer(tmp_[i], t.tileElems * sizeof(float));
    }

    // Each unit in tiles of even length, at most tileElems (no short last tile).
    __aicore__ inline void Process() {
        for (uint64_t u = firstUnit_; u < firstUnit_ + units_; ++u) {
            uint64_t row = u / t_.chunksPerRow;
            uint64_t chunk = u % t_.chunksPerRow;
            uint64_t begin = chunk * t_.chunkElems;
            uint64_t end = chunk + 1 == t_.chunksPerRow ? t_.cols : begin + t_.chunkElems;
            uint64_t steps = (end - begin + t_.tileElems - 1) / t_.tileElems;
            uint64_t step = ((end - begin + steps - 1) / steps + kActAlignElems - 1) / kActAlignElems * kActAlignElems;
            for (uint64_t c = begin; c < end; c += step) Tile(row, c, uint32_t(end - c < step ? end - c : step));
        }
    }

private:
    __aicore__ inline void Tile(uint64_t row, uint64_t col, uint32_t n) {
        CopyIn(row, col, n);
        Compute(mover_.Span(n));
        CopyOut(row, col, n);
    }

    __aicore__ inline void Bind(GlobalTensor<T>& gm, ActView& view, const ActOperand& op) {
        view = op.view;
        gm.SetGlobalBuffer((__gm__ T*)op.ptr, t_.rows * (op.view == ActView::Whole ? t_.cols : t_.gatedStride));
    }

    // GM offset of (row, col) in an operand.
    __aicore__ inline uint64_t Offset(ActView view, uint64_t row, uint64_t col) const {
        if (view == ActView::Whole) return row * t_.cols + col;
        return row * t_.gatedStride + (view == ActView::Upper ? t_.cols : 0) + col;
    }

    __aicore__ inline void CopyIn(uint64_t row, uint64_t col, uint32_t n) {
        for (uint32_t i = 0; i < kIn; ++i) {
            LocalTensor<T> x = inQue_[i].template AllocTensor<T>();
            mover_.In(x, inGm_[i], Offset(inView_[i], row, col), n);
            inQue_[i].EnQue(x);
        }
    }

    __aicore__ inline void Compute(uint32_t n) {
        LocalTensor<T> in[kIn];
        LocalTensor<T> out[kOut];
        LocalTensor<float> inF[kIn];
        LocalTensor<float> outF[kOut];
        LocalTensor<float> tmp[kTmp];
        for (uint32_t i = 0; i < kIn; ++i) in[i] = inQue_[i].template DeQue<T>();
        for (uint32_t i = 0; i < kOut; ++i) out[i] = outQue_[i].template AllocTensor<T>();
        for (uint32_t i = 0; i < kTmp; ++i) tmp[i] = tmp_[i].template Get<float>();
        if constexpr (kIsFloat<T>) {
            for (uint32_t i = 0; i < kIn; ++i) inF[i] = in[i];
            for (uint32_t i = 0; i < kOut; ++i) outF[i] = out[i];
        } else {
            for (uint32_t i = 0; i < kIn; ++i) Cast(inF[i] = inF_[i].template Get<float>(), in[i], RoundMode::CAST_NONE, n);
            for (uint32_t i = 0; i < kOut; ++i) outF[i] = kResultsInTemps ? tmp[kTmp - kOut + i] : outF_[i].template Get<float>();
            PipeBarrier<PIPE_V>();
        }
        Math::Compute(outF, inF, tmp, n, t_);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            for (uint32_t i = 0; i < kOut; ++i) FromFloat(out[i], outF[i], n);
        }
        for (uint32_t i = 0; i < kIn; ++i) inQue_[i].FreeTensor(in[i]);
        for (uint32_t i = 0; i < kOut; ++i) outQue_[i].EnQue(out[i]);
        // The next tile's first vector ops overwrite this tile's temporaries. Half/bf16 tiles need no
        // barrier here: their first ops are the input casts, which write only the float input tiles
        // (last read before the barrier above), and the barrier after those casts orders the rest.
        if constexpr (kIsFloat<T>) PipeBarrier<PIPE_V>();
    }

    __aicore__ inline void CopyOut(uint64_t row, uint64_t col, uint32_t n) {
        for (uint32_t i = 0; i < kOut; ++i) {
            LocalTensor<T> y = outQue_[i].template DeQue<T>();
            if (mover_.natural) {
                StoreScalar(outGm_[i], y, Offset(outView_[i], row, col), n);
            } else {
                mover_.Out(outGm_[i], y, Offset(outView_[i], row, col), n);
            }
            outQue_[i].FreeTensor(y);
        }
        if (mover_.natural) {
            // The scalar unit read the output tiles; a later tile's vector ops write those buffers again.
            int32_t eventSV = GetTPipePtr()->FetchEventID(HardEvent::S_V);
            SetFlag<HardEvent::S_V>(eventSV);
            WaitFlag<HardEvent::S_V>(eventSV);
        }
    }

    AirfuseActTilingData t_;
    uint64_t firstUnit_ = 0;
    uint64_t units_ = 0;
    Mover mover_{};
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> inQue_[kIn];
    TQue<QuePosition::VECOUT, 1> outQue_[kOut];
    TBuf<TPosition::VECCALC> inF_[kIn];
    TBuf<TPosition::VECCALC> outF_[kOut];
    TBuf<TPosition::VECCALC> tmp_[kTmp];
    GlobalTensor<T> inGm_[kIn];
    GlobalTensor<T> outGm_[kOut];
    ActView inView_[kIn];
    ActView outView_[kOut];
};

template <typename T, class Math>
__aicore__ inline void RunAct(const AirfuseActTilingData& t, const ActOperand (&ins)[Math::kBuffers.inputs],
                              const ActOperand (&outs)[Math::kBuffers.outputs]) {
    ActKernel<T, Math> op;
    op.Init(ins, outs, t);
    op.Process();
}

}  // namespace airfuse_kernel
