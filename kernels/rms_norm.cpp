// AirfuseRmsNorm: y = x * rstd * gamma with rstd = 1 / sqrt(mean(x^2) + epsilon) over the last dim.
// Rows are split over cores; a core moves rowsPerLoop rows per step through double-buffered
// queues (copies: gm_copy.h, per chip). Rows too long for UB are processed in column chunks in
// two passes (sum, then scale).
// All math is float32; rstd is computed on the scalar unit (vector Rsqrt is too coarse).
#include "gm_copy.h"
#include "rms_norm_tiling.h"

using namespace AscendC;
using namespace airfuse_kernel;

namespace {

template <typename T, typename G> class RmsNormKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, const AirfuseRmsNormTilingData& t) {
        t_ = t;
        rows_ = MyRows(t.rowsPerCore, t.rowsRemainder, t.rowCores);
        bool aligned = t.alignedCopy != 0;
        mover_ = Mover{aligned, aligned && t.numCols < kBlock<T>, kBlock<T>};
        uint64_t d = t.numCols;
        // Reads may run past this core's rows (whole blocks of short rows), never past x's end.
        xGm_.SetGlobalBuffer((__gm__ T*)x + rows_.start * d, (t.numRows - rows_.start) * d);
        yGm_.SetGlobalBuffer((__gm__ T*)y + rows_.start * d, rows_.count * d);
        rstdGm_.SetGlobalBuffer((__gm__ float*)rstd + rows_.start, rows_.count);
        gammaGm_.SetGlobalBuffer((__gm__ G*)gamma, d);
        pipe_.InitBuffer(xQue_, t.bufferNum, t.rowsPerLoop * t.rowStride * sizeof(T));
        pipe_.InitBuffer(yQue_, t.bufferNum, t.rowsPerLoop * t.rowStride * sizeof(T));
        if (aligned) {
            pipe_.InitBuffer(rstdStage_, t.rstdStageBytes);
        } else {
            pipe_.InitBuffer(rstdQue_, t.bufferNum, t.rowsPerLoop * sizeof(float));
        }
        pipe_.InitBuffer(work_, t.floatCols * sizeof(float));
        pipe_.InitBuffer(gammaF_, t.floatCols * sizeof(float));
        pipe_.InitBuffer(red_, 32 + t.reduceTmpBytes);
        if (t.colsPerChunk < t.numCols) pipe_.InitBuffer(gQue_, t.bufferNum, t.floatCols * sizeof(G));
        if (t.outStageBytes) pipe_.InitBuffer(yStage_, t.outStageBytes);
    }

    __aicore__ inline void Process() {
        if (rows_.count == 0) return;
        if (mover_.aligned) rstdOut_.Init(rstdGm_, rstdStage_.Get<float>());
        if (mover_.natural) yOut_.Init(yGm_, yStage_.Get<T>());
        if (t_.colsPerChunk == t_.numCols) {
            ProcessResident();
        } else {
            for (uint32_t i = 0; i < rows_.count; ++i) ProcessSplitRow(i);
        }
        if (mover_.aligned) rstdOut_.Finish();
        if (mover_.natural) yOut_.Finish();
    }

private:
    // gamma is read once per core and kept in UB as float.
    __aicore__ inline void ProcessResident() {
        uint32_t d = t_.numCols, span = mover_.Span(d);
        LocalTensor<float> g = gammaF_.Get<float>();
        mover_.InAsFloat(g, work_.Get<G>(), gammaGm_, d);
        for (uint32_t done = 0; done < rows_.count; done += t_.rowsPerLoop) {
            uint32_t n = rows_.count - done < t_.rowsPerLoop ? rows_.count - done : t_.rowsPerLoop;
            LocalTensor<T> x = xQue_.AllocTensor<T>();
            mover_.RowsIn(x, xGm_, uint64_t(done) * d, n, d, t_.rowStride);
            xQue_.EnQue(x);
            x = xQue_.DeQue<T>();
            LocalTensor<T> y = yQue_.AllocTensor<T>();
            LocalTensor<float> r;
            if (!mover_.aligned) r = rstdQue_.AllocTensor<float>();
            for (uint32_t i = 0; i < n; ++i) {
                float rv = Rstd(SumSquares(x[i * t_.rowStride], d));
                Scale(x[i * t_.rowStride], y[i * t_.rowStride], g, rv, span);
                if (mover_.aligned) {
                    rstdOut_.Put(rv);
                } else {
                    r.SetValue(i, rv);
                }
            }
            xQue_.FreeTensor(x);
            yQue_.EnQue(y);
            if (!mover_.aligned) CopyOutRstd(r, done, n);
            y = yQue_.DeQue<T>();
            if (mover_.natural) {
                yOut_.PutRows(y, n, d, t_.rowStride);
            } else {
                mover_.RowsOut(yGm_, y, uint64_t(done) * d, n, d, t_.rowStride);
            }
            yQue_.FreeTensor(y);
        }
    }

    // A row longer than UB: pass 1 sums x^2 chunk by chunk, pass 2 re-reads x and gamma and scales.
    __aicore__ inline void ProcessSplitRow(uint32_t row) {
        uint32_t d = t_.numCols, c = t_.colsPerChunk;
        uint64_t base = uint64_t(row) * d;
        float s = 0.0f;
        for (uint32_t c0 = 0; c0 < d; c0 += c) {
            uint32_t n = d - c0 < c ? d - c0 : c;
            LocalTensor<T> x = CopyInChunk(base + c0, n);
            s += SumSquares(x, n);
            xQue_.FreeTensor(x);
        }
        float rv = Rstd(s);
        for (uint32_t c0 = 0; c0 < d; c0 += c) {
            uint32_t n = d - c0 < c ? d - c0 : c;
            LocalTensor<T> x = CopyInChunk(base + c0, n);
            LocalTensor<G> gq = gQue_.AllocTensor<G>();
            mover_.In(gq, gammaGm_, c0, n);
            gQue_.EnQue(gq);
            gq = gQue_.DeQue<G>();
            LocalTensor<float> g = AsFloat(gq, gammaF_.Get<float>(), mover_.Span(n));
            LocalTensor<T> y = yQue_.AllocTensor<T>();
            Scale(x, y, g, rv, mover_.Span(n));
            xQue_.FreeTensor(x);
            gQue_.FreeTensor(gq);
            yQue_.EnQue(y);
            y = yQue_.DeQue<T>();
            mover_.Out(yGm_, y, base + c0, n);
            yQue_.FreeTensor(y);
        }
        if (mover_.aligned) {
            rstdOut_.Put(rv);
            return;
        }
        LocalTensor<float> r = rstdQue_.AllocTensor<float>();
        r.SetValue(0, rv);
        CopyOutRstd(r, row, 1);
    }

    __aicore__ inline LocalTensor<T> CopyInChunk(uint64_t offset, uint32_t n) {
        LocalTensor<T> x = xQue_.AllocTensor<T>();
        mover_.In(x, xGm_, offset, n);
        xQue_.EnQue(x);
        return xQue_.DeQue<T>();
    }

    // rstd values were written by the scalar unit: order them before MTE3 reads them (910B; on
    // 310P they leave through rstdOut_).
    __aicore__ inline void CopyOutRstd(LocalTensor<float>& r, uint32_t first, uint32_t n) {
        int32_t eventSMTE3 = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
        SetFlag<HardEvent::S_MTE3>(eventSMTE3);
        WaitFlag<HardEvent::S_MTE3>(eventSMTE3);
        rstdQue_.EnQue(r);
        r = rstdQue_.DeQue<float>();
        mover_.Out(rstdGm_, r, first, n);
        rstdQue_.FreeTensor(r);
    }

    // Sum of x^2 over n elements held in the mover's layout (its repeated window head zeroed).
    __aicore__ inline float SumSquares(const LocalTensor<T>& x, uint32_t n) {
        uint32_t span = mover_.Span(n);
        LocalTensor<float> w = work_.Get<float>();
        LocalTensor<float> xf = AsFloat(x, w, span);
        Mul(w, xf, xf, span);
        PipeBarrier<PIPE_V>();
        mover_.ZeroRepeat(w, n);
        LocalTensor<float> dst = red_.Get<float>(8);
        ReduceSum(dst, w, red_.GetWithOffset<float>(t_.reduceTmpBytes / sizeof(float), 32), span);
        return ReadScalar(dst);
    }

    __aicore__ inline float Rstd(float sumSquares) const { return 1.0f / sqrt(sumSquares * t_.avgFactor + t_.epsilon); }

    __aicore__ inline void Scale(const LocalTensor<T>& x, const LocalTensor<T>& y, const LocalTensor<float>& g, float rv, uint32_t n) {
        LocalTensor<float> w = work_.Get<float>();
        LocalTensor<float> xf = AsFloat(x, w, n);
        LocalTensor<float> out = w;
        if constexpr (kIsFloat<T>) out = y;
        Muls(out, xf, rv, n);
        PipeBarrier<PIPE_V>();
        Mul(out, out, g, n);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(y, out, n);
        }
        PipeBarrier<PIPE_V>();  // the next row's first vector op overwrites work_
    }

    AirfuseRmsNormTilingData t_;
    RowRange rows_;
    Mover mover_{};
    GmStream<float> rstdOut_;
    GmStream<T> yOut_;
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> gQue_;
    TQue<QuePosition::VECOUT, 1> yQue_;
    TQue<QuePosition::VECOUT, 1> rstdQue_;
    TBuf<TPosition::VECCALC> work_;
    TBuf<TPosition::VECCALC> gammaF_;
    TBuf<TPosition::VECCALC> red_;
    TBuf<TPosition::VECOUT> rstdStage_;
    TBuf<TPosition::VECOUT> yStage_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<float> rstdGm_;
    GlobalTensor<G> gammaGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void airfuse_rms_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR rstd, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseRmsNormTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseRmsNormTilingData, t, tiling);
    RmsNormKernel<DTYPE_X, DTYPE_GAMMA> op;
    op.Init(x, gamma, y, rstd, t);
    op.Process();
}
