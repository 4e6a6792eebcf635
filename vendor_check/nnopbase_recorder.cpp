// A recording stand-in of nnopbase, the CANN runtime library the aclnn wrappers opbuild generates
// call into (not public). It defines the Nnopbase* functions airfuse's generated wrappers call,
// with the parameter types the generated code declares, and records what each call passes: the
// op type, every input and output tensor with its IR index, every attr with its index, dtype and
// value, the parameter names, and the workspace query and run. tests/vendor/test_opbuild.py calls
// the generated wrappers through the binding's op table (aclnn_table_check.cpp) and compares the
// recording with airfuse's op definitions. The library links with --no-undefined, so a wrapper
// that starts calling an nnopbase function not defined here fails the build rather than the test.
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"

namespace {

// The generated code's own layout of these (opbuild's op_aclnn_generator.cpp writes them).
struct DfxId {
    uint32_t id;
    const char* funcName;
    bool hasReg;
};
enum AttrDtype : int { kBool = 0, kFloat, kInt, kString };

struct Recording {
    std::string opType;
    uint32_t inputNum = 0, outputNum = 0, attrsNum = 0;
    std::vector<std::string> events;  // JSON objects, in call order
    int executors = 0;
};
Recording gRecording;
int gExecutorSpace;  // its address is the executor space handed out

std::string Hex(const void* p) {
    std::ostringstream s;
    s << "\"" << p << "\"";
    return s.str();
}

std::string Quoted(const char* text) {
    std::string out = "\"";
    for (const char* c = text; *c; ++c) out += (*c == '"' || *c == '\\') ? std::string("\\") + *c : std::string(1, *c);
    return out + "\"";
}

void Record(const std::string& event) { gRecording.events.push_back(event); }

void RecordTensor(const char* kind, const aclTensor* tensor, uint32_t index) {
    Record(std::string("{\"call\":\"") + kind + "\",\"index\":" + std::to_string(index) + ",\"tensor\":" + Hex(tensor) + "}");
}

std::string AttrValue(const void* addr, size_t len, int dtype) {
    std::ostringstream s;
    s.precision(17);
    switch (dtype) {
        case kBool: s << (len == 1 && *static_cast<const bool*>(addr) ? "true" : "false"); break;
        case kFloat: {
            float f;
            std::memcpy(&f, addr, sizeof f);
            s << (len == sizeof(float) ? f : 0.0f);
            break;
        }
        case kInt: {
            int64_t i;
            std::memcpy(&i, addr, sizeof i);
            s << (len == sizeof(int64_t) ? i : 0);
            break;
        }
        case kString: s << Quoted(static_cast<const char*>(addr)); break;
        default: s << "null";
    }
    return s.str();
}

const char* kDtypeNames[] = {"bool", "float", "int", "string"};

}  // namespace

void NnopbaseOpLogE(const aclnnStatus code, const char* const expr) {
    Record("{\"call\":\"error\",\"status\":" + std::to_string(code) + ",\"expr\":" + Quoted(expr) + "}");
}

extern "C" {

aclnnStatus NnopbaseCreateExecutorSpace(void** space) {
    *space = &gExecutorSpace;
    return 0;
}

void* NnopbaseGetExecutor(void* space, const char* opType, char*, uint32_t inputNum, char*, uint32_t outputNum, char*, uint32_t attrsNum) {
    if (space != &gExecutorSpace) return nullptr;
    gRecording.opType = opType;
    gRecording.inputNum = inputNum;
    gRecording.outputNum = outputNum;
    gRecording.attrsNum = attrsNum;
    ++gRecording.executors;
    return &gRecording;
}

aclnnStatus NnopbaseAddInput(void*, const aclTensor* tensor, const uint32_t index) {
    RecordTensor("input", tensor, index);
    return 0;
}

aclnnStatus NnopbaseAddOutput(void*, const aclTensor* tensor, const uint32_t index) {
    RecordTensor("output", tensor, index);
    return 0;
}

aclnnStatus NnopbaseAddAttrWithDtype(void*, void* attrAddr, size_t attrLen, const size_t index, const int dtype) {
    const char* name = dtype >= kBool && dtype <= kString ? kDtypeNames[dtype] : "unknown";
    Record(std::string("{\"call\":\"attr\",\"index\":") + std::to_string(index) + ",\"dtype\":\"" + name + "\",\"bytes\":" +
           std::to_string(attrLen) + ",\"value\":" + AttrValue(attrAddr, attrLen, dtype) + "}");
    return 0;
}

aclnnStatus NnopbaseAddParamName(void*, const uint32_t index, const char* name, const bool isInput) {
    Record(std::string("{\"call\":\"param_name\",\"index\":") + std::to_string(index) + ",\"name\":" + Quoted(name) +
           ",\"input\":" + (isInput ? "true" : "false") + "}");
    return 0;
}

uint64_t NnopbaseMsprofSysTime() { return 0; }
aclnnStatus NnopbaseAddTilingId(void*, DfxId*) { return 0; }
void NnopbaseReportApiInfo(const uint64_t, DfxId&) {}
void NnopbaseSetMatchArgsFlag(void*) {}
// No executor is cached here, so the generated code always builds the call in full.
bool NnopbaseMatchArgs(void*, uint64_t*) { return false; }

aclnnStatus NnopbaseAddSocNameList(void*, void*, const char* const* socNameList, size_t socNameListLen) {
    std::string names;
    for (size_t i = 0; i < socNameListLen; ++i) names += (i ? "," : "") + Quoted(socNameList[i]);
    Record("{\"call\":\"soc_names\",\"names\":[" + names + "]}");
    return 0;
}

// Called instead of NnopbaseAddSocNameList by nnopbase versions without it (a weak symbol there).
aclnnStatus NnopbaseAddSupportList(void*, void*, uint32_t*, size_t socSupportListLen) {
    Record("{\"call\":\"soc_list\",\"count\":" + std::to_string(socSupportListLen) + "}");
    return 0;
}

aclnnStatus NnopbaseRunForWorkspace(void*, uint64_t* workspaceLen) {
    *workspaceLen = 0;
    Record("{\"call\":\"run_for_workspace\"}");
    return 0;
}

aclnnStatus NnopbaseRunWithWorkspace(void* executor, aclrtStream stream, void* workspace, uint64_t workspaceSize) {
    Record("{\"call\":\"run\",\"executor_is_phase1s\":" + std::string(executor == &gRecording ? "true" : "false") + ",\"stream\":" +
           Hex(stream) + ",\"workspace\":" + Hex(workspace) + ",\"workspace_size\":" + std::to_string(workspaceSize) + "}");
    return 0;
}

// For tests/vendor: the recording as JSON, and a fresh one.
const char* nnopbase_recording_json() {
    static std::string json;
    std::ostringstream s;
    s << "{\"op_type\":" << Quoted(gRecording.opType.c_str()) << ",\"input_num\":" << gRecording.inputNum << ",\"output_num\":"
      << gRecording.outputNum << ",\"attrs_num\":" << gRecording.attrsNum << ",\"executors\":" << gRecording.executors << ",\"events\":[";
    for (size_t i = 0; i < gRecording.events.size(); ++i) s << (i ? "," : "") << gRecording.events[i];
    s << "]}";
    json = s.str();
    return json.c_str();
}

void nnopbase_recording_reset() { gRecording = Recording{}; }

}  // extern "C"
