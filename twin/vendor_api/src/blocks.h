// The blocks of one launch, run as coroutines of the calling thread (src/blocks.cpp), so that a
// kernel whose cores meet (SyncAll: ffts_cross_core_sync, then wait_flag_dev) runs as on the NPU,
// where every block of such a launch is resident at once.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "core_model.h"

namespace airfuse_vendor_twin {

struct LaunchSpec {
    const char* kernel;
    void* entry;  // the kernel's entry point, taking `nargs` GM pointers
    int nargs;
    uint8_t** args;
    uint32_t blockDim;
    uint32_t vectorCores;
    const std::vector<GmBuffer>* gm;
    const twin::CostParams* cost;  // the chip's cost model figures
    bool countOnly;
};

// Runs every block to its end; false with `why` naming the first block that failed, or the blocks
// left waiting for each other. `bytesRead` / `bytesWritten`: GM bytes the copies moved, all blocks.
// The launch's modelled time goes to the cost model's record (twin::RecordLaunchCost).
bool RunBlocks(const LaunchSpec& spec, uint64_t& bytesRead, uint64_t& bytesWritten, std::string& why);

// wait_flag_dev on the running block: returns once every block of the launch has set cross-core
// flag `flag` as often as this block has now waited on it, running the other blocks meanwhile.
void WaitForEveryBlock(int flag);

// The cost model's time at which the last block of the launch made its `k`-th (1-based)
// ffts_cross_core_sync of `flag` (every block has made it once WaitForEveryBlock returned).
double LatestCrossCoreArrival(int flag, int64_t k);

}  // namespace airfuse_vendor_twin
