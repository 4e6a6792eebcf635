// GM ordering at the intrinsic level, for every block of a launch (twin/README.md "Pipes and
// events", GM rows): every byte of the launch's GM arguments remembers the instruction that last
// wrote it (an MTE3 copy or a scalar store) and the last that read it since (an MTE2 copy or a
// scalar load), with their pipe, block and the block's SyncAll epoch. Within a block, an access of
// bytes the block wrote, or a write over bytes it read, needs the writer's (reader's) pipe ordered
// before the accessing one (a flag, a pipe_barrier for MTE3 over MTE3; the scalar unit is in
// program order); across blocks, bytes one block writes must not be read or written by another
// between the same two SyncAlls. The scalar unit's accesses come from src/scalar_access.cpp.
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
    // Off in a count-only launch: its shadow takes 20 bytes per GM byte touched, which big shapes
    // must not cost (the home-made twin keeps no GM shadow there either).
    GmOrder(const std::vector<GmBuffer>& gm, bool off) : gm_(gm), shadow_(gm.size()), off_(off) {}
    // `bytes` at `p` (inside one GM argument, already checked), read or written by instruction `in`
    // of core `c` (MTE2 reads, MTE3 writes, S either).
    void Touch(const Core& c, const Instr& in, const char* operand, const uint8_t* p, uint64_t bytes, bool write);

private:
    static constexpr uint16_t kNone = 0, kSeveral = 0xffff;  // block ids are 1-based
    struct Byte {
        uint32_t writerSeq = 0;
        uint16_t writer = kNone, writerEpoch = 0;
        uint32_t readerSeq = 0;
        uint16_t reader = kNone, readerEpoch = 0;
        Pipe writerPipe = kPipeMte3, readerPipe = kPipeMte2;
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
    bool off_;
};

}  // namespace airfuse_vendor_twin
