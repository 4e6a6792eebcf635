// GM ordering at the intrinsic level, for every block of a launch (twin/README.md "Pipes and
// events", GM rows): every byte of the launch's GM arguments remembers the MTE3 copy that last
// wrote it and the MTE2 copies that read it since, with their block and the block's SyncAll epoch.
// Within a block, a load of bytes the block stored needs MTE3 -> MTE2 ordering, a store over bytes
// it is loading MTE2 -> MTE3, and overlapping stores a barrier; across blocks, bytes one block
// writes must not be read or written by another between the same two SyncAlls. The scalar unit's
// GM accesses (GlobalTensor::GetValue/SetValue) are plain host accesses in the CPU-debug headers,
// which no intrinsic sees.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>
#include "pipe_order.h"

namespace airfuse_vendor_twin {

struct Core;
struct GmBuffer;

class GmOrder {
public:
    explicit GmOrder(const std::vector<GmBuffer>& gm) : gm_(gm), shadow_(gm.size()) {}
    // `bytes` at `p` (inside one GM argument, already checked), read by MTE2 instruction `in` of
    // core `c`, or written by MTE3 instruction `in`.
    void Touch(const Core& c, const Instr& in, const char* operand, const uint8_t* p, uint64_t bytes, bool write);

private:
    static constexpr uint16_t kNone = 0, kSeveral = 0xffff;  // block ids are 1-based
    struct Byte {
        uint32_t writerSeq = 0;
        uint16_t writer = kNone, writerEpoch = 0;
        uint32_t readerSeq = 0;
        uint16_t reader = kNone, readerEpoch = 0;
    };
    void Read(const Core& c, const Instr& in, const char* operand, size_t arg, uint64_t at, Byte& b);
    void Write(const Core& c, const Instr& in, const char* operand, size_t arg, uint64_t at, Byte& b);

    // Per argument, in pages allocated at their first access: a workspace argument spans the
    // chip's system workspace (16 MiB on the 910B), which no kernel touches.
    static constexpr uint64_t kPageBytes = 4096;
    using Pages = std::unordered_map<uint64_t, std::unique_ptr<Byte[]>>;
    Byte& At(size_t arg, uint64_t offset);

    const std::vector<GmBuffer>& gm_;
    std::vector<Pages> shadow_;
};

}  // namespace airfuse_vendor_twin
