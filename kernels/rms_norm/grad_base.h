// What AirfuseRmsNormGrad's strategy classes share (grad_resident.h, grad_split.h, grad_slices.h;
// the entry kernels/rms_norm_grad.cpp picks one by tiling key).
#pragma once
#include "../gm_copy.h"
#include "../row_sums.h"

namespace airfuse_kernel {
using namespace AscendC;

// acc += the sum of `count` rows of `rows` (span floats, stride apart) by halving, in a fixed
// order, one level per Level() call: a caller puts each level beside its other vector work, so the
// levels share its barriers (every call after the first must follow a barrier). The first level
// writes `tmp` (rows itself, or a buffer of half the rows), the next ones halve tmp in place, the
// last adds tmp's first row to acc.
struct RowHalving {
    LocalTensor<float> acc, rows, tmp;
    uint32_t count, span, stride;
    bool first = true;

    // Issues the next level; false when none was left.
    __aicore__ inline bool Level() {
        if (count == 0) return false;
        LocalTensor<float> src = first ? rows : tmp;
        if (count == 1) {
            Add(acc, acc, src, span);
            count = 0;
            return true;
        }
        uint32_t half = count / 2;
        Add(tmp, src, src[(count - half) * stride], (half - 1) * stride + span);
        // The first level's odd row (the middle one: row i pairs with row count - half + i) goes
        // to acc, as tmp holds half the rows; later levels keep theirs in place.
        if (first && count % 2) Add(acc, acc, rows[half * stride], span);
        count = first ? half : count - half;
        first = false;
        return true;
    }

    // The levels left, each followed by a barrier.
    __aicore__ inline void Drain() {
        while (Level()) PipeBarrier<PIPE_V>();
    }
};

// Partial results written by every core before other cores read them: the hardware SyncAll,
// which only 910B has (kernel type MIX_AIV_1_0, common.h). 310P's software SyncAll needs GM
// counters zeroed before the launch ([ADK] impl/basic_api/dav_m200/kernel_operator_sync_impl.h
// SoftSyncAllImpl adds to whatever they hold), which op_host cannot give: no strategy that needs
// cores to meet runs there (op_host/tiling/rms_norm_grad.h).
__aicore__ inline void SyncAllCores() {
#if !(defined(__CCE_AICORE__) && __CCE_AICORE__ == 200)
    SyncAll();
#endif
}

}  // namespace airfuse_kernel
