// The binding's op table (csrc/npu/op_table.h) against the aclnn prototypes opbuild generated from
// op_host for one chip (every aclnn_<op>.h, through the generated aclnn_generated.h):
//  - at compile time, one static_assert per row and phase: phase 1's C type built from the row's
//    parameter kinds is exactly opbuild's aclnn<Op>GetWorkspaceSize, and phase 2 is
//    aclnn<Op>'s; a row that disagrees (e.g. epsilon as float) does not build;
//  - at run time, airfuse_vendor_call_row calls a row's generated wrappers the way the binding
//    does (OpRow::phase1 with the marshalled arguments, then phase 2), into the recording
//    nnopbase of nnopbase_recorder.cpp, for tests/vendor/test_opbuild.py.
#include <cstring>
#include <type_traits>
#include <vector>

#include "aclnn_generated.h"
#include "op_table.h"

namespace airfuse::npu {

#define AIRFUSE_CHECK_PHASES(op, aclnn, ...)                                                                          \
    static_assert(std::is_same_v<decltype(::aclnn##GetWorkspaceSize), Phase1Fn<__VA_ARGS__>>,                          \
                  "csrc/npu/op_table.h row " #op ": phase 1 differs from opbuild's " #aclnn "GetWorkspaceSize");        \
    static_assert(std::is_same_v<decltype(&::aclnn), AclnnRunFn>,                                                        \
                  "csrc/npu/op_table.h row " #op ": phase 2 differs from opbuild's " #aclnn);
AIRFUSE_NPU_OP_ROWS(AIRFUSE_CHECK_PHASES)
#undef AIRFUSE_CHECK_PHASES

namespace {
struct GeneratedEntry {
    const char* op;
    void* phase1;
    AclnnRunFn phase2;
};
#define AIRFUSE_GENERATED_ENTRY(op, aclnn, ...) {#op, reinterpret_cast<void*>(&::aclnn##GetWorkspaceSize), &::aclnn},
const GeneratedEntry kGenerated[] = {AIRFUSE_NPU_OP_ROWS(AIRFUSE_GENERATED_ENTRY)};
#undef AIRFUSE_GENERATED_ENTRY
}  // namespace

}  // namespace airfuse::npu

extern "C" {

// Calls op's row with `args` (the row's kinds, in order) and runs phase 2 on `stream` with
// `workspace`. Returns the first non-zero status; -1 when op has no row or nargs is not the row's.
int airfuse_vendor_call_row(const char* op, const airfuse::npu::AclArg* args, int nargs, void* stream, void* workspace) {
    using namespace airfuse::npu;
    for (const OpRow& row : OpTable()) {
        if (std::strcmp(row.op, op) != 0) continue;
        if (size_t(nargs) != row.params.size()) return -1;
        for (const GeneratedEntry& entry : kGenerated) {
            if (std::strcmp(entry.op, op) != 0) continue;
            uint64_t workspaceSize = 0;
            aclOpExecutor* executor = nullptr;
            const aclnnStatus prepared = row.phase1(entry.phase1, std::vector<AclArg>(args, args + nargs), &workspaceSize, &executor);
            if (prepared != 0) return prepared;
            return entry.phase2(workspace, workspaceSize, executor, stream);
        }
    }
    return -1;
}

}  // extern "C"
