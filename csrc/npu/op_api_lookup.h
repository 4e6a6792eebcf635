// Run-time lookup of aclnn symbols in torch_npu op-plugin's order (GetOpApiFuncAddr):
//   1. <entry>/op_api/lib/libcust_opapi.so for each ':'-separated entry of ASCEND_CUSTOM_OPP_PATH
//   2. $ASCEND_OPP_PATH/vendors/<v>/op_api/lib/libcust_opapi.so for each v of config.ini's load_priority
//   3. every $ASCEND_HOME_PATH/lib64/libopapi_*.so
//   4. libopapi.so, then CANN's aclnn feature libraries, by the dynamic loader's search path
// with op-plugin's owner rule (root skips libraries of other users; others skip those not theirs or
// root's). Unlike op-plugin, which reads the environment when libtorch_npu.so loads, the
// environment is read when the first symbol is looked up, so it can be set after `import torch_npu`.
#pragma once
#include <string>
#include <vector>

namespace airfuse::npu {

struct SymbolLookup {
    void* address = nullptr;
    std::string library;                // where it was found
    std::vector<std::string> searched;  // when not found: every place looked, and why each failed
};

SymbolLookup FindOpApiSymbol(const std::string& symbol);

// The packaging advice every lookup failure carries.
extern const char* const kInstallAdvice;

}  // namespace airfuse::npu
