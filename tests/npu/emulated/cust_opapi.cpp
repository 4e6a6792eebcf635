// Stand-in for the libcust_opapi.so of airfuse's CANN package: the aclnn entry points opbuild
// generates from op_host's OpDefs, implemented like CANN implements them:
//   phase 1 (aclnn<Op>GetWorkspaceSize) checks the aclTensors (the outputs against op_host's
//     InferShape/InferDataType, so a binding that sizes an output wrongly is refused here rather
//     than corrupting memory on the device), runs op_host's real tiling function
//     (through the recording stand-in of CANN's op_host API, build/libairfuse_opdef_standin.so)
//     and returns its workspace size (user part + the platform's system workspace) and an executor;
//   phase 2 (aclnn<Op>) checks stream and workspace, runs the real Ascend C kernel on the CPU twin
//     (build/libairfuse_twin.so) with that tiling, and frees the executor.
// It records each call for the tests (stream, workspace, tensor offsets) and counts live executors.
// The chip is Ascend910B2 unless EMULATED_NPU_SOC=Ascend310P3 (read at each phase 1).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "../../../csrc/npu/aclnn_abi.h"
#include "acl_tensor.h"

// The twin's and op_host stand-in's C ABI (twin/src/runtime.cpp, tests/kernels/cann_standin/recorder.cpp).
extern "C" {
int twin_launch(void* fn, const char* kernel, const char* soc, uint32_t blockDim, int nargs, uint8_t** args, const uint64_t* sizes,
                const char** names, int countOnly, uint64_t* bytesRead, uint64_t* bytesWritten, char* err, int errLen);
int standin_tiling(const char* op, int soc, uint32_t cores, uint64_t ub, const char* inputs, const char* attrs, uint8_t* tiling,
                   uint32_t cap, uint32_t* tilingSize, uint32_t* blockDim, uint64_t* workspace, uint32_t* scheduleMode);
uint64_t standin_tiling_key();
void twin_set_tiling_key(uint64_t key);
int standin_infer(const char* op, const char* inputs, const char* attrs, char* out, int outLen);
}

namespace {

constexpr aclnnStatus kParamNull = 161001, kParamInvalid = 161002, kRuntime = 361001, kTiling = 561002;

// What opbuild generates per op from its OpDef: IR type, kernel entry, tensor names in order, and
// which inputs' dtypes select the kernel binary (the DTYPE_<NAME> macros the kernel reads).
struct OpSpec {
    const char* irType;
    const char* kernel;
    std::vector<const char*> inputs, outputs;
    std::vector<size_t> kernelDtypeInputs;
};
const OpSpec kRmsNorm{"AirfuseRmsNorm", "airfuse_rms_norm", {"x", "gamma"}, {"y", "rstd"}, {0, 1}};
const OpSpec kRmsNormGrad{"AirfuseRmsNormGrad", "airfuse_rms_norm_grad", {"dy", "x", "rstd", "gamma"}, {"dx", "dgamma"}, {1, 3}};
const OpSpec kAdd{"AirfuseAdd", "airfuse_add", {"x", "y"}, {"z"}, {0}};
const OpSpec kAddRmsNorm{"AirfuseAddRmsNorm", "airfuse_add_rms_norm", {"x1", "x2", "gamma"}, {"y", "rstd", "x"}, {0, 2}};
const OpSpec kSiluMul{"AirfuseSiluMul", "airfuse_silu_mul", {"a", "b"}, {"y"}, {0}};
const OpSpec kSiluMulGrad{"AirfuseSiluMulGrad", "airfuse_silu_mul_grad", {"dy", "a", "b"}, {"da", "db"}, {1}};
const OpSpec kSwiglu{"AirfuseSwiglu", "airfuse_swiglu", {"x"}, {"y"}, {0}};
const OpSpec kSwigluGrad{"AirfuseSwigluGrad", "airfuse_swiglu_grad", {"dy", "x"}, {"dx"}, {1}};
const OpSpec kRope{"AirfuseRope", "airfuse_rope", {"x", "cos", "sin"}, {"y"}, {0, 1}};
const OpSpec kRopeGrad{"AirfuseRopeGrad", "airfuse_rope_grad", {"dy", "cos", "sin"}, {"dx"}, {0, 1}};
const OpSpec kGelu{"AirfuseGelu", "airfuse_gelu", {"x"}, {"y"}, {0}};
const OpSpec kGeluGrad{"AirfuseGeluGrad", "airfuse_gelu_grad", {"dy", "x"}, {"dx"}, {1}};

struct Chip {
    const char* name;
    int socCode;  // the op_host stand-in's platform code
    uint32_t vectorCores;
    uint64_t ubBytes;
};
const Chip kChips[] = {{"Ascend910B2", 1, 48, 196352}, {"Ascend310P3", 2, 8, 253952}};

struct Executor {
    const OpSpec* spec;
    const Chip* chip;
    std::vector<aclTensor> tensors;  // inputs then outputs, copied: the caller may destroy its own
    std::vector<uint8_t> tiling;
    uint32_t blockDim;
    uint64_t workspace;
    uint64_t tilingKey;  // op_host's SetTilingKey: the kernel branch the launch runs
};

struct Call {
    char op[64];
    void* stream;
    void* workspace;
    uint64_t workspaceSize;
    uint64_t requiredWorkspace;
    uint32_t blockDim;
    int32_t ntensors;
    int64_t offsets[8];
    void* storage[8];
};

std::mutex gMutex;
std::set<Executor*> gExecutors;
std::map<std::string, uint64_t> gCalls;
Call gLast{};
aclnnStatus gFailNext = 0;
std::string gFailMessage;

aclnnStatus Fail(aclnnStatus status, const std::string& message) {
    emulated_acl_set_error(message.c_str());
    return status;
}

const Chip* CurrentChip() {
    const char* soc = std::getenv("EMULATED_NPU_SOC");
    for (const Chip& c : kChips)
        if (!soc || std::strcmp(soc, c.name) == 0) return &c;
    return nullptr;
}

std::string Dims(const aclTensor& t) {
    std::string s;
    for (size_t i = 0; i < t.viewDims.size(); ++i) s += (i ? "," : "") + std::to_string(t.viewDims[i]);
    return s;
}

// The OpDefs declare no AutoContiguous, so the generated code takes every tensor as a dense
// row-major block at storage + offset: a strided view would be read wrongly, so it is refused.
bool Contiguous(const aclTensor& t) {
    int64_t expected = 1;
    for (size_t i = t.viewDims.size(); i-- > 0;) {
        if (t.viewDims[i] != 1 && t.strides[i] != expected) return false;
        expected *= t.viewDims[i];
    }
    return true;
}

uint8_t* Data(const aclTensor& t) { return static_cast<uint8_t*>(t.storage) + t.offset * emulated_acl_itemsize(t.dtype); }

uint64_t Bytes(const aclTensor& t) {
    int64_t n = emulated_acl_itemsize(t.dtype);
    for (int64_t d : t.viewDims) n *= d;
    return uint64_t(n);
}

// An IR attr as the op_host stand-in reads it (as the graph writes it): Float in "%a", exact.
std::string AttrText(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return buf;
}
std::string AttrText(int64_t v) { return std::to_string(v); }
std::string AttrText(const char* v) { return v; }

// The op's attrs for the stand-in: each AttrText, separated by ';' ("" when the op has none).
template <typename... A> std::string Attrs(A... values) {
    std::string s;
    ((s += (s.empty() ? "" : ";") + AttrText(values)), ...);
    return s;
}

aclnnStatus Prepare(const OpSpec& spec, std::vector<const aclTensor*> tensors, const std::string& attrs, uint64_t* workspaceSize,
                    aclOpExecutor** executor) {
    const std::string op = spec.irType;
    if (!workspaceSize || !executor) return Fail(kParamNull, op + ": workspaceSize or executor is null");
    const Chip* chip = CurrentChip();
    if (!chip) return Fail(kParamInvalid, op + ": EMULATED_NPU_SOC names no emulated chip");
    auto* ex = new Executor{&spec, chip, {}, {}, 0, 0, 0};
    for (size_t i = 0; i < tensors.size(); ++i) {
        const char* name = i < spec.inputs.size() ? spec.inputs[i] : spec.outputs[i - spec.inputs.size()];
        const aclTensor* t = tensors[i];
        std::string why;
        if (!t) why = "is null";
        else if (!emulated_acl_itemsize(t->dtype)) why = "has aclDataType " + std::to_string(t->dtype) + ", which no kernel takes";
        else if (t->format != kAclFormatNd) why = "has format " + std::to_string(t->format) + ", the OpDef declares ND";
        else if (!Contiguous(*t)) why = "is not contiguous and the OpDef declares no AutoContiguous";
        else if (!t->storage) why = "has no data";
        if (!why.empty()) {
            delete ex;
            return Fail(t ? kParamInvalid : kParamNull, op + ": " + name + " " + why);
        }
        ex->tensors.push_back(*t);
    }
    // Shape specs "d0,d1:dtype;..." as op_host's stand-in reads them; ge::DataType == aclDataType here.
    std::string inputs, outputs;
    for (size_t i = 0; i < tensors.size(); ++i)
        (i < spec.inputs.size() ? inputs : outputs) += ((i == 0 || i == spec.inputs.size()) ? "" : ";") + Dims(*tensors[i]) + ":" +
                                                        std::to_string(tensors[i]->dtype);
    char inferred[512] = {0};
    if (standin_infer(op.c_str(), inputs.c_str(), attrs.c_str(), inferred, sizeof inferred) != 0 || outputs != inferred) {
        delete ex;
        return Fail(kParamInvalid, op + ": outputs " + outputs + " do not match op_host's inference " + inferred + " from inputs " + inputs);
    }
    ex->tiling.resize(4096);
    uint32_t tilingSize = 0, scheduleMode = 0;
    if (standin_tiling(op.c_str(), chip->socCode, chip->vectorCores, chip->ubBytes, inputs.c_str(), attrs.c_str(), ex->tiling.data(),
                       uint32_t(ex->tiling.size()), &tilingSize, &ex->blockDim, &ex->workspace, &scheduleMode) != 0) {
        delete ex;
        return Fail(kTiling, op + ": op_host's tiling refused inputs " + inputs + " (shape:aclDataType) on " + chip->name);
    }
    ex->tiling.resize(tilingSize);
    ex->tilingKey = standin_tiling_key();
    *workspaceSize = ex->workspace;
    *executor = reinterpret_cast<aclOpExecutor*>(ex);
    std::lock_guard<std::mutex> lock(gMutex);
    gExecutors.insert(ex);
    return 0;
}

// The twin's kernels: the library that defines twin_launch (a dependency of this one).
void* TwinKernel(const std::string& symbol) {
    static void* twin = [] {
        Dl_info info{};
        dladdr(reinterpret_cast<void*>(&twin_launch), &info);
        return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }();
    return twin ? dlsym(twin, symbol.c_str()) : nullptr;
}

std::string KernelSymbol(const Executor& ex) {
    std::string s = std::string(ex.spec->kernel) + "_";
    for (size_t i : ex.spec->kernelDtypeInputs) {
        const int32_t d = ex.tensors[i].dtype;
        s += std::string("_") + (d == 0 ? "float32" : d == 1 ? "float16" : "bfloat16");
    }
    return s;
}

aclnnStatus Run(const OpSpec& spec, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    const std::string op = spec.irType;
    auto* ex = reinterpret_cast<Executor*>(executor);
    {
        std::lock_guard<std::mutex> lock(gMutex);
        if (!gExecutors.count(ex) || ex->spec != &spec) return Fail(kParamInvalid, op + ": the executor is not one of this op's live executors");
        gExecutors.erase(ex);  // an executor runs once, then CANN frees it
    }
    std::unique_ptr<Executor> owned(ex);
    {
        std::lock_guard<std::mutex> lock(gMutex);
        gLast = Call{};
        std::snprintf(gLast.op, sizeof gLast.op, "%s", op.c_str());
        gLast.stream = stream;
        gLast.workspace = workspace;
        gLast.workspaceSize = workspaceSize;
        gLast.requiredWorkspace = ex->workspace;
        gLast.blockDim = ex->blockDim;
        gLast.ntensors = int32_t(ex->tensors.size());
        for (size_t i = 0; i < ex->tensors.size() && i < 8; ++i) {
            gLast.offsets[i] = ex->tensors[i].offset;
            gLast.storage[i] = ex->tensors[i].storage;
        }
        if (gFailNext) {
            const aclnnStatus status = gFailNext;
            gFailNext = 0;
            return Fail(status, op + ": " + gFailMessage);
        }
    }
    if (!stream) return Fail(kParamNull, op + ": stream is null");
    if (workspaceSize < ex->workspace)
        return Fail(kParamInvalid, op + ": workspace of " + std::to_string(workspaceSize) + " bytes, phase 1 asked for " + std::to_string(ex->workspace));
    if (ex->workspace && (!workspace || reinterpret_cast<uintptr_t>(workspace) % 32))
        return Fail(kParamInvalid, op + ": the workspace must be a non-null 32-byte-aligned device address");

    const std::string symbol = KernelSymbol(*ex);
    void* fn = TwinKernel(symbol);
    if (!fn) return Fail(kRuntime, op + ": no kernel binary " + symbol + " for this dtype combination");
    std::vector<uint8_t*> args;
    std::vector<uint64_t> sizes;
    std::vector<const char*> names;
    for (size_t i = 0; i < ex->tensors.size(); ++i) {
        args.push_back(Data(ex->tensors[i]));
        sizes.push_back(Bytes(ex->tensors[i]));
        names.push_back(i < spec.inputs.size() ? spec.inputs[i] : spec.outputs[i - spec.inputs.size()]);
    }
    // The whole workspace, as on the NPU: the twin keeps its system part from the kernel
    // (GetUserWorkspace skips it).
    args.push_back(static_cast<uint8_t*>(workspace));
    sizes.push_back(ex->workspace);
    names.push_back("workspace");
    args.push_back(ex->tiling.data());
    sizes.push_back(ex->tiling.size());
    names.push_back("tiling");
    char err[1024] = {0};
    uint64_t read = 0, written = 0;
    twin_set_tiling_key(ex->tilingKey);
    if (twin_launch(fn, symbol.c_str(), ex->chip->name, ex->blockDim, int(args.size()), args.data(), sizes.data(), names.data(), 0, &read,
                    &written, err, sizeof err) != 0)
        return Fail(kRuntime, op + ": the kernel failed on the twin: " + err);
    std::lock_guard<std::mutex> lock(gMutex);
    ++gCalls[op];
    return 0;
}

}  // namespace

extern "C" {

// The generated aclnn API: IR inputs, IR attrs (Float -> double, Int -> int64_t, Str -> char*), IR outputs (<name>Out), then
// workspaceSize and executor; phase 2 is the same for every op.
aclnnStatus aclnnAirfuseRmsNormGetWorkspaceSize(const aclTensor* x, const aclTensor* gamma, double epsilon, const aclTensor* yOut,
                                                const aclTensor* rstdOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return Prepare(kRmsNorm, {x, gamma, yOut, rstdOut}, Attrs(epsilon), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseRmsNorm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kRmsNorm, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseRmsNormGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* x, const aclTensor* rstd, const aclTensor* gamma,
                                                    const aclTensor* dxOut, const aclTensor* dgammaOut, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
    return Prepare(kRmsNormGrad, {dy, x, rstd, gamma, dxOut, dgammaOut}, Attrs(), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseRmsNormGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kRmsNormGrad, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseAddGetWorkspaceSize(const aclTensor* x, const aclTensor* y, const aclTensor* zOut, uint64_t* workspaceSize,
                                            aclOpExecutor** executor) {
    return Prepare(kAdd, {x, y, zOut}, Attrs(), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kAdd, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseAddRmsNormGetWorkspaceSize(const aclTensor* x1, const aclTensor* x2, const aclTensor* gamma, double epsilon,
                                                   const aclTensor* yOut, const aclTensor* rstdOut, const aclTensor* xOut,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
    return Prepare(kAddRmsNorm, {x1, x2, gamma, yOut, rstdOut, xOut}, Attrs(epsilon), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseAddRmsNorm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kAddRmsNorm, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseSiluMulGetWorkspaceSize(const aclTensor* a, const aclTensor* b, const aclTensor* yOut, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
    return Prepare(kSiluMul, {a, b, yOut}, Attrs(), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseSiluMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kSiluMul, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseSiluMulGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* a, const aclTensor* b, const aclTensor* daOut,
                                                    const aclTensor* dbOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return Prepare(kSiluMulGrad, {dy, a, b, daOut, dbOut}, Attrs(), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseSiluMulGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kSiluMulGrad, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseSwigluGetWorkspaceSize(const aclTensor* x, int64_t dim, const aclTensor* yOut, uint64_t* workspaceSize,
                                               aclOpExecutor** executor) {
    return Prepare(kSwiglu, {x, yOut}, Attrs(dim), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseSwiglu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kSwiglu, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseSwigluGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* x, int64_t dim, const aclTensor* dxOut,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
    return Prepare(kSwigluGrad, {dy, x, dxOut}, Attrs(dim), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseSwigluGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kSwigluGrad, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseRopeGetWorkspaceSize(const aclTensor* x, const aclTensor* cos, const aclTensor* sin, char* mode, const aclTensor* yOut,
                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
    if (!mode) return Fail(kParamNull, "AirfuseRope: mode is null");
    return Prepare(kRope, {x, cos, sin, yOut}, Attrs(mode), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseRope(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kRope, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseRopeGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* cos, const aclTensor* sin, char* mode,
                                                 const aclTensor* dxOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
    if (!mode) return Fail(kParamNull, "AirfuseRopeGrad: mode is null");
    return Prepare(kRopeGrad, {dy, cos, sin, dxOut}, Attrs(mode), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseRopeGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kRopeGrad, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseGeluGetWorkspaceSize(const aclTensor* x, char* approximate, const aclTensor* yOut, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
    if (!approximate) return Fail(kParamNull, "AirfuseGelu: approximate is null");
    return Prepare(kGelu, {x, yOut}, Attrs(approximate), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseGelu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kGelu, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAirfuseGeluGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* x, char* approximate, const aclTensor* dxOut,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
    if (!approximate) return Fail(kParamNull, "AirfuseGeluGrad: approximate is null");
    return Prepare(kGeluGrad, {dy, x, dxOut}, Attrs(approximate), workspaceSize, executor);
}
aclnnStatus aclnnAirfuseGeluGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return Run(kGeluGrad, workspace, workspaceSize, executor, stream);
}

// For tests/npu.
const Call* emulated_aclnn_last_call() { return &gLast; }
uint64_t emulated_aclnn_calls(const char* irType) {
    std::lock_guard<std::mutex> lock(gMutex);
    return gCalls[irType];
}
int64_t emulated_aclnn_live_executors() {
    std::lock_guard<std::mutex> lock(gMutex);
    return int64_t(gExecutors.size());
}
// The next phase 2 fails with `status` and `message`, as a device-side failure would.
void emulated_aclnn_fail_next(int32_t status, const char* message) {
    std::lock_guard<std::mutex> lock(gMutex);
    gFailNext = status;
    gFailMessage = message;
}

}  // extern "C"
