// The blocks of a launch as coroutines of one thread (ucontext). The vendor's CPU-debug headers keep
// a block's state in process-wide globals (asc-tools stub_def.h's block_idx, kernel_common.h's
// g_vecTPipePtr, and the one unified-buffer array ConstDefiner::cpuUB), which is why CANN's own CPU
// debug forks a process per block. Here the blocks take turns instead: a block runs until it ends
// or waits at a cross-core flag no other block has set yet, and the scheduler then saves its
// globals and unified buffer and runs the lowest-numbered block that can go on. One block runs at a
// time, so a launch is deterministic, and blocks that meet (SyncAll) all make progress.
#include "blocks.h"
#include "../../src/launcher_common.h"
#include <sys/mman.h>
#include <ucontext.h>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

namespace AscendC {
class TPipe;
}
// TPipe's "current pipe" pointer, one per block on the NPU (__BLOCK_LOCAL__, which the CPU-debug
// stub_def.h defines empty): the TPipe constructor sets it, the headers' APIs read it.
extern AscendC::TPipe* g_vecTPipePtr;
extern int64_t block_idx;
extern int64_t block_num;

namespace airfuse_vendor_twin {
namespace {

// A block's stack: the kernel's own frames and the headers' CPU-debug checks (std::string and
// friends); mapped lazily, so untouched pages cost nothing.
constexpr size_t kStackBytes = size_t(8) << 20;

enum class State { Ready, Waiting, Done };

struct Block {
    Core core;
    State state = State::Ready;
    bool started = false;
    int waitingFlag = -1;
    ucontext_t context{};
    void* stack = MAP_FAILED;
    std::vector<uint8_t> ub;  // its unified buffer while other blocks run
    AscendC::TPipe* pipe = nullptr;
    sigjmp_buf abortJump;
    ~Block() {
        if (stack != MAP_FAILED) munmap(stack, kStackBytes);
    }
};

struct Launch {
    const LaunchSpec* spec;
    std::vector<std::unique_ptr<Block>> blocks;
    ucontext_t scheduler{};
    Block* running = nullptr;
    std::string failure;  // the first failure; the launch stops there
};
Launch* gLaunch = nullptr;

void CheckFlagsClear(const Core& c) {
    for (int a = 0; a < 16; ++a)
        for (int b = 0; b < 16; ++b)
            for (int e = 0; e < 8; ++e)
                if (c.flags[a][b][e])
                    Fail("kernel end", Fmt("pipe %d -> %d event %d is still set (set_flag with no wait_flag)", a, b, e));
}

// The vendor's CPU-debug checks end a failed check with raise(SIGABRT) (impl/basic_api/kernel_log.h
// ASCENDC_ASSERT), after printing why, and so does a Failure thrown inside a destructor (through
// std::terminate): caught for the block, whose launch then fails instead of the process.
void OnAbort(int) { siglongjmp(gLaunch->running->abortJump, 1); }

void BlockMain() {
    Launch& l = *gLaunch;
    Block& b = *l.running;
    if (sigsetjmp(b.abortJump, 1)) {
        std::fflush(stdout);  // the vendor's message, printed before its raise(SIGABRT)
        if (!b.core.lastFailure.empty())
            l.failure = b.core.lastFailure;
        else
            l.failure = Fmt("kernel %s, block %lld/%lld: the vendor's CPU-debug check stopped the kernel (SIGABRT; its message is on stdout)",
                        b.core.kernel, (long long)b.core.blockIdx, (long long)b.core.blockNum);
    } else {
        try {
            if (!airfuse_twin_launch::CallKernel(l.spec->entry, l.spec->nargs, l.spec->args))
                throw Failure(Fmt("the vendor-API twin launches kernels with 3..8 parameters, got %d", l.spec->nargs));
            CheckFlagsClear(b.core);
            CheckQueueBuffersFree();
            b.core.cost.end = twin::CostDrain(b.core.cost);
        } catch (const std::exception& ex) {
            l.failure = ex.what();
        }
    }
    b.state = State::Done;
}  // returns to the scheduler (uc_link)

// Runs `b` until it ends or waits, with its globals and unified buffer in place.
void Resume(Launch& l, Block& b) {
    Core& c = b.core;
    gRunning = &c;
    block_idx = c.blockIdx;
    g_vecTPipePtr = b.pipe;
    if (!b.ub.empty()) std::memcpy(c.ub, b.ub.data(), b.ub.size());
    l.running = &b;
    if (!b.started) {
        b.started = true;
        b.stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (b.stack == MAP_FAILED) throw Failure(Fmt("could not map the stack of block %lld of %u", (long long)c.blockIdx, l.spec->blockDim));
        getcontext(&b.context);
        b.context.uc_stack.ss_sp = b.stack;
        b.context.uc_stack.ss_size = kStackBytes;
        b.context.uc_link = &l.scheduler;
        makecontext(&b.context, BlockMain, 0);
    }
    swapcontext(&l.scheduler, &b.context);
    b.pipe = g_vecTPipePtr;
    // A block that will run again keeps its unified buffer; the next block's TPipe repoisons the array.
    if (b.state == State::Waiting && c.ub) b.ub.assign(c.ub, c.ub + c.ubBytes);
    gRunning = nullptr;
}

bool MayGoOn(const Launch& l, const Block& b) {
    if (b.state == State::Ready) return true;
    if (b.state == State::Done) return false;
    for (const auto& other : l.blocks)
        if (other->core.crossCoreSets[b.waitingFlag] < b.core.crossCoreWaits[b.waitingFlag]) return false;
    return true;
}

// Every block still waiting, and the blocks it waits for that ended without setting the flag.
std::string Stuck(const Launch& l) {
    std::string why;
    for (const auto& b : l.blocks) {
        if (b->state != State::Waiting) continue;
        int f = b->waitingFlag;
        why += Fmt("; block %lld waits at wait_flag_dev(%d) (its wait %lld) for", (long long)b->core.blockIdx, f, (long long)b->core.crossCoreWaits[f]);
        for (const auto& o : l.blocks)
            if (o->state == State::Done && o->core.crossCoreSets[f] < b->core.crossCoreWaits[f])
                why += Fmt(" block %lld (ended after setting it %lld times)", (long long)o->core.blockIdx, (long long)o->core.crossCoreSets[f]);
    }
    return why;
}

}  // namespace

bool RunBlocks(const LaunchSpec& spec, uint64_t& bytesRead, uint64_t& bytesWritten, std::string& why) {
    Launch l;
    l.spec = &spec;
    GmOrder gmOrder(*spec.gm, spec.countOnly);
    const uint32_t activeCores = spec.blockDim < spec.vectorCores ? spec.blockDim : spec.vectorCores;
    for (uint32_t i = 0; i < spec.blockDim; ++i) {
        auto b = std::make_unique<Block>();
        twin::CostStart(b->core.cost, *spec.cost, activeCores, i);
        b->core.countOnly = spec.countOnly;
        b->core.kernel = spec.kernel;
        b->core.blockIdx = i;
        b->core.blockNum = spec.blockDim;
        b->core.vectorCores = spec.vectorCores;
        b->core.gm = spec.gm;
        b->core.gmOrder = &gmOrder;
        l.blocks.push_back(std::move(b));
    }
    block_num = spec.blockDim;
    // The launch's SIGABRT handler and globals, restored however the scheduler leaves (a block's
    // stack that cannot be mapped throws).
    struct Scope {
        struct sigaction previous = {};
        explicit Scope(Launch& l) {
            struct sigaction onAbort = {};
            onAbort.sa_handler = OnAbort;
            sigaction(SIGABRT, &onAbort, &previous);
            gLaunch = &l;
        }
        ~Scope() {
            gLaunch = nullptr;
            gRunning = nullptr;
            sigaction(SIGABRT, &previous, nullptr);
        }
    } scope(l);
    for (;;) {
        Block* next = nullptr;
        for (const auto& b : l.blocks)
            if (MayGoOn(l, *b)) {
                next = b.get();
                break;
            }
        if (!next) break;
        next->state = State::Ready;
        Resume(l, *next);
        if (!l.failure.empty()) break;
    }
    if (!l.failure.empty()) {
        why = l.failure;
        return false;
    }
    std::string stuck = Stuck(l);
    if (!stuck.empty()) {
        why = Fmt("kernel %s: the blocks would hang", spec.kernel) + stuck;
        return false;
    }
    bytesRead = bytesWritten = 0;
    std::vector<const twin::CoreCost*> costs;
    for (const auto& b : l.blocks) {
        bytesRead += b->core.gmRead;
        bytesWritten += b->core.gmWritten;
        costs.push_back(&b->core.cost);
    }
    twin::RecordLaunchCost(costs, spec.vectorCores, *spec.cost);
    return true;
}

double LatestCrossCoreArrival(int flag, int64_t k) {
    double latest = 0;
    for (const auto& b : gLaunch->blocks) {
        const std::vector<double>& arrivals = b->core.crossCoreArrivals[flag];
        if (int64_t(arrivals.size()) >= k && arrivals[size_t(k - 1)] > latest) latest = arrivals[size_t(k - 1)];
    }
    return latest;
}

void WaitForEveryBlock(int flag) {
    Launch& l = *gLaunch;
    Block& b = *l.running;
    b.waitingFlag = flag;
    b.state = State::Waiting;
    while (!MayGoOn(l, b)) swapcontext(&b.context, &l.scheduler);
    b.state = State::Ready;
}

}  // namespace airfuse_vendor_twin
