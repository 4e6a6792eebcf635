// Recording stand-in for the parts of CANN's op_host API that airfuse's op_host sources use, so
// the real OpDef / InferShape / tiling adapter sources compile here and a test can read back what
// they declare. Names and signatures follow ascendc_facts.md §3; behaviour is only recording.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace ge {
enum DataType { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT32 = 3, DT_BF16 = 27 };
enum Format { FORMAT_ND = 2 };
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
}  // namespace ge

namespace fe {
struct PlatFormInfos {
    int socVersion;  // platform_ascendc::SocVersion
    uint32_t aivCores;
    uint64_t ubBytes;
};
}  // namespace fe

namespace gert {
class Shape {
public:
    Shape() = default;
    explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return dims_.at(i); }
    void SetDimNum(size_t n) { dims_.resize(n); }
    void SetDim(size_t i, int64_t v) { dims_.at(i) = v; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }
    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    const std::vector<int64_t>& Dims() const { return dims_; }

private:
    std::vector<int64_t> dims_;
};

class StorageShape {
public:
    explicit StorageShape(Shape s) : s_(std::move(s)) {}
    const Shape& GetStorageShape() const { return s_; }
    const Shape& GetOriginShape() const { return s_; }

private:
    Shape s_;
};

class CompileTimeTensorDesc {
public:
    explicit CompileTimeTensorDesc(ge::DataType t) : t_(t) {}
    ge::DataType GetDataType() const { return t_; }

private:
    ge::DataType t_;
};

// The op's attrs in one index space (declaration order), each stored in its declared type as
// metadef's RuntimeAttrs holds it: Float as float, Int as int64_t, Bool as bool, Str as NUL-terminated
// chars. Stricter than CANN, which reinterprets the slot: reading a slot as another type gives
// nullptr, so an adapter reading the wrong type fails its test instead of reading garbage.
class RuntimeAttrs {
public:
    // Appends the attr of IR type `type` ("Float", "Int", "Bool", "Str") written as `text`;
    // false when the text is not a value of that type.
    bool Append(const std::string& type, const std::string& text);
    template <typename T> const T* GetAttrPointer(size_t i) const {
        if (i >= slots_.size()) return nullptr;
        const Slot& s = slots_[i];
        if constexpr (std::is_same_v<T, char>) {
            return s.type == "Str" ? s.str.c_str() : nullptr;
        } else if constexpr (std::is_same_v<T, int64_t>) {
            return s.type == "Int" ? &s.i : nullptr;
        } else if constexpr (std::is_same_v<T, bool>) {
            return s.type == "Bool" ? &s.b : nullptr;
        } else {
            static_assert(std::is_same_v<T, float>, "the stand-in holds Float, Int, Bool and Str attrs");
            return s.type == "Float" ? &s.f : nullptr;
        }
    }
    const int64_t* GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const char* GetStr(size_t i) const { return GetAttrPointer<char>(i); }
    const float* GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const bool* GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    size_t GetAttrNum() const { return slots_.size(); }

private:
    struct Slot {
        std::string type;
        float f = 0;
        int64_t i = 0;
        bool b = false;
        std::string str;
    };
    std::vector<Slot> slots_;
};

class TilingContext {
public:
    std::vector<StorageShape> inputShapes;
    std::vector<CompileTimeTensorDesc> inputDescs;
    RuntimeAttrs attrs;
    fe::PlatFormInfos platform{};
    std::vector<uint8_t> tilingData;
    size_t tilingCapacity = 0;  // the compiled maximum tiling size
    uint32_t blockDim = 0;
    uint32_t scheduleMode = 0;
    uint64_t tilingKey = 0;
    size_t workspace[1] = {0};

    const StorageShape* GetInputShape(size_t i) const { return i < inputShapes.size() ? &inputShapes[i] : nullptr; }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < inputDescs.size() ? &inputDescs[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs; }
    fe::PlatFormInfos* GetPlatformInfo() { return &platform; }
    // As metadef's: nullptr when the tiling buffer's capacity is below sizeof(T).
    template <typename T> T* GetTilingData() {
        if (tilingCapacity < sizeof(T)) return nullptr;
        tilingData.assign(sizeof(T), 0);
        return reinterpret_cast<T*>(tilingData.data());
    }
    void SetBlockDim(uint32_t n) { blockDim = n; }
    void SetScheduleMode(uint32_t m) { scheduleMode = m; }
    void SetTilingKey(uint64_t k) { tilingKey = k; }
    size_t* GetWorkspaceSizes(size_t) { return workspace; }
};

class InferShapeContext {
public:
    std::vector<Shape> inputs, outputs;
    RuntimeAttrs attrs;
    const RuntimeAttrs* GetAttrs() const { return &attrs; }
    const Shape* GetInputShape(size_t i) const { return i < inputs.size() ? &inputs[i] : nullptr; }
    Shape* GetOutputShape(size_t i) { return i < outputs.size() ? &outputs[i] : nullptr; }
};

class InferDataTypeContext {
public:
    std::vector<ge::DataType> inputs, outputs;
    ge::DataType GetInputDataType(size_t i) const { return inputs.at(i); }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType t) {
        if (i >= outputs.size()) return ge::GRAPH_FAILED;
        outputs[i] = t;
        return ge::GRAPH_SUCCESS;
    }
};
}  // namespace gert

namespace ops {
enum Option { IGNORE, OPTIONAL, REQUIRED, DYNAMIC, VIRTUAL };

struct OpParamDef {
    std::string name;
    Option paramType = REQUIRED;
    std::vector<ge::DataType> dataTypes;
    std::vector<ge::Format> formats;
    OpParamDef& ParamType(Option o) { paramType = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> t) { dataTypes = std::move(t); return *this; }
    OpParamDef& Format(std::vector<ge::Format> f) { formats = std::move(f); return *this; }
};

struct OpAttrDef {
    std::string name;
    Option attrType = OPTIONAL;
    std::string type;
    double defaultValue = 0;
    std::string stringDefault;  // type "Str" (the IR's name for a string attr)
    OpAttrDef& AttrType(Option o) { attrType = o; return *this; }
    OpAttrDef& Float(float v) { type = "Float"; defaultValue = v; return *this; }
    OpAttrDef& Int(int64_t v) { type = "Int"; defaultValue = double(v); return *this; }
    OpAttrDef& Bool(bool v) { type = "Bool"; defaultValue = v; return *this; }
    OpAttrDef& String(const char* v) { type = "Str"; stringDefault = v; return *this; }
};

using TilingFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);

// A chip's own declaration of the tensors (e.g. a shorter dtype list); empty means the OpDef's.
struct OpAICoreConfig {
    std::deque<OpParamDef> inputs, outputs;
    OpParamDef& Input(const char* n) { inputs.push_back(OpParamDef{n}); return inputs.back(); }
    OpParamDef& Output(const char* n) { outputs.push_back(OpParamDef{n}); return outputs.back(); }
};

struct OpAICoreDef {
    TilingFunc tiling = nullptr;
    std::vector<std::pair<std::string, OpAICoreConfig>> configs;
    OpAICoreDef& SetTiling(TilingFunc f) { tiling = f; return *this; }
    OpAICoreDef& AddConfig(const char* soc) { configs.emplace_back(soc, OpAICoreConfig{}); return *this; }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig& config) { configs.emplace_back(soc, config); return *this; }
};

class OpDef {
public:
    explicit OpDef(const char* name) : name_(name) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { inputs_.push_back(OpParamDef{n}); return inputs_.back(); }
    OpParamDef& Output(const char* n) { outputs_.push_back(OpParamDef{n}); return outputs_.back(); }
    OpAttrDef& Attr(const char* n) { attrs_.push_back(OpAttrDef{n}); return attrs_.back(); }
    OpAICoreDef& AICore() { return aicore_; }
    OpDef& SetInferShape(InferShapeFunc f) { inferShape_ = f; return *this; }
    OpDef& SetInferDataType(InferDataTypeFunc f) { inferDataType_ = f; return *this; }

    const std::string& Name() const { return name_; }
    const std::deque<OpParamDef>& Inputs() const { return inputs_; }
    const std::deque<OpParamDef>& Outputs() const { return outputs_; }
    const std::deque<OpAttrDef>& Attrs() const { return attrs_; }
    const OpAICoreDef& AICoreDef() const { return aicore_; }
    InferShapeFunc InferShape() const { return inferShape_; }
    InferDataTypeFunc InferDataType() const { return inferDataType_; }

private:
    std::string name_;
    // deque: references returned by Input()/Output()/Attr() stay valid as more are added.
    std::deque<OpParamDef> inputs_;
    std::deque<OpParamDef> outputs_;
    std::deque<OpAttrDef> attrs_;
    OpAICoreDef aicore_;
    InferShapeFunc inferShape_ = nullptr;
    InferDataTypeFunc inferDataType_ = nullptr;
};

// The registry the recorder reads: OpType -> definition, filled at load time by OP_ADD.
std::map<std::string, std::function<OpDef*()>>& Registry();

struct OpAdder {
    OpAdder(const char* name, std::function<OpDef*()> make) { Registry()[name] = std::move(make); }
};
}  // namespace ops

#define OP_ADD(Op) static ::ops::OpAdder g_opAdder_##Op(#Op, [] { return static_cast<::ops::OpDef*>(new Op(#Op)); })
