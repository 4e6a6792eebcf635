// Declaring an OpDef's tensors and chip configs from one table of dtype combinations, one row
// per combination in the order of airfuse's op definition (airfuse/ops/<op>.py), inputs then
// outputs, as the Python definition lists them. CANN wants the transposed form (one parallel
// list per tensor), repeated per chip whose list differs; deriving both keeps them in step.
#pragma once
#include <vector>
#include "register/op_def_registry.h"

namespace airfuse::opdef {

using Combos = std::vector<std::vector<ge::DataType>>;

// Input(...)/Output(...) with the column of each tensor; works on an OpDef or an OpAICoreConfig.
template <typename Target>
void DeclareTensors(Target& target, const std::vector<const char*>& inputs, const std::vector<const char*>& outputs,
                    const Combos& combos) {
    const std::vector<ge::Format> nd(combos.size(), ge::FORMAT_ND);
    size_t column = 0;
    auto types = [&combos](size_t c) {
        std::vector<ge::DataType> col;
        for (const auto& row : combos) col.push_back(row.at(c));
        return col;
    };
    for (const char* name : inputs) target.Input(name).ParamType(ops::REQUIRED).DataType(types(column++)).Format(nd);
    for (const char* name : outputs) target.Output(name).ParamType(ops::REQUIRED).DataType(types(column++)).Format(nd);
}

// 910B runs every combination; 310P has no bfloat16, so it gets the others (the tiling refuses
// bf16 there as well).
inline void AddChipConfigs(ops::OpDef& def, const std::vector<const char*>& inputs, const std::vector<const char*>& outputs,
                           const Combos& combos) {
    DeclareTensors(def, inputs, outputs, combos);
    def.AICore().AddConfig("ascend910b");
    Combos noBf16;
    for (const auto& row : combos) {
        bool bf16 = false;
        for (ge::DataType t : row) bf16 = bf16 || t == ge::DT_BF16;
        if (!bf16) noBf16.push_back(row);
    }
    ops::OpAICoreConfig ascend310p;
    DeclareTensors(ascend310p, inputs, outputs, noBf16);
    def.AICore().AddConfig("ascend310p", ascend310p);
}

}  // namespace airfuse::opdef
