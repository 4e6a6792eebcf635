// The model's state and checks (core_model.h), the refusal of every intrinsic it does not
// implement, and the registers asc-tools' CPU-debug parameter checks read.
#include "core_model.h"
#include <cstdarg>
#include <cstdio>
#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "stub_fun.h"

namespace airfuse_vendor_twin {

Core* gRunning = nullptr;

std::string Fmt(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

Core& Cur() {
    if (!gRunning) throw Failure("a CCE intrinsic was called outside a vendor-API twin launch");
    return *gRunning;
}

void Fail(const char* intrinsic, const std::string& what) {
    Core& c = Cur();
    c.lastFailure = Fmt("kernel %s, block %lld/%lld: %s: ", c.kernel, (long long)c.blockIdx, (long long)c.blockNum, intrinsic) + what;
    throw Failure(c.lastFailure);
}

uint64_t CheckInsideUb(const char* call, const char* operand, const void* p, uint64_t bytes) {
    Core& c = Cur();
    if (!c.ub) Fail(call, Fmt("%s: no unified buffer yet (no TPipe was constructed)", operand));
    auto* b = static_cast<const uint8_t*>(p);
    if (b < c.ub || b + bytes > c.ub + c.ubBytes)
        Fail(call, Fmt("%s: %llu bytes at UB offset %lld exceed the %llu-byte unified buffer", operand, (unsigned long long)bytes,
                       (long long)(b - c.ub), (unsigned long long)c.ubBytes));
    return uint64_t(b - c.ub);
}

uint64_t CheckUb(const char* intrinsic, const char* operand, const void* p, uint64_t bytes) {
    uint64_t offset = CheckInsideUb(intrinsic, operand, p, bytes);
    Core& c = Cur();
    // A vector operand is checked by its start (bytes 0): its elements are walked by the engine.
    uint64_t addr = uint64_t(uintptr_t(p)), end = addr + (bytes ? bytes : 1);
    auto it = c.queueBuffers.upper_bound(addr);
    if (it != c.queueBuffers.begin()) --it;
    for (; it != c.queueBuffers.end() && it->first < end; ++it)
        if (it->first + it->second.bytes > addr && it->second.state == BufState::Free)
            Fail(intrinsic, Fmt("%s: UB offset %llu lies in the TQue buffer at UB offset %llu, which is free (used after FreeTensor "
                                "or before AllocTensor)", operand, (unsigned long long)offset, (unsigned long long)(it->first - uint64_t(uintptr_t(c.ub)))));
    return offset;
}

const GmBuffer& CheckGm(const char* intrinsic, const char* operand, const void* p, uint64_t bytes) {
    Core& c = Cur();
    auto* b = static_cast<const uint8_t*>(p);
    for (const GmBuffer& g : *c.gm)
        if (b >= g.base && b < g.base + g.bytes) {
            if (b + bytes > g.base + g.bytes)
                Fail(intrinsic, Fmt("%s: %llu bytes at offset %llu of GM argument %s overrun its %llu bytes", operand, (unsigned long long)bytes,
                                    (unsigned long long)(b - g.base), g.name.c_str(), (unsigned long long)g.bytes));
            return g;
        }
    Fail(intrinsic, Fmt("%s: %p is in no GM argument of the launch", operand, p));
}

// The intrinsics the home-made twin's APIs issue, by that API's class (twin/src/sync.cpp
// ApiVecClass): Add/Sub/Adds, Mul/Muls, Div, Max/Min/Maxs/Mins, ReduceSum/WholeReduceSum (vcadd),
// Exp, Sqrt; the rest (Cast's vconv_*, Duplicate's vector_dup, Abs, Brcb, Gather, the fused
// multiply-adds) take the default latency, as there.
twin::VecClass IntrinsicVecClass(const char* intrinsic) {
    const std::string n = intrinsic;
    if (n == "vadd" || n == "vsub" || n == "vadds") return twin::VecClass::kAdd;
    if (n == "vmul" || n == "vmuls") return twin::VecClass::kMul;
    if (n == "vdiv") return twin::VecClass::kDiv;
    if (n == "vmax" || n == "vmin" || n == "vmaxs" || n == "vmins") return twin::VecClass::kMax;
    if (n == "vcadd") return twin::VecClass::kReduce;
    if (n == "vexp") return twin::VecClass::kExp;
    if (n == "vsqrt") return twin::VecClass::kSqrt;
    return twin::VecClass::kOther;
}

}  // namespace airfuse_vendor_twin

using airfuse_vendor_twin::Fail;

// Intrinsics (and operand types) the model does not implement: reached only on paths airfuse's
// kernels are not expected to take; one that is taken stops the launch with its name.
#define AIRFUSE_REFUSE_VALUE(result, name)                                                                                \
    result name(AnyOperand, ...) { Fail(#name, "this intrinsic (or these operand types) is not modelled by the vendor-API twin"); } \
    __attribute__((weak)) result name() { Fail(#name, "this intrinsic is not modelled by the vendor-API twin"); }
#define AIRFUSE_REFUSE_EFFECT(name) AIRFUSE_REFUSE_VALUE(void, name)
AIRFUSE_CCE_VALUE_INTRINSICS(AIRFUSE_REFUSE_VALUE)
AIRFUSE_CCE_EFFECT_INTRINSICS(AIRFUSE_REFUSE_EFFECT)
AIRFUSE_CPU_DEBUG_BOOKKEEPING(AIRFUSE_REFUSE_EFFECT)

// The vector mask registers, as asc-tools' CPU-debug parameter checks read them
// (cpudebug/src/api_check/kernel_base_check.cpp; declared by the non-public model/model_factory_mask.h).
uint64_t ModelFactoryGetMaskHigh() { return airfuse_vendor_twin::Cur().maskHigh; }
uint64_t ModelFactoryGetMaskLow() { return airfuse_vendor_twin::Cur().maskLow; }
uint64_t ModelFactoryGetMaskMode() { return airfuse_vendor_twin::Cur().counterMode ? 1 : 0; }
