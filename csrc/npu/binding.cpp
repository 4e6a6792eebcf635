// PrivateUse1 ("npu") kernels for every airfuse op: the op's aclnn two-phase entry points from the
// installed custom-op package, on the current stream. One source, two flavours (platform.h): built
// with AIRFUSE_WITH_TORCH_NPU against torch_npu for a real NPU, and without it for the emulated
// "npu" of tests/npu. One boxed kernel serves every row of op_table.h:
//   1. the op's fake impl, run on meta copies of the arguments, checks them exactly as the CPU
//      kernel does and gives the output shapes and dtypes (one definition for every backend);
//   2. inputs are made contiguous (the OpDefs do not declare AutoContiguous), outputs allocated;
//   3. at::Tensor -> aclTensor (view sizes and strides, storage offset, ND, storage base pointer);
//   4. phase 1 on this thread, workspace from the device's caching allocator, phase 2 launched in
//      stream order; no host synchronization anywhere, so the op can be captured in an aclgraph.
#include <dlfcn.h>

#include <deque>
#include <map>
#include <mutex>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aclnn_call.h"
#include "op_api_lookup.h"
#include "op_table.h"
#include "platform.h"

namespace airfuse::npu {
namespace {

// The dtypes the NPU kernels take (airfuse.opdef.IR_FLOAT_DTYPES); which combinations of them an op
// takes is checked by its fake impl.
const std::map<at::ScalarType, int32_t> kAclDtype = {
    {at::kFloat, kAclFloat}, {at::kHalf, kAclFloat16}, {at::kBFloat16, kAclBf16}};

std::string DtypeName(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return "float32";
        case at::kHalf: return "float16";
        case at::kBFloat16: return "bfloat16";
        case at::kDouble: return "float64";
        case at::kLong: return "int64";
        case at::kInt: return "int32";
        default: return c10::toString(t);
    }
}

std::string PublicName(const OpRow& row) { return std::string("airfuse.") + row.op; }

std::mutex gOriginMutex;
std::map<std::string, std::string> gOrigin;  // symbol -> library it was found in

void* Resolve(const std::string& publicName, const std::string& symbol) {
    SymbolLookup found = FindOpApiSymbol(symbol);
    if (!found.address) {
        std::ostringstream msg;
        msg << publicName << ": cannot find " << symbol << "; looked in, in this order:";
        for (size_t i = 0; i < found.searched.size(); ++i) msg << "\n  " << i + 1 << ". " << found.searched[i];
        msg << "\n" << kInstallAdvice;
        TORCH_CHECK(false, msg.str());
    }
    std::lock_guard<std::mutex> lock(gOriginMutex);
    gOrigin[symbol] = found.library;
    return found.address;
}

// aclGetRecentErrMsg lives in CANN's runtime (libascendcl.so, loaded by torch_npu); else in the
// op API libraries.
std::string RecentError() {
    static AclGetRecentErrMsgFn fn = [] {
        if (void* acl = dlopen("libascendcl.so", RTLD_LAZY | RTLD_NOLOAD))
            if (void* f = dlsym(acl, "aclGetRecentErrMsg")) return reinterpret_cast<AclGetRecentErrMsgFn>(f);
        return reinterpret_cast<AclGetRecentErrMsgFn>(FindOpApiSymbol("aclGetRecentErrMsg").address);
    }();
    if (!fn) return "(no message: aclGetRecentErrMsg was not found)";
    const char* msg = fn();
    return msg && *msg ? msg : "(the runtime gave no message)";
}

struct TensorApi {
    AclCreateTensorFn create;
    AclDestroyTensorFn destroy;
};

const TensorApi& Tensors(const std::string& publicName) {
    static std::once_flag once;
    static TensorApi api;
    std::call_once(once, [&] {
        api.create = reinterpret_cast<AclCreateTensorFn>(Resolve(publicName, "aclCreateTensor"));
        api.destroy = reinterpret_cast<AclDestroyTensorFn>(Resolve(publicName, "aclDestroyTensor"));
    });
    return api;
}

// The row must follow the schema: Tensor args -> tensor_in, float -> double, int -> int64_t,
// bool -> bool, str -> char*, then one tensor_out per return.
void CheckRowMatchesSchema(const OpRow& row, const c10::FunctionSchema& schema) {
    std::vector<std::string> expected;
    for (const auto& a : schema.arguments()) {
        switch (a.type()->kind()) {
            case c10::TypeKind::TensorType: expected.push_back("tensor_in"); break;
            case c10::TypeKind::FloatType: expected.push_back("double"); break;
            case c10::TypeKind::IntType: expected.push_back("int64_t"); break;
            case c10::TypeKind::BoolType: expected.push_back("bool"); break;
            case c10::TypeKind::StringType: expected.push_back("char*"); break;
            default: expected.push_back(a.type()->str());
        }
    }
    expected.insert(expected.end(), schema.returns().size(), "tensor_out");
    TORCH_CHECK(expected == row.params, PublicName(row), ": the NPU binding's row in csrc/npu/op_table.h does not follow the schema ",
                schema, "; rebuild the binding from the same airfuse sources");
}

struct Entry {
    const OpRow* row;
    void* phase1 = nullptr;
    AclnnRunFn phase2 = nullptr;
    std::once_flag resolved;  // row checked against the schema, symbols looked up
};

Entry& EntryOf(const c10::OperatorHandle& op) {
    static std::map<std::string, Entry> entries = [] {
        std::map<std::string, Entry> m;
        for (const OpRow& row : OpTable()) m[std::string("airfuse::") + row.op].row = &row;
        return m;
    }();
    auto it = entries.find(op.schema().name());
    TORCH_INTERNAL_ASSERT(it != entries.end(), "airfuse NPU binding: no row for ", op.schema().name());
    Entry& e = it->second;
    std::call_once(e.resolved, [&] {
        CheckRowMatchesSchema(*e.row, op.schema());
        const std::string name = PublicName(*e.row);
        e.phase1 = Resolve(name, std::string(e.row->aclnn) + "GetWorkspaceSize");
        e.phase2 = reinterpret_cast<AclnnRunFn>(Resolve(name, e.row->aclnn));
    });
    return e;
}

struct Marshalled {
    std::vector<AclArg> args;
    std::vector<const aclTensor*> tensors;  // to destroy after phase 2
    std::deque<std::string> strings;        // str attrs, at stable addresses until phase 1 returns
};

void Destroy(const TensorApi& api, const std::vector<const aclTensor*>& tensors) {
    for (const aclTensor* t : tensors) api.destroy(t);
}

const aclTensor* ToAcl(const TensorApi& api, const OpRow& row, const std::string& arg, const at::Tensor& t) {
    auto dtype = kAclDtype.find(t.scalar_type());
    TORCH_CHECK_TYPE(dtype != kAclDtype.end(), PublicName(row), ": ", arg, " has dtype ", DtypeName(t.scalar_type()),
                     ", which the NPU kernels do not take; expected one of float32, float16, bfloat16");
    // As op-plugin builds it: the storage base pointer, the view's offset in elements into it, and
    // a 1-D storage of the whole allocation.
    const int64_t storageElems = int64_t(t.storage().nbytes() / t.itemsize());
    const aclTensor* acl = api.create(t.sizes().data(), t.dim(), dtype->second, t.strides().data(), t.storage_offset(), kAclFormatNd,
                                      &storageElems, 1, const_cast<void*>(t.storage().data()));
    TORCH_CHECK(acl, PublicName(row), ": aclCreateTensor refused ", arg, " (shape ", t.sizes(), ", strides ", t.strides(), ", offset ",
                t.storage_offset(), "): ", RecentError());
    return acl;
}

std::vector<at::Tensor> MetaOutputs(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args) {
    torch::jit::Stack meta;
    for (const c10::IValue& a : args) {
        if (!a.isTensor()) {
            meta.push_back(a);
            continue;
        }
        const at::Tensor& t = a.toTensor();
        meta.push_back(at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta)));
    }
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
    std::vector<at::Tensor> outs;
    for (const c10::IValue& v : meta) outs.push_back(v.toTensor());
    return outs;
}

void Kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    Entry& entry = EntryOf(op);
    const OpRow& row = *entry.row;
    const c10::FunctionSchema& schema = op.schema();
    const size_t nargs = schema.arguments().size();
    std::vector<c10::IValue> args(stack->end() - nargs, stack->end());

    const at::Tensor* first = nullptr;
    size_t firstIndex = 0;
    for (size_t i = 0; i < nargs; ++i) {
        if (!args[i].isTensor()) continue;
        const at::Tensor& t = args[i].toTensor();
        if (!first) first = &t, firstIndex = i;
        TORCH_CHECK(t.device() == first->device(), PublicName(row), ": ", schema.arguments()[i].name(), " is on ", t.device(), " but ",
                    schema.arguments()[firstIndex].name(), " is on ", first->device());
    }
    const c10::Device device = first->device();
    c10::DeviceGuard guard(device);

    std::vector<at::Tensor> metaOuts = MetaOutputs(op, args);
    const TensorApi& api = Tensors(PublicName(row));
    Marshalled m;
    std::vector<at::Tensor> keep;  // contiguous inputs and outputs, alive until phase 2 is queued
    try {
        for (size_t i = 0; i < nargs; ++i) {
            const c10::IValue& a = args[i];
            AclArg arg{};
            if (a.isTensor()) {
                keep.push_back(a.toTensor().contiguous());
                arg.tensor = ToAcl(api, row, schema.arguments()[i].name(), keep.back());
                m.tensors.push_back(arg.tensor);
            } else if (a.isDouble()) {
                arg.f = a.toDouble();
            } else if (a.isInt()) {
                arg.i = a.toInt();
            } else if (a.isString()) {
                arg.s = m.strings.emplace_back(a.toStringRef()).data();
            } else {
                arg.b = a.toBool();
            }
            m.args.push_back(arg);
        }
        for (size_t j = 0; j < metaOuts.size(); ++j) {
            keep.push_back(at::empty(metaOuts[j].sizes(), first->options().dtype(metaOuts[j].scalar_type())));
            AclArg arg{};
            arg.tensor = ToAcl(api, row, schema.returns()[j].name(), keep.back());
            m.tensors.push_back(arg.tensor);
            m.args.push_back(arg);
        }
    } catch (...) {
        Destroy(api, m.tensors);
        throw;
    }

    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus prepared = row.phase1(entry.phase1, m.args, &workspaceSize, &executor);
    if (prepared != 0) {
        Destroy(api, m.tensors);
        TORCH_CHECK(false, PublicName(row), ": ", row.aclnn, "GetWorkspaceSize returned status ", prepared, ": ", RecentError());
    }
    // The caching allocator on the current stream: capture-safe, reused in stream order.
    at::Tensor workspace;
    try {
        if (workspaceSize) workspace = at::empty({int64_t(workspaceSize)}, first->options().dtype(at::kByte));
    } catch (...) {
        Destroy(api, m.tensors);
        throw;
    }
    void* workspacePtr = workspaceSize ? workspace.data_ptr() : nullptr;
    const aclrtStream stream = platform::CurrentStream(device);
    const std::string name = PublicName(row);
    const char* aclnn = row.aclnn;
    AclnnRunFn phase2 = entry.phase2;
    std::vector<const aclTensor*> tensors = m.tensors;
    platform::Launch(aclnn, [=, &api]() -> int {
        const aclnnStatus status = phase2(workspacePtr, workspaceSize, executor, stream);
        Destroy(api, tensors);
        TORCH_CHECK(status == 0, name, ": ", aclnn, " returned status ", status, ": ", RecentError());
        return 0;
    });

    torch::jit::drop(*stack, nargs);
    for (size_t j = 0; j < metaOuts.size(); ++j) stack->push_back(keep[keep.size() - metaOuts.size() + j]);
}

}  // namespace
}  // namespace airfuse::npu

TORCH_LIBRARY_IMPL(airfuse, PrivateUse1, m) {
    for (const airfuse::npu::OpRow& row : airfuse::npu::OpTable())
        m.impl(row.op, torch::CppFunction::makeFromBoxedFunction<&airfuse::npu::Kernel>());
}

// For tests/npu and troubleshooting, callable with ctypes.
extern "C" {

// The op table as JSON: [{"op", "aclnn", "params": [kinds], "dtypes": [...]}].
const char* airfuse_npu_op_table_json() {
    static const std::string json = [] {
        std::ostringstream js;
        js << "[";
        bool firstRow = true;
        for (const auto& row : airfuse::npu::OpTable()) {
            js << (firstRow ? "" : ",") << "{\"op\":\"" << row.op << "\",\"aclnn\":\"" << row.aclnn << "\",\"params\":[";
            firstRow = false;
            for (size_t i = 0; i < row.params.size(); ++i) js << (i ? "," : "") << "\"" << row.params[i] << "\"";
            js << "],\"dtypes\":[";
            bool firstDtype = true;
            for (const auto& [dtype, acl] : airfuse::npu::kAclDtype) {
                js << (firstDtype ? "" : ",") << "\"" << airfuse::npu::DtypeName(dtype) << "\"";
                firstDtype = false;
            }
            js << "]}";
        }
        js << "]";
        return js.str();
    }();
    return json.c_str();
}

// The library a symbol was resolved from, or null before it was.
const char* airfuse_npu_symbol_origin(const char* symbol) {
    std::lock_guard<std::mutex> lock(airfuse::npu::gOriginMutex);
    auto it = airfuse::npu::gOrigin.find(symbol);
    return it == airfuse::npu::gOrigin.end() ? nullptr : it->second.c_str();
}
}
