// Phase 1 of an aclnn op has one C signature per op: IR inputs, IR attrs, IR outputs (as
// opbuild generates it from the OpDef), then workspaceSize and executor. An OpRow instantiates
// the typed call from a list of parameter kinds, so each op is one row of op_table.h.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "aclnn_abi.h"

namespace airfuse::npu {

// Parameter kinds of a row. Attrs take the types the generated aclnn signature gives GE attr
// types: Float -> double, Int -> int64_t, Bool -> bool, Str -> char*.
struct TensorIn {};
struct TensorOut {};

union AclArg {
    const aclTensor* tensor;
    double f;
    int64_t i;
    bool b;
    char* s;  // alive until phase 1 returns
};

template <typename Kind> struct Param;
template <> struct Param<TensorIn> {
    using CType = const aclTensor*;
    static constexpr const char* kName = "tensor_in";
    static CType Get(const AclArg& a) { return a.tensor; }
};
template <> struct Param<TensorOut> {
    using CType = const aclTensor*;
    static constexpr const char* kName = "tensor_out";
    static CType Get(const AclArg& a) { return a.tensor; }
};
template <> struct Param<double> {
    using CType = double;
    static constexpr const char* kName = "double";
    static CType Get(const AclArg& a) { return a.f; }
};
template <> struct Param<int64_t> {
    using CType = int64_t;
    static constexpr const char* kName = "int64_t";
    static CType Get(const AclArg& a) { return a.i; }
};
template <> struct Param<bool> {
    using CType = bool;
    static constexpr const char* kName = "bool";
    static CType Get(const AclArg& a) { return a.b; }
};

template <> struct Param<char*> {
    using CType = char*;
    static constexpr const char* kName = "char*";
    static CType Get(const AclArg& a) { return a.s; }
};

using Phase1Caller = aclnnStatus (*)(void* fn, const std::vector<AclArg>& args, uint64_t* workspaceSize, aclOpExecutor** executor);

// The C function type of phase 1 for a row's kinds (the vendor check compares it with opbuild's).
template <typename... Kinds>
using Phase1Fn = aclnnStatus(typename Param<Kinds>::CType..., uint64_t*, aclOpExecutor**);

template <typename... Kinds, size_t... I>
aclnnStatus CallPhase1(void* fn, const std::vector<AclArg>& args, uint64_t* workspaceSize, aclOpExecutor** executor,
                       std::index_sequence<I...>) {
    return reinterpret_cast<Phase1Fn<Kinds...>*>(fn)(Param<Kinds>::Get(args[I])..., workspaceSize, executor);
}

template <typename... Kinds>
aclnnStatus Phase1(void* fn, const std::vector<AclArg>& args, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return CallPhase1<Kinds...>(fn, args, workspaceSize, executor, std::index_sequence_for<Kinds...>{});
}

struct OpRow {
    const char* op;     // torch op name, airfuse::<op>
    const char* aclnn;  // aclnn<IrType>; phase 1 is <aclnn>GetWorkspaceSize
    Phase1Caller phase1;
    std::vector<std::string> params;  // kinds in order, Param<>::kName
};

template <typename... Kinds>
OpRow Row(const char* op, const char* aclnn) {
    return OpRow{op, aclnn, &Phase1<Kinds...>, {Param<Kinds>::kName...}};
}

}  // namespace airfuse::npu
