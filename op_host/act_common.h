// Shared op_host parts of the activation ops (kernels/act_kernel.h): the [rows, cols] view of the
// input, the tiling adapter, same-shape inference and the OpDef dtype rows (one dtype per op).
#pragma once
#include <string>
#include "adapter_common.h"
#include "opdef_common.h"
#include "tiling/act.h"

namespace airfuse::act {

// swiglu's dim attr, wrapped into [0, rank); false when out of range.
inline bool WrapDim(int64_t dim, size_t rank, size_t& out) {
    int64_t r = int64_t(rank);
    if (dim < -r || dim >= r) return false;
    out = size_t(dim < 0 ? dim + r : dim);
    return true;
}

// x as rows of 2 * cols split at dim (swiglu), or one row of every element (flat ops).
inline bool View(const gert::Shape& x, bool gated, int64_t dim, uint64_t& rows, uint64_t& cols) {
    uint64_t total = 1;
    for (size_t i = 0; i < x.GetDimNum(); ++i) total *= uint64_t(x.GetDim(i));
    if (!gated) {
        rows = 1;
        cols = total;
        return true;
    }
    size_t d;
    if (!WrapDim(dim, x.GetDimNum(), d) || x.GetDim(d) % 2 != 0) return false;
    rows = 1;
    for (size_t i = 0; i < d; ++i) rows *= uint64_t(x.GetDim(i));
    cols = rows == 0 ? 0 : total / rows / 2;
    return true;
}

// What an op's attr 0 is: none, swiglu's dim (the view), gelu's approximate (the form).
enum class Attr { None, Dim, Approximate };

// The tiling adapter: `viewInput` is the input whose shape gives the view (x, or a for silu_mul).
inline ge::graphStatus Tiling(gert::TilingContext* ctx, const char* base, size_t viewInput, Attr attr) {
    airfuse::ChipInfo chip;
    if (!adapter::ChipFromPlatform(ctx, chip)) return ge::GRAPH_FAILED;
    auto* tilingData = ctx->GetTilingData<AirfuseActTilingData>();
    if (tilingData == nullptr) return ge::GRAPH_FAILED;  // the op's tiling buffer is smaller than the struct
    const tiling::ActOp* op = tiling::FindActOp(base);
    if (op == nullptr) return ge::GRAPH_FAILED;
    int64_t dim = -1;
    uint32_t approximate = 0;
    if (attr == Attr::Dim) {
        const int64_t* d = ctx->GetAttrs()->GetAttrPointer<int64_t>(0);
        if (d == nullptr) return ge::GRAPH_FAILED;
        dim = *d;
    } else if (attr == Attr::Approximate) {
        const char* a = ctx->GetAttrs()->GetAttrPointer<char>(0);
        if (a == nullptr || (std::string(a) != "tanh" && std::string(a) != "none")) return ge::GRAPH_FAILED;
        approximate = std::string(a) == "none" ? 1 : 0;
    }
    uint64_t rows, cols;
    if (!View(ctx->GetInputShape(viewInput)->GetStorageShape(), attr == Attr::Dim, dim, rows, cols)) return ge::GRAPH_FAILED;
    auto r = tiling::Act(chip, op->irType, op->buffers, rows, cols, adapter::DTypeOf(ctx, 0), approximate, tilingData);
    return adapter::Finish(ctx, r, false);
}

// Every output has input `from`'s shape (all of the inputs must share it).
inline ge::graphStatus SameShapes(gert::InferShapeContext* ctx, size_t inputs, size_t outputs, size_t from) {
    const gert::Shape* x = ctx->GetInputShape(from);
    if (x == nullptr) return ge::GRAPH_FAILED;
    for (size_t i = 0; i < inputs; ++i) {
        const gert::Shape* s = ctx->GetInputShape(i);
        if (s == nullptr || !(*s == *x)) return ge::GRAPH_FAILED;
    }
    for (size_t i = 0; i < outputs; ++i) {
        gert::Shape* y = ctx->GetOutputShape(i);
        if (y == nullptr) return ge::GRAPH_FAILED;
        *y = *x;
    }
    return ge::GRAPH_SUCCESS;
}

// Every output takes input 0's dtype.
inline ge::graphStatus SameDataType(gert::InferDataTypeContext* ctx, size_t outputs) {
    for (size_t i = 0; i < outputs; ++i) ctx->SetOutputDataType(i, ctx->GetInputDataType(0));
    return ge::GRAPH_SUCCESS;
}

// One dtype for every parameter, float32, float16, bfloat16 (airfuse/ops: IR_FLOAT_DTYPES).
inline opdef::Combos OneDtype(size_t params) {
    opdef::Combos c;
    for (ge::DataType t : {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16}) c.push_back(std::vector<ge::DataType>(params, t));
    return c;
}

}  // namespace airfuse::act
