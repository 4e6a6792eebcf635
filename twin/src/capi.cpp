// C entry points for airfuse/twin.py: the shared tiling core, by op, on flattened shapes.
#include <cstdio>
#include <cstring>
#include "rms_norm.h"
#include "rms_norm_grad.h"
#include "add.h"
#include "act.h"
#include "rope.h"

namespace {

using airfuse::ChipInfo;
using airfuse::tiling::DType;
using airfuse::tiling::Result;

// The workspace is reported whole, system part first, as the CANN adapter sizes it (user +
// GetLibApiWorkSpaceSize) and twin_launch expects its "workspace" argument; with the bytes of the
// tiling struct written and the tiling key (what the adapter gives SetTilingKey).
int Finish(const ChipInfo& chip, const Result& r, uint32_t bytes, uint32_t* blockDim, uint64_t* workspace, uint32_t* tilingBytes,
           uint64_t* tilingKey, char* err, int errLen) {
    if (!r.ok()) {
        std::snprintf(err, size_t(errLen), "%s", r.error.c_str());
        return 1;
    }
    *blockDim = r.blockDim;
    *workspace = chip.systemWorkspaceBytes + r.workspaceBytes;
    *tilingBytes = bytes;
    *tilingKey = r.tilingKey;
    return 0;
}

const ChipInfo* Chip(const char* soc, char* err, int errLen) {
    const ChipInfo* c = airfuse::FindChip(soc);
    if (!c) std::snprintf(err, size_t(errLen), "unknown chip '%s'", soc);
    return c;
}

// rms_norm and add_rms_norm: the struct of the strategy their selector chose (its tiling key).
int ForwardTiling(const ChipInfo& c, const Result& r, const airfuse::tiling::RmsNormTilings& t, void* out, uint32_t* blockDim, uint64_t* workspace,
                  uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    uint32_t bytes = 0;
    if (r.ok() && r.tilingKey == kRmsNormResidentKey) {
        bytes = sizeof t.resident;
        std::memcpy(out, &t.resident, bytes);
    } else if (r.ok()) {
        bytes = sizeof t.chunks;
        std::memcpy(out, &t.chunks, bytes);
    }
    return Finish(c, r, bytes, blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

}  // namespace

extern "C" {

int twin_tiling_rms_norm(const char* soc, uint64_t rows, uint32_t cols, int32_t x, int32_t gamma, float eps, uint32_t force, void* out, uint32_t* blockDim,
                         uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    airfuse::tiling::RmsNormTilings t;
    auto r = airfuse::tiling::RmsNorm(*c, rows, cols, DType(x), DType(gamma), eps, &t, force);
    return ForwardTiling(*c, r, t, out, blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

int twin_tiling_add_rms_norm(const char* soc, uint64_t rows, uint32_t cols, int32_t x, int32_t gamma, float eps, uint32_t force, void* out,
                             uint32_t* blockDim, uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    airfuse::tiling::RmsNormTilings t;
    auto r = airfuse::tiling::AddRmsNorm(*c, rows, cols, DType(x), DType(gamma), eps, &t, force);
    return ForwardTiling(*c, r, t, out, blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

int twin_tiling_rms_norm_grad(const char* soc, uint64_t rows, uint32_t cols, int32_t x, int32_t gamma, uint32_t force, void* out, uint32_t* blockDim,
                              uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    airfuse::tiling::RmsNormGradTilings t;
    auto r = airfuse::tiling::RmsNormGrad(*c, rows, cols, DType(x), DType(gamma), &t, force);
    uint32_t bytes = 0;
    if (r.ok() && r.tilingKey == kRmsNormGradSlicesKey) {
        bytes = sizeof t.slices;
        std::memcpy(out, &t.slices, bytes);
    } else if (r.ok()) {
        bytes = sizeof t.rows;
        std::memcpy(out, &t.rows, bytes);
    }
    return Finish(*c, r, bytes, blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

int twin_tiling_add(const char* soc, uint64_t elems, int32_t dtype, uint32_t force, void* out, uint32_t* blockDim, uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    auto r = airfuse::tiling::Add(*c, elems, DType(dtype), static_cast<AirfuseAddTilingData*>(out), force);
    return Finish(*c, r, sizeof(AirfuseAddTilingData), blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

// The activation kernels (kernels/act_kernel.h) by op base name: silu_mul, silu_mul_grad, swiglu, swiglu_grad, gelu, gelu_grad.
int twin_tiling_act(const char* soc, const char* op, uint64_t rows, uint64_t cols, int32_t dtype, uint32_t approximate, uint32_t force, void* out,
                    uint32_t* blockDim, uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    const airfuse::tiling::ActOp* a = airfuse::tiling::FindActOp(op);
    if (!a) {
        std::snprintf(err, size_t(errLen), "unknown activation kernel '%s'", op);
        return 1;
    }
    auto r = airfuse::tiling::Act(*c, a->irType, a->buffers, rows, cols, DType(dtype), approximate, static_cast<AirfuseActTilingData*>(out), force);
    return Finish(*c, r, sizeof(AirfuseActTilingData), blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

// rope and rope_grad: x's (or dy's) and cos's dims, `rank` of each.
int twin_tiling_rope(const char* soc, int grad, int32_t rank, const int64_t* x, const int64_t* table, int32_t xType, int32_t tableType,
                     const char* mode, uint32_t force, void* out, uint32_t* blockDim, uint64_t* workspace, uint32_t* tilingBytes, uint64_t* tilingKey, char* err, int errLen) {
    const ChipInfo* c = Chip(soc, err, errLen);
    if (!c) return 1;
    auto r = airfuse::tiling::Rope(grad ? "AirfuseRopeGrad" : "AirfuseRope", *c, std::vector<int64_t>(x, x + rank),
                                   std::vector<int64_t>(table, table + rank), DType(xType), DType(tableType), mode,
                                   static_cast<AirfuseRopeTilingData*>(out), force);
    return Finish(*c, r, sizeof(AirfuseRopeTilingData), blockDim, workspace, tilingBytes, tilingKey, err, errLen);
}

uint32_t twin_tiling_size(const char* op) {
    std::string o = op;
    // rms_norm and add_rms_norm: the larger of their strategies' structs (the one written is reported by the tiling).
    if (o == "rms_norm" || o == "add_rms_norm")
        return uint32_t(sizeof(AirfuseRmsNormResidentTilingData) > sizeof(AirfuseRmsNormChunksTilingData) ? sizeof(AirfuseRmsNormResidentTilingData)
                                                                                                         : sizeof(AirfuseRmsNormChunksTilingData));
    // rms_norm_grad: its rows' struct, the larger of its strategies' (the one written, and its
    // bytes, are reported by its tiling).
    static_assert(sizeof(AirfuseRmsNormGradRowsTilingData) >= sizeof(AirfuseRmsNormGradSlicesTilingData), "rms_norm_grad's buffer");
    if (o == "rms_norm_grad") return sizeof(AirfuseRmsNormGradRowsTilingData);
    if (o == "rms_norm_chunks") return sizeof(AirfuseRmsNormChunksTilingData);
    if (o == "rms_norm_grad_slices") return sizeof(AirfuseRmsNormGradSlicesTilingData);
    if (o == "add") return sizeof(AirfuseAddTilingData);
    if (o == "act") return sizeof(AirfuseActTilingData);
    if (o == "rope") return sizeof(AirfuseRopeTilingData);
    return 0;
}

}  // extern "C"
