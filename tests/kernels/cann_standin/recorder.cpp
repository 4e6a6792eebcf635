// C entry points over the stand-in registry: what each OpDef declares (as JSON), and its
// InferShape / InferDataType / tiling adapter run on given shapes and dtypes.
// Shape specs are "d0,d1,...:dtype" per tensor, separated by ';' (dtype = ge::DataType code);
// attrs are written as the graph writes them, one per declared attr, separated by ';' (FillAttrs).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include "register/op_def_registry.h"

namespace ops {
std::map<std::string, std::function<OpDef*()>>& Registry() {
    static std::map<std::string, std::function<OpDef*()>> r;
    return r;
}
}  // namespace ops

namespace gert {
bool RuntimeAttrs::Append(const std::string& type, const std::string& text) {
    Slot s{type};
    if (type == "Str") {
        s.str = text;
    } else if (type == "Bool") {
        if (text != "0" && text != "1") return false;
        s.b = text == "1";
    } else if (type == "Float" || type == "Int") {
        // The whole text must be the number: no trailing junk, no overflow.
        char* end = nullptr;
        errno = 0;
        if (type == "Float") {
            s.f = std::strtof(text.c_str(), &end);
        } else {
            s.i = std::strtoll(text.c_str(), &end, 10);
        }
        if (text.empty() || errno == ERANGE || end != text.c_str() + text.size()) return false;
    } else {
        return false;
    }
    slots_.push_back(std::move(s));
    return true;
}
}  // namespace gert

namespace {

const char* OptionName(ops::Option o) {
    switch (o) {
        case ops::OPTIONAL: return "optional";
        case ops::REQUIRED: return "required";
        case ops::DYNAMIC: return "dynamic";
        default: return "other";
    }
}

void Params(std::ostringstream& js, const std::deque<ops::OpParamDef>& ps) {
    js << "[";
    for (size_t i = 0; i < ps.size(); ++i) {
        const auto& p = ps[i];
        js << (i ? "," : "") << "{\"name\":\"" << p.name << "\",\"param_type\":\"" << OptionName(p.paramType) << "\",\"dtypes\":[";
        for (size_t k = 0; k < p.dataTypes.size(); ++k) js << (k ? "," : "") << int(p.dataTypes[k]);
        js << "],\"formats\":[";
        for (size_t k = 0; k < p.formats.size(); ++k) js << (k ? "," : "") << int(p.formats[k]);
        js << "]}";
    }
    js << "]";
}

struct Tensor {
    std::vector<int64_t> dims;
    ge::DataType dtype;
};

std::vector<Tensor> Parse(const char* spec) {
    std::vector<Tensor> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ';')) {
        Tensor t;
        size_t colon = item.find(':');
        std::stringstream ds(item.substr(0, colon));
        std::string d;
        while (std::getline(ds, d, ',')) t.dims.push_back(std::stoll(d));
        t.dtype = ge::DataType(std::stoi(item.substr(colon + 1)));
        out.push_back(t);
    }
    return out;
}

std::unique_ptr<ops::OpDef> Make(const char* op) {
    auto it = ops::Registry().find(op);
    return it == ops::Registry().end() ? nullptr : std::unique_ptr<ops::OpDef>(it->second());
}

// The attr's default as the graph would write it ("%a" keeps a Float's value exact).
std::string DefaultText(const ops::OpAttrDef& a) {
    if (a.type == "Str") return a.stringDefault;
    char buf[64];
    if (a.type == "Float") {
        std::snprintf(buf, sizeof buf, "%a", a.defaultValue);
    } else {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(a.defaultValue));
    }
    return buf;
}

// The op's attrs from `text`: null for every attr at its default (as GE passes attrs the graph
// leaves unset), else exactly one value per declared attr, in order, separated by ';', as the graph
// writes it ("1e-06", "-1", "tanh"; "" for an op without attrs). False when the count differs or a
// value does not parse as its attr's type.
bool FillAttrs(const ops::OpDef& def, const char* text, gert::RuntimeAttrs& attrs) {
    std::vector<std::string> values;
    if (!text) {
        for (const auto& a : def.Attrs()) values.push_back(DefaultText(a));
    } else if (*text || !def.Attrs().empty()) {
        std::string rest = text;
        for (size_t at; (at = rest.find(';')) != std::string::npos; rest.erase(0, at + 1)) values.push_back(rest.substr(0, at));
        values.push_back(rest);
    }
    if (values.size() != def.Attrs().size()) return false;
    for (size_t i = 0; i < values.size(); ++i)
        if (!attrs.Append(def.Attrs()[i].type, values[i])) return false;
    return true;
}

}  // namespace

extern "C" {

const char* standin_opdefs_json() {
    static std::string json;
    std::ostringstream js;
    js << "[";
    bool first = true;
    for (auto& [name, make] : ops::Registry()) {
        std::unique_ptr<ops::OpDef> def(make());
        js << (first ? "" : ",") << "{\"op_type\":\"" << def->Name() << "\",\"inputs\":";
        first = false;
        Params(js, def->Inputs());
        js << ",\"outputs\":";
        Params(js, def->Outputs());
        js << ",\"attrs\":[";
        for (size_t i = 0; i < def->Attrs().size(); ++i) {
            const auto& a = def->Attrs()[i];
            js << (i ? "," : "") << "{\"name\":\"" << a.name << "\",\"attr_type\":\"" << OptionName(a.attrType) << "\",\"type\":\"" << a.type
               << "\",\"default\":";
            if (a.type == "Str") {
                js << "\"" << a.stringDefault << "\"}";
            } else {
                js << a.defaultValue << "}";
            }
        }
        js << "],\"configs\":{";
        const auto& cfg = def->AICoreDef().configs;
        for (size_t i = 0; i < cfg.size(); ++i) {
            const auto& [soc, own] = cfg[i];
            js << (i ? "," : "") << "\"" << soc << "\":{\"inputs\":";
            Params(js, own.inputs.empty() ? def->Inputs() : own.inputs);
            js << ",\"outputs\":";
            Params(js, own.outputs.empty() ? def->Outputs() : own.outputs);
            js << "}";
        }
        js << "},\"has_tiling\":" << (def->AICoreDef().tiling ? "true" : "false") << ",\"has_infer_shape\":"
           << (def->InferShape() ? "true" : "false") << ",\"has_infer_dtype\":" << (def->InferDataType() ? "true" : "false") << "}";
    }
    js << "]";
    json = js.str();
    return json.c_str();
}

// Output shapes and dtypes in the spec format; returns 1 when inference fails or an attr is bad.
int standin_infer(const char* op, const char* inputs, const char* attrs, char* out, int outLen) {
    auto def = Make(op);
    if (!def) return 1;
    auto in = Parse(inputs);
    gert::InferShapeContext sc;
    gert::InferDataTypeContext dc;
    for (auto& t : in) {
        sc.inputs.emplace_back(t.dims);
        dc.inputs.push_back(t.dtype);
    }
    if (!FillAttrs(*def, attrs, sc.attrs)) return 1;
    sc.outputs.resize(def->Outputs().size());
    dc.outputs.resize(def->Outputs().size(), ge::DataType(-1));
    if (def->InferShape()(&sc) != ge::GRAPH_SUCCESS || def->InferDataType()(&dc) != ge::GRAPH_SUCCESS) return 1;
    std::ostringstream os;
    for (size_t i = 0; i < sc.outputs.size(); ++i) {
        os << (i ? ";" : "");
        const auto& d = sc.outputs[i].Dims();
        for (size_t k = 0; k < d.size(); ++k) os << (k ? "," : "") << d[k];
        os << ":" << int(dc.outputs[i]);
    }
    std::snprintf(out, size_t(outLen), "%s", os.str().c_str());
    return 0;
}

// The tiling key the last successful standin_tiling call set (SetTilingKey; 0 if none).
static uint64_t gLastTilingKey = 0;
uint64_t standin_tiling_key() { return gLastTilingKey; }

// The op's tiling adapter on the given inputs and attrs (see FillAttrs); returns 1 when it fails.
int standin_tiling(const char* op, int soc, uint32_t cores, uint64_t ub, const char* inputs, const char* attrs, uint8_t* tiling,
                   uint32_t cap, uint32_t* tilingSize, uint32_t* blockDim, uint64_t* workspace, uint32_t* scheduleMode) {
    auto def = Make(op);
    if (!def || !def->AICoreDef().tiling) return 1;
    gert::TilingContext ctx;
    for (auto& t : Parse(inputs)) {
        ctx.inputShapes.emplace_back(gert::Shape(t.dims));
        ctx.inputDescs.emplace_back(t.dtype);
    }
    if (!FillAttrs(*def, attrs, ctx.attrs)) return 1;
    ctx.platform = fe::PlatFormInfos{soc, cores, ub};
    ctx.tilingCapacity = cap;
    if (def->AICoreDef().tiling(&ctx) != ge::GRAPH_SUCCESS) return 1;
    std::copy(ctx.tilingData.begin(), ctx.tilingData.end(), tiling);
    *tilingSize = uint32_t(ctx.tilingData.size());
    *blockDim = ctx.blockDim;
    *workspace = ctx.workspace[0];
    *scheduleMode = ctx.scheduleMode;
    gLastTilingKey = ctx.tilingKey;
    return 0;
}

}  // extern "C"
