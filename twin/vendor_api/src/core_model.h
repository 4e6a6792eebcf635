// airfuse's model of one AI core's vector side, under the vendor's Ascend C API: what the CCE
// intrinsics (include/stub_fun.h) act on. The vendor's CPU-debug headers keep the unified buffer
// in one host array per process (ConstDefiner::cpuUB, impl/basic_api/utils/kernel_utils_mode_cpu.h)
// and pass host pointers to the intrinsics; the model learns where that array lies from the
// bookkeeping call AscendCBufAbsAddr and judges every pointer against it and against the GM
// buffers of the launch.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>
#include "../../include/twin/cost.h"
#include "cce_intrinsic_names.h"
#include "gm_order.h"
#include "pipe_order.h"

namespace airfuse_vendor_twin {

// A broken hardware rule, or an intrinsic the model does not implement: stops the launch.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void Fail(const char* intrinsic, const std::string& what);

struct GmBuffer {
    std::string name;
    uint8_t* base;
    uint64_t bytes;
};

enum class Space { Ub, Gm };

// A queue buffer's life (the TQue discipline, src/bookkeeping.cpp): Alloc takes a free one, EnQue
// hands it to the consumer, DeQue receives it, Free returns it.
enum class BufState { Free, Allocated, Enqueued, Dequeued };

// ffts_cross_core_sync / wait_flag_dev (src/blocks.cpp): the 16 cross-core flag ids.
constexpr int kCrossCoreFlags = 16;

struct Core {
    const char* kernel = "";
    int64_t blockIdx = 0, blockNum = 1;
    uint32_t vectorCores = 0;  // of the launch's chip: how many blocks can be resident at once
    uint8_t* ub = nullptr;  // the vendor's UB array (AscendCBufAbsAddr of Hardware::UB)
    uint64_t ubBytes = 0;
    const std::vector<GmBuffer>* gm = nullptr;
    // Vector mask registers (set_vector_mask: high word, low word) and mode (set_mask_count:
    // the low word is an element count; set_mask_norm: a bit per element of a repeat).
    uint64_t maskHigh = ~uint64_t(0), maskLow = ~uint64_t(0);
    bool counterMode = false;
    uint64_t padValue = 0;  // set_mov_pad_val: the bit pattern DataCopyPad pads with
    uint64_t accumulator = 0;  // vcadd in accumulate mode: the sum's bits, read by get_acc_val
    uint8_t* gatherSource = nullptr;  // SetModelGatherbSrc0Tensor: vgather's source, host address
    uint32_t gatherSourceLength = 0;
    uint64_t gmRead = 0, gmWritten = 0;
    // set_flag/wait_flag: one flag per (source pipe, destination pipe, event id).
    bool flags[16][16][8] = {};
    PipeOrder order;
    struct QueueBuffer {
        uint64_t bytes;
        BufState state;
    };
    std::map<uint64_t, QueueBuffer> queueBuffers;  // TQue buffers by UB address, from InitBuffer
    struct UbRegion {
        uint64_t bytes;
        uint8_t position;  // TPosition: 9 VECIN, 10 VECOUT, 11 VECCALC
    };
    std::map<uint64_t, UbRegion> ubRegions;  // every InitBuffer's (TQue or TBuf) by UB address
    // How often this block has set each cross-core flag (ffts_cross_core_sync) and waited on it.
    int64_t crossCoreSets[kCrossCoreFlags] = {}, crossCoreWaits[kCrossCoreFlags] = {};
    uint16_t syncEpoch = 0;      // how many times this block's cores have all met (wait_flag_dev)
    GmOrder* gmOrder = nullptr;  // the launch's, shared by its blocks
    Instr accumulatorWriter{kPipeV, 0, nullptr};  // the vcadd whose sum get_acc_val reads
    // The last failure raised on this block: a Failure thrown inside a destructor (TPipe's, which
    // waits its queues' flags) ends in std::terminate and SIGABRT, and is reported from here.
    std::string lastFailure;
    // A count-only launch (launch.cpp): every instruction is issued, checked, counted and costed,
    // but the intrinsics move and compute no data.
    bool countOnly = false;
    twin::CoreCost cost;  // the cost model's clocks of this block (twin/include/twin/cost.h)
    // The cost model's time at each of this block's ffts_cross_core_sync, per flag: a wait_flag_dev
    // resumes after the last block's arrival at the same set (LatestCrossCoreArrival).
    std::vector<double> crossCoreArrivals[kCrossCoreFlags];
    // The source line of the SetFlag, WaitFlag or PipeBarrier being called (include/sync_site.h),
    // taken by the set_flag, wait_flag or pipe_barrier it makes; and the waits of removed sets.
    std::string pendingSite;
    bool droppedWait[16][16][8] = {};
};

// The running block's core (src/blocks.cpp switches it); every intrinsic acts on it.
extern Core* gRunning;
Core& Cur();

// Mutation testing (launch.cpp twin_disable_sync_site): the SetFlag (with the WaitFlag that
// consumes it) or PipeBarrier called at this "file:line" (file's base name) is skipped; "" none.
extern std::string gDisabledSite;
// The SetFlag and PipeBarrier sites run since twin_sync_sites last reported them.
extern std::set<std::string> gSitesSeen;

// `bytes` at `p` lie in the unified buffer (returns the offset) or in one GM buffer of the launch.
// CheckUb is an instruction's operand: it must also not touch a TQue buffer that is free (after
// FreeTensor, or before its first AllocTensor); CheckInsideUb is the bookkeeping calls' bounds check.
uint64_t CheckInsideUb(const char* call, const char* operand, const void* p, uint64_t bytes);
uint64_t CheckUb(const char* intrinsic, const char* operand, const void* p, uint64_t bytes);
// At a block's end: every TQue buffer is free again (FreeTensor after its last use).
void CheckQueueBuffersFree();
// Returns the GM argument `p` lies in.
const GmBuffer& CheckGm(const char* intrinsic, const char* operand, const void* p, uint64_t bytes);

static_assert(kPipeS == twin::kCostPipeS && kPipeV == twin::kCostPipeV && kPipeMte2 == twin::kCostPipeMte2 && kPipeMte3 == twin::kCostPipeMte3 &&
                  kPipes == twin::kCostPipes,
              "the cost model takes the core model's pipe numbers");

// The cost model's latency class of a vector intrinsic (its vec_latency_* rows), as the home-made
// twin classes the API that issues it: vadd, vadds, vsub -> add; vmul, vmuls -> mul; ...
twin::VecClass IntrinsicVecClass(const char* intrinsic);

// The memory whose host accesses from kernel code are the scalar unit's (src/scalar_access.cpp):
// the launch's GM arguments and the unified buffer, watched until the launch ends.
void WatchScalarAccesses(const void* p, uint64_t bytes);
void UnwatchScalarAccesses();

// The source vgather reads (the host address and its length in bytes), as the CPU-debug Gather
// hands it to the model (AscendC::SetModelGatherbSrc0Tensor, src/vendor_namespace.cpp).
void SetGatherSource(uint64_t src, uint32_t length);

}  // namespace airfuse_vendor_twin
