// The row machinery of AirfuseRope and AirfuseRopeGrad over the last dim D:
//   forward   y  = x * cos + rotate(x) * sin
//   backward  dx = dy * cos - rotate(dy * sin)       (rotate's transpose is -rotate)
// With k = D/2 ("half") or 1 ("interleave") and p(j) the side of j's pair (floor(j/k) -
// 2 floor(j/2k)), rotate(v)[j] = sign(j) v[partner(j)], sign = 2p - 1, partner = j + k - 2kp.
// The sign goes into the sin table once per table load, so every row is one Gather of v by
// partner and the same five ops both ways:
//   forward   y  = x * cos + x[partner] * (sign * sin)
//   backward  dx = dy * cos + dy[partner] * (-sign * sin[partner])
// (each product the same float32 value, sign flips being exact, as the CPU kernels' form).
// Partner byte offsets and signs are built once per core with vector ops (CreateVecIndex, Div,
// floor Casts) for a whole copy step of rows, row r's offsets being row 0's plus r rows: each
// vector op then covers a step's rows at once (rows rowStride apart, their padding computed
// along and never stored), so instruction latency and barriers are paid per step, not per row.
// Rows sharing one cos/sin row (broadcast) take the two table products row by row:
// independent ops, no barrier between them. Only when x's and the tables' padded rows differ
// in length (a head dim that is not whole 32 B blocks of both dtypes) does each row go through
// the vector ops alone.
// Work items are (table row t, x row g of t's broadcast group) in t-major order (rope_tiling.h):
// a core loads each cos/sin slice once for all its rows of that group, and moves the group's
// rows in runs along the innermost broadcast dim (one strided copy per run). Without broadcast
// (one x row per table row) x and the tables move in batches of rows alike.
// All math is float32, each product rounded as the CPU kernels round it.
#pragma once
#include "gm_copy.h"
#include "rope_tiling.h"

namespace airfuse_kernel {

template <typename T, typename C, bool kBackward> class RopeRows {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR cos, GM_ADDR sin, GM_ADDR y, const AirfuseRopeTilingData& t) {
        t_ = t;
        uint64_t b = uint64_t(GetBlockIdx());
        if (b < t.rowCores) {
            first_ = b * t.itemsPerCore + (b < t.itemsRemainder ? b : t.itemsRemainder);
            count_ = t.itemsPerCore + (b < t.itemsRemainder ? 1 : 0);
        }
        uint64_t d = t.headDim, rows = t.tableRows * t.groupRows;
        shared_ = t.groupRows > 1;
        tableStride_ = RoundUpTo(t.headDim, kBlock<C>);
        uint32_t tableRows = shared_ ? 1 : t.rowsPerLoop;
        xGm_.SetGlobalBuffer((__gm__ T*)x, rows * d);
        yGm_.SetGlobalBuffer((__gm__ T*)y, rows * d);
        cosGm_.SetGlobalBuffer((__gm__ C*)cos, t.tableRows * d);
        sinGm_.SetGlobalBuffer((__gm__ C*)sin, t.tableRows * d);
        pipe_.InitBuffer(xQue_, t.bufferNum, t.rowsPerLoop * t.rowStride * sizeof(T));
        pipe_.InitBuffer(yQue_, t.bufferNum, t.rowsPerLoop * t.rowStride * sizeof(T));
        pipe_.InitBuffer(cosQue_, t.bufferNum, tableRows * tableStride_ * sizeof(C));
        pipe_.InitBuffer(sinQue_, t.bufferNum, tableRows * tableStride_ * sizeof(C));
        batchRows_ = shared_ || tableStride_ == t.rowStride ? t.rowsPerLoop : 1;
        uint32_t span = t.rowsPerLoop * t.rowStride;
        pipe_.InitBuffer(ext_, span * sizeof(float));
        pipe_.InitBuffer(rot_, span * sizeof(float));
        pipe_.InitBuffer(acc_, span * sizeof(float));
        pipe_.InitBuffer(offsets_, span * sizeof(uint32_t));
        pipe_.InitBuffer(signs_, span * sizeof(float));
        if constexpr (!kIsFloat<C>) pipe_.InitBuffer(cosF_, tableRows * tableStride_ * sizeof(float));
        if constexpr (!kIsFloat<C> || kBackward) pipe_.InitBuffer(sinF_, tableRows * tableStride_ * sizeof(float));
    }

    __aicore__ inline void Process() {
        if (count_ == 0) return;
        BuildOffsets();
        uint64_t end = first_ + count_;
        bool loaded = false;
        uint64_t loadedRow = 0;
        for (uint64_t i = first_; i < end;) {
            uint64_t t = i / t_.groupRows, left = end - i;
            uint32_t n = left < t_.rowsPerLoop ? uint32_t(left) : t_.rowsPerLoop;
            uint64_t row = i, step = 1;  // without broadcast x row i uses table row i
            if (shared_) {
                uint64_t runLeft;
                FirstRow(t, i % t_.groupRows, row, step, runLeft);
                if (runLeft < n) n = uint32_t(runLeft);
                if (loaded && loadedRow != t) FreeTables();
                if (!loaded || loadedRow != t) LoadTables(t, 1);
                loaded = true;
                loadedRow = t;
            } else {
                LoadTables(t, n);
            }
            ProcessRows(row, step, n);
            if (!shared_) FreeTables();
            i += n;
        }
        if (loaded) FreeTables();
    }

private:
    // x row of item (t, g) and the run of rows after it along the innermost broadcast dim: the
    // stride between them and how many (it included) stay inside that dim.
    __aicore__ inline void FirstRow(uint64_t t, uint64_t g, uint64_t& row, uint64_t& step, uint64_t& runLeft) const {
        row = 0;
        bool inner = true;
        for (uint32_t k = t_.numDims; k-- > 0;) {
            uint64_t size = t_.dimSize[k], idx;
            if (t_.dimBroadcast[k]) {
                idx = g % size;
                g /= size;
                if (inner) {
                    step = t_.dimStride[k];
                    runLeft = size - idx;
                    inner = false;
                }
            } else {
                idx = t % size;
                t /= size;
            }
            row += idx * t_.dimStride[k];
        }
    }

    // partner(j)'s byte offsets and the sin table's signs (see the file comment), from vector ops
    // only: row 0's over the whole row stride (its padding too: in range, and computed over by
    // batched ops), then copies shifted by whole rows.
    __aicore__ inline void BuildOffsets() {
        uint32_t d = t_.rowStride, rows = t_.rowsPerLoop, span = rows * t_.rowStride;
        float k = float(t_.rotateStep);
        LocalTensor<float> idx = acc_.Get<float>(), divisor = rot_.Get<float>(), signs = signs_.Get<float>();
        LocalTensor<float> side = ext_.Get<float>(), pairs = divisor;
        LocalTensor<int32_t> whole = offsets_.Get<int32_t>();
        // Gather reads its source whole and batched ops read the rows' padding: every work buffer
        // is written once here (padding is never written again).
        Duplicate(ext_.Get<float>(), 0.0f, int32_t(span));
        Duplicate(acc_.Get<float>(), 0.0f, int32_t(span));
        Duplicate(rot_.Get<float>(), 0.0f, int32_t(span));
        if constexpr (kBackward) Duplicate(sinF_.Get<float>(), 0.0f, int32_t(sinF_.Get<float>().GetSize()));
        // CANN's CreateVecIndex stores its first 32 B block from the scalar unit, then adds on the
        // vector pipe (CreateVecIndexOneBlk, dav_c220 and dav_m200): idx's zeros must be written first.
        ScalarWaitsForVector();
        CreateVecIndex(idx, 0.0f, d);
        Duplicate(divisor, k, d);
        PipeBarrier<PIPE_V>();
        Floor(side, idx, divisor, whole, d);  // floor(j / k)
        Duplicate(divisor, 2.0f * k, d);
        PipeBarrier<PIPE_V>();
        Floor(pairs, idx, divisor, whole, d);  // floor(j / 2k)
        Muls(pairs, pairs, 2.0f, d);
        PipeBarrier<PIPE_V>();
        Sub(side, side, pairs, d);  // p(j)
        PipeBarrier<PIPE_V>();
        Muls(signs, side, kBackward ? -2.0f : 2.0f, d);  // forward sign = 2p - 1, backward -sign
        Muls(side, side, -2.0f * k, d);
        PipeBarrier<PIPE_V>();
        Adds(signs, signs, kBackward ? 1.0f : -1.0f, d);
        Adds(side, side, k, d);
        PipeBarrier<PIPE_V>();
        Add(side, side, idx, d);  // partner(j)
        PipeBarrier<PIPE_V>();
        Muls(side, side, float(sizeof(float)), d);
        PipeBarrier<PIPE_V>();
        for (uint32_t have = 1; have < rows; have *= 2) {  // rows [have, 2 have) = rows [0, have) + have rows
            uint32_t more = rows - have < have ? rows - have : have;
            Adds(side[have * d], side, float(have * d * sizeof(float)), int32_t(more * d));
            Muls(signs[have * d], signs, 1.0f, int32_t(more * d));
            PipeBarrier<PIPE_V>();
        }
        Cast(whole, side, RoundMode::CAST_RINT, span);  // read after LoadTables' barrier
    }

    // dst = floor(a / b), exact for the small integers here (IEEE division, then a floor Cast).
    __aicore__ inline void Floor(const LocalTensor<float>& dst, const LocalTensor<float>& a, const LocalTensor<float>& b,
                                 const LocalTensor<int32_t>& scratch, uint32_t d) {
        Div(dst, a, b, d);
        PipeBarrier<PIPE_V>();
        Cast(scratch, dst, RoundMode::CAST_FLOOR, d);
        PipeBarrier<PIPE_V>();
        Cast(dst, scratch, RoundMode::CAST_NONE, d);
        PipeBarrier<PIPE_V>();
    }

    // cos/sin rows t.. (`rows` of them), kept as float32 until FreeTables.
    __aicore__ inline void LoadTables(uint64_t t, uint32_t rows) {
        cosTile_ = LoadTable(cosQue_, cosGm_, t, rows);
        sinTile_ = LoadTable(sinQue_, sinGm_, t, rows);
        uint32_t span = rows * tableStride_;
        // The casts write cosF_ and sinF_, last read before a barrier of the previous rows. Gather reads its source whole: backward, sin goes through sinF_, written whole once (BuildOffsets).
        if constexpr (kIsFloat<C>) {
            cos_ = cosTile_;
            sin_ = sinTile_;
            if constexpr (kBackward) Muls(sinF_.Get<float>(), sinTile_, 1.0f, span);
        } else {
            Cast(cos_ = cosF_.Get<float>(), cosTile_, RoundMode::CAST_NONE, span);
            Cast(sin_ = sinF_.Get<float>(), sinTile_, RoundMode::CAST_NONE, span);
        }
        if constexpr (kBackward) sin_ = sinF_.Get<float>();
        PipeBarrier<PIPE_V>();  // also orders BuildOffsets' last writes before the first rows
        SignSin(rows);
    }

    // sin_ *= sign (forward), or sin_ = -sign * sin_[partner] (backward), over `rows` table rows:
    // in one op when they sit at x's row stride, else row by row with row 0's offsets and signs.
    __aicore__ inline void SignSin(uint32_t rows) {
        uint32_t batch = tableStride_ == t_.rowStride ? rows : 1;
        LocalTensor<float> signs = signs_.Get<float>(), scratch = rot_.Get<float>();
        LocalTensor<uint32_t> offsets = offsets_.Get<uint32_t>();
        for (uint32_t r = 0; r < rows; r += batch) {
            uint32_t n = ((rows - r < batch ? rows - r : batch) - 1) * t_.rowStride + t_.headDim;
            LocalTensor<float> sin = sin_[r * tableStride_];
            if constexpr (kBackward) {
                if (r > 0) PipeBarrier<PIPE_V>();  // this row's Gather overwrites the scratch the last row's Mul read
                Gather(scratch, sinF_.Get<float>(), offsets, r * tableStride_ * sizeof(float), n);
                PipeBarrier<PIPE_V>();
                Mul(sin, scratch, signs, n);
            } else {
                Mul(sin, sin, signs, n);
            }
        }
        // The rows read sin_ (and backward overwrite rot_) after their first op's barrier.
    }

    __aicore__ inline LocalTensor<C> LoadTable(TQue<QuePosition::VECIN, 1>& que, const GlobalTensor<C>& gm, uint64_t t, uint32_t rows) {
        LocalTensor<C> tile = que.AllocTensor<C>();
        uint32_t d = t_.headDim;
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!t_.alignedCopy) {
            PadIn(tile, gm, t * d, rows, d);
        } else
#endif
        {
            DataCopy(tile, gm[t * d], rows * d);  // 310P: d is whole blocks (tiling), rows dense
        }
        que.EnQue(tile);
        return que.DeQue<C>();
    }

    __aicore__ inline void FreeTables() {
        cosQue_.FreeTensor(cosTile_);
        sinQue_.FreeTensor(sinTile_);
    }

    // n x rows from `row`, `step` rows apart in GM, through the queues.
    __aicore__ inline void ProcessRows(uint64_t row, uint64_t step, uint32_t n) {
        LocalTensor<T> x = xQue_.AllocTensor<T>();
        CopyRows(x, row, step, n);
        xQue_.EnQue(x);
        x = xQue_.DeQue<T>();
        LocalTensor<T> y = yQue_.AllocTensor<T>();
        for (uint32_t r = 0; r < n; r += batchRows_) {
            uint32_t table = shared_ ? 0 : r * tableStride_;
            if (r > 0) PipeBarrier<PIPE_V>();  // these rows overwrite ext_, rot_ and acc_
            Rows(x[r * t_.rowStride], y[r * t_.rowStride], cos_[table], sin_[table], n - r < batchRows_ ? n - r : batchRows_);
        }
        xQue_.FreeTensor(x);
        // No barrier here: the next step's first op writes only ext_, last read before this step's
        // later barriers, and that op's own barrier orders the rest (LoadTables starts with one).
        yQue_.EnQue(y);
        y = yQue_.DeQue<T>();
        StoreRows(y, row, step, n);
        yQue_.FreeTensor(y);
    }

    // `rows` rows from x into y (rowStride apart); c and s are their table rows, or the one row
    // they share (s signed by SignSin).
    __aicore__ inline void Rows(const LocalTensor<T>& x, const LocalTensor<T>& y, const LocalTensor<float>& c, const LocalTensor<float>& s,
                                uint32_t rows) {
        uint32_t d = (rows - 1) * t_.rowStride + t_.headDim;
        // Gather reads its source whole: v is the fully written ext_, never the queue tile.
        LocalTensor<float> v = ext_.Get<float>(), rot = rot_.Get<float>(), acc = acc_.Get<float>();
        if constexpr (kIsFloat<T>) {
            Muls(v, x, 1.0f, d);
        } else {
            Cast(v, x, RoundMode::CAST_NONE, d);
        }
        PipeBarrier<PIPE_V>();
        MulTable(acc, v, c, rows);
        Gather(rot, v, offsets_.Get<uint32_t>(), 0, d);
        PipeBarrier<PIPE_V>();
        MulTable(rot, rot, s, rows);
        PipeBarrier<PIPE_V>();
        Add(Result(y, acc), acc, rot, d);
        if constexpr (!kIsFloat<T>) {
            PipeBarrier<PIPE_V>();
            FromFloat(y, acc, d);
        }
    }

    // dst = src * table over `rows` rows: one op when every row has its own table row (same
    // stride), else one per row against the shared table row.
    __aicore__ inline void MulTable(const LocalTensor<float>& dst, const LocalTensor<float>& src, const LocalTensor<float>& table, uint32_t rows) {
        if (!shared_) {
            Mul(dst, src, table, (rows - 1) * t_.rowStride + t_.headDim);
            return;
        }
        for (uint32_t r = 0; r < rows; ++r) Mul(dst[r * t_.rowStride], src[r * t_.rowStride], table, t_.headDim);
    }

    // Where the float32 result goes: y itself for float rows, else acc (then cast into y).
    __aicore__ inline LocalTensor<float> Result(const LocalTensor<T>& y, const LocalTensor<float>& acc) const {
        if constexpr (kIsFloat<T>) {
            return y;
        } else {
            return acc;
        }
    }

    __aicore__ inline void CopyRows(const LocalTensor<T>& ub, uint64_t row, uint64_t step, uint32_t n) {
        uint32_t d = t_.headDim;
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!t_.alignedCopy) {
            DataCopyPad(ub, xGm_[row * d], DataCopyExtParams(uint16_t(n), d * sizeof(T), uint32_t((step - 1) * d * sizeof(T)), 0, 0),
                        DataCopyPadExtParams<T>());
            return;
        }
#endif
        if (step == 1) return DataCopy(ub, xGm_[row * d], n * d);  // rows are whole blocks here: rowStride is d
        for (uint32_t r = 0; r < n; ++r) DataCopy(ub[r * t_.rowStride], xGm_[(row + r * step) * d], d);
    }

    __aicore__ inline void StoreRows(const LocalTensor<T>& ub, uint64_t row, uint64_t step, uint32_t n) {
        uint32_t d = t_.headDim;
#if AIRFUSE_HAS_DATA_COPY_PAD
        if (!t_.alignedCopy) {
            DataCopyPad(yGm_[row * d], ub, DataCopyExtParams(uint16_t(n), d * sizeof(T), 0, uint32_t((step - 1) * d * sizeof(T)), 0));
            return;
        }
#endif
        if (step == 1) return DataCopy(yGm_[row * d], ub, n * d);
        for (uint32_t r = 0; r < n; ++r) DataCopy(yGm_[(row + r * step) * d], ub[r * t_.rowStride], d);
    }

    AirfuseRopeTilingData t_;
    uint64_t first_ = 0, count_ = 0;
    bool shared_ = false;
    uint32_t tableStride_ = 0;
    uint32_t batchRows_ = 1;  // rows per pass of the vector ops
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> xQue_;
    TQue<QuePosition::VECIN, 1> cosQue_;
    TQue<QuePosition::VECIN, 1> sinQue_;
    TQue<QuePosition::VECOUT, 1> yQue_;
    TBuf<TPosition::VECCALC> ext_;
    TBuf<TPosition::VECCALC> rot_;
    TBuf<TPosition::VECCALC> acc_;
    TBuf<TPosition::VECCALC> offsets_;
    TBuf<TPosition::VECCALC> signs_;
    TBuf<TPosition::VECCALC> cosF_;
    TBuf<TPosition::VECCALC> sinF_;
    LocalTensor<C> cosTile_, sinTile_;
    LocalTensor<float> cos_, sin_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<C> cosGm_;
    GlobalTensor<C> sinGm_;
};

}  // namespace airfuse_kernel
