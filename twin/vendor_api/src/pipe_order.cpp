// The per-pipe ordering checks of pipe_order.h.
#include "pipe_order.h"
#include <algorithm>
#include <string>
#include "core_model.h"

namespace airfuse_vendor_twin {

const char* PipeName(Pipe p) {
    static const char* names[kPipes] = {"S", "V", "MTE2", "MTE3"};
    return names[p];
}

void PipeOrder::Reset(uint64_t ubBytes) {
    *this = PipeOrder{};
    ub_.assign((ubBytes + 31) / 32, Block{});
}

Instr PipeOrder::Issue(Pipe p, const char* name) {
    for (int q = 0; q < kPipes; ++q) known_[p][q] = std::max(known_[p][q], known_[kPipeS][q]);
    return Instr{p, ++issued_[p], name};
}

bool PipeOrder::Ordered(Pipe p, Pipe other, uint64_t seq, uint64_t mySeq) const {
    if (seq == 0 || known_[p][other] >= seq) return true;
    return other == p && (p == kPipeS || seq == mySeq);
}

// An access conflicts with an earlier one unless the accessing pipe knows that one complete.
void PipeOrder::Check(const Instr& in, const char* operand, uint64_t block, Pipe other, const Access& earlier, const char* kind) const {
    if (Ordered(in.pipe, other, earlier.seq, in.seq)) return;
    std::string where = block == kNotUb ? std::string(operand) : Fmt("%s, UB block at offset %llu,", operand, (unsigned long long)block * 32);
    Fail(in.name, Fmt("%s (pipe %s) %s after %s (pipe %s, its instruction %llu) with nothing ordering them "
                      "(set_flag/wait_flag %s -> %s, or pipe_barrier)",
                      where.c_str(), PipeName(in.pipe), kind, earlier.name, PipeName(other), (unsigned long long)earlier.seq,
                      PipeName(other), PipeName(in.pipe)));
}

void PipeOrder::Touch(const Instr& in, const char* operand, uint64_t ubOffset, uint64_t bytes, bool write) {
    if (bytes == 0) return;
    for (uint64_t b = ubOffset / 32; b <= (ubOffset + bytes - 1) / 32 && b < ub_.size(); ++b) {
        Block& blk = ub_[b];
        if (write) {
            Check(in, operand, b, blk.writerPipe, blk.writer, "writes (WAW)");
            for (int q = 0; q < kPipes; ++q) Check(in, operand, b, Pipe(q), blk.readers[q], "writes (WAR)");
            blk.writerPipe = in.pipe;
            blk.writer = {in.seq, in.name};
            blk.unwritten = false;
            for (Access& r : blk.readers) r = Access{};
        } else {
            if (blk.unwritten)
                Fail(in.name, Fmt("%s, UB block at offset %llu, is read before anything wrote it since its AllocTensor "
                                  "(fresh UB holds stale data)", operand, (unsigned long long)b * 32));
            blk.unwritten = false;
            Check(in, operand, b, blk.writerPipe, blk.writer, "reads (RAW)");
            blk.readers[in.pipe] = {in.seq, in.name};
        }
    }
}

void PipeOrder::MarkUnwritten(uint64_t ubOffset, uint64_t bytes) {
    for (uint64_t b = ubOffset / 32; b < (ubOffset + bytes + 31) / 32 && b < ub_.size(); ++b) ub_[b].unwritten = true;
}

void PipeOrder::ReadResult(const Instr& in, const Instr& writer, const char* what) const {
    if (writer.seq == 0) Fail(in.name, Fmt("%s was never written", what));
    Check(in, what, kNotUb, writer.pipe, Access{writer.seq, writer.name}, "reads (RAW)");
}

void PipeOrder::SetFlag(Pipe from, Pipe to, int id) {
    uint64_t* clock = flagClock_[from][to][id];
    for (int q = 0; q < kPipes; ++q) clock[q] = known_[from][q];
    clock[from] = issued_[from];
}

void PipeOrder::WaitFlag(Pipe from, Pipe to, int id) {
    const uint64_t* clock = flagClock_[from][to][id];
    for (int q = 0; q < kPipes; ++q) known_[to][q] = std::max(known_[to][q], clock[q]);
}

void PipeOrder::Barrier(Pipe p) { known_[p][p] = issued_[p]; }

void PipeOrder::BarrierAll() {
    for (auto& row : known_)
        for (int q = 0; q < kPipes; ++q) row[q] = issued_[q];
}

}  // namespace airfuse_vendor_twin
