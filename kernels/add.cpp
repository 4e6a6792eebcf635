// AirfuseAdd: z = x + y elementwise (same shape and dtype), computed in float32.
// The flat tensor is split over cores in 128-element-aligned ranges, then tiled through
// double-buffered queues; the last tile of a core may be unaligned (gm_copy.h: DataCopyPad, or
// on 310P whole blocks plus the block ending at the tile's end, which lies in the same core).
// A core with one half/bf16 tile on a chip with DataCopyPad (tiling groupElems) moves it in
// groups instead, software-pipelined (ProcessGroups).
#include "gm_copy.h"
#include "add_tiling.h"

using namespace AscendC;
using namespace airfuse_kernel;

namespace {

template <typename T> class AddKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AirfuseAddTilingData& t) {
        t_ = t;
        uint32_t b = uint32_t(GetBlockIdx());
        uint64_t start = uint64_t(b) * t.elemsPerCore;
        count_ = b + 1 < t.usedCores ? t.elemsPerCore : (b + 1 == t.usedCores ? t.totalElems - start : 0);
        if (count_ == 0) return;  // a forced block_dim may leave the last cores idle
        // A tensor under one 32 B block (one core) moves in its natural layout.
        mover_ = Mover{t.alignedCopy != 0, t.alignedCopy != 0 && t.totalElems < kBlock<T>, kBlock<T>};
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, count_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + start, count_);
        zGm_.SetGlobalBuffer((__gm__ T*)z + start, count_);
        if (Grouped()) {
            uint32_t n = uint32_t(count_);
            pipe_.InitBuffer(xIn_, n * sizeof(T));
            pipe_.InitBuffer(yIn_, n * sizeof(T));
            pipe_.InitBuffer(zOut_, n * sizeof(T));
            pipe_.InitBuffer(wx_, n * sizeof(float));
            pipe_.InitBuffer(wy_, n * sizeof(float));
            return;
        }
        pipe_.InitBuffer(xQue_, t.bufferNum, t.tileElems * sizeof(T));
        pipe_.InitBuffer(yQue_, t.bufferNum, t.tileElems * sizeof(T));
        pipe_.InitBuffer(zQue_, t.bufferNum, t.tileElems * sizeof(T));
        if constexpr (!kIsFloat<T>) {
            pipe_.InitBuffer(wx_, t.tileElems * sizeof(float));
            pipe_.InitBuffer(wy_, t.tileElems * sizeof(float));
        }
    }

    __aicore__ inline void Process() {
#if AIRFUSE_HAS_DATA_COPY_PAD
        if constexpr (!kIsFloat<T>) {
            if (Grouped() && count_ != 0) return ProcessGroups();
        }
#endif
        for (uint64_t done = 0; done < count_; done += t_.tileElems) {
            uint32_t n = uint32_t(count_ - done < t_.tileElems ? count_ - done : t_.tileElems);
            CopyIn(done, n);
            Compute(mover_.Span(n));
            CopyOut(done, n);
        }
    }

private:
    // The tiling sets groupElems only for half/bf16 on chips with DataCopyPad.
    __aicore__ inline bool Grouped() const {
#if AIRFUSE_HAS_DATA_COPY_PAD
        return !kIsFloat<T> && t_.groupElems != 0;
#else
        return false;
#endif
    }

#if AIRFUSE_HAS_DATA_COPY_PAD
    static constexpr uint32_t kMaxGroups = 4;  // op_host/tiling/add.h kAddGroupsMax: two MTE2 -> V ids each

    // The core's one tile in G groups, all loads issued at once (x and y of each group, each with
    // its own flag). Vector work runs in G + 2 windows, each closed by one barrier: window j casts
    // group j's x and y, adds group j - 1 and casts group j - 2 back, whose store then leaves.
    // The chain of one group (cast, add, cast) costs two barriers, paid once per window for all
    // groups instead of per group; group j's casts wait only for its own loads. The last group is
    // cast back and stored in pieces, so its first store starts after one piece's cast.
    __aicore__ inline void ProcessGroups() {
        uint32_t n = uint32_t(count_), g = t_.groupElems, groups = (n + g - 1) / g;
        LocalTensor<T> x = xIn_.Get<T>(), y = yIn_.Get<T>(), z = zOut_.Get<T>();
        LocalTensor<float> xf = wx_.Get<float>(), yf = wy_.Get<float>();
        TEventID xLanded[kMaxGroups], yLanded[kMaxGroups];
        for (uint32_t i = 0; i < groups; ++i) {
            PadIn(x[i * g], xGm_, i * g, 1, GroupLen(i, g));
            xLanded[i] = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
            SetFlag<HardEvent::MTE2_V>(xLanded[i]);
            PadIn(y[i * g], yGm_, i * g, 1, GroupLen(i, g));
            yLanded[i] = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
            SetFlag<HardEvent::MTE2_V>(yLanded[i]);
        }
        for (uint32_t j = 0; j < groups + 2; ++j) {
            if (j >= 2) {  // group j - 2 back to T and out; the last group in pieces
                uint32_t i = j - 2, off = i * g, len = GroupLen(i, g);
                uint32_t piece = i + 1 == groups ? t_.pieceElems : len;
                for (uint32_t p = 0; p < len; p += piece) StoreGroupPart(z, xf, off + p, len - p < piece ? len - p : piece);
            }
            if (j < groups) {
                uint32_t off = j * g, len = GroupLen(j, g);
                WaitFlag<HardEvent::MTE2_V>(xLanded[j]);
                GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(xLanded[j]);
                Cast(xf[off], x[off], RoundMode::CAST_NONE, len);
                WaitFlag<HardEvent::MTE2_V>(yLanded[j]);
                GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(yLanded[j]);
                Cast(yf[off], y[off], RoundMode::CAST_NONE, len);
            }
            if (j >= 1 && j <= groups) {
                uint32_t off = (j - 1) * g;
                Add(xf[off], xf[off], yf[off], GroupLen(j - 1, g));
            }
            if (j + 1 < groups + 2) PipeBarrier<PIPE_V>();  // window j's results are window j + 1's operands
        }
    }

    __aicore__ inline uint32_t GroupLen(uint32_t i, uint32_t g) const {
        uint32_t off = i * g;
        return uint32_t(count_) - off < g ? uint32_t(count_) - off : g;
    }

    __aicore__ inline void StoreGroupPart(const LocalTensor<T>& z, const LocalTensor<float>& xf, uint32_t off, uint32_t len) {
        FromFloat(z[off], xf[off], len);
        int32_t eventVMTE3 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(eventVMTE3);
        WaitFlag<HardEvent::V_MTE3>(eventVMTE3);
        PadOut(zGm_, z[off], off, 1, len);
    }
#endif

    __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
        // x is queued before y is loaded, so its flag fires when x lands: Compute casts x while y
        // is still on its way (a flag fires once all MTE2 work issued before it has landed).
        LocalTensor<T> x = xQue_.AllocTensor<T>();
        mover_.In(x, xGm_, off, n);
        xQue_.EnQue(x);
        LocalTensor<T> y = yQue_.AllocTensor<T>();
        mover_.In(y, yGm_, off, n);
        yQue_.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t n) {
        LocalTensor<T> x = xQue_.DeQue<T>();
        LocalTensor<T> z = zQue_.AllocTensor<T>();
        if constexpr (kIsFloat<T>) {
            LocalTensor<T> y = yQue_.DeQue<T>();
            Add(z, x, y, n);
            xQue_.FreeTensor(x);
            yQue_.FreeTensor(y);
        } else {
            // Each input is cast as soon as it has landed and its buffer freed for the next tile.
            LocalTensor<float> xf = wx_.Get<float>(), yf = wy_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, n);
            xQue_.FreeTensor(x);
            LocalTensor<T> y = yQue_.DeQue<T>();
            Cast(yf, y, RoundMode::CAST_NONE, n);
            yQue_.FreeTensor(y);
            PipeBarrier<PIPE_V>();
            Add(xf, xf, yf, n);
            PipeBarrier<PIPE_V>();
            FromFloat(z, xf, n);
        }
        zQue_.EnQue(z);  // before the barrier: the store need not wait for it
        if constexpr (!kIsFloat<T>) PipeBarrier<PIPE_V>();  // the next tile's Cast overwrites wx_
    }

    __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
        LocalTensor<T> z = zQue_.DeQue<T>();
        if (mover_.natural) {
            StoreScalar(zGm_, z, off, n);
        } else {
            mover_.Out(zGm_, z, off, n);
        }
        zQue_.FreeTensor(z);
    }

    AirfuseAddTilingData t_;
    uint64_t count_ = 0;
    Mover mover_{};
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> yQue_;
    TQue<QuePosition::VECOUT, 1> zQue_;
    TBuf<TPosition::VECCALC> wx_;
    TBuf<TPosition::VECCALC> wy_;
    TBuf<TPosition::VECIN> xIn_;  // ProcessGroups: x, y and z of the whole tile
    TBuf<TPosition::VECIN> yIn_;
    TBuf<TPosition::VECOUT> zOut_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<T> zGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void airfuse_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(AIRFUSE_VECTOR_KERNEL_TYPE);
    REGISTER_TILING_DEFAULT(AirfuseAddTilingData);
    GET_TILING_DATA_WITH_STRUCT(AirfuseAddTilingData, t, tiling);
    AddKernel<DTYPE_X> op;
    op.Init(x, y, z, t);
    op.Process();
}
