// Per-pipe ordering of one core's instructions, at the intrinsic level (the rules of twin/README.md
// "Pipes and events", kept here by the instructions themselves): the scalar unit issues every
// instruction in program order into its pipe's queue, and MTE2, V and MTE3 each run theirs in
// order but independently of each other. Each pipe keeps a vector clock of the work of every pipe
// it knows complete: set_flag(A, B) snapshots A's (with all A work issued so far), wait_flag(A, B)
// merges it into B's, pipe_barrier(P) makes P know its own earlier work, PIPE_ALL everyone's; what
// the scalar unit has waited for, every later instruction may assume (not its own loads and stores:
// those reach another pipe by an S -> pipe flag). Every 32 B block of the
// unified buffer remembers its last writer and its readers since; an access that conflicts with one
// the accessing pipe does not know complete (read after write, write after read or write) stops
// the launch naming both instructions, their pipes and the block.
#pragma once
#include <cstdint>
#include <vector>

namespace airfuse_vendor_twin {

enum Pipe : uint8_t { kPipeS, kPipeV, kPipeMte2, kPipeMte3, kPipes };

struct Instr {
    Pipe pipe;
    uint64_t seq;  // 1-based, per pipe
    const char* name;
};

class PipeOrder {
public:
    void Reset(uint64_t ubBytes);
    Instr Issue(Pipe p, const char* name);
    void Touch(const Instr& in, const char* operand, uint64_t ubOffset, uint64_t bytes, bool write);
    // AllocTensor: the buffer holds stale data until something writes it (an intrinsic, or the
    // scalar unit: src/scalar_access.cpp); a read before that stops the launch.
    void MarkUnwritten(uint64_t ubOffset, uint64_t bytes);
    // A result held outside the unified buffer (vcadd's accumulator), written by `writer`.
    void ReadResult(const Instr& in, const Instr& writer, const char* what) const;
    void SetFlag(Pipe from, Pipe to, int id);
    void WaitFlag(Pipe from, Pipe to, int id);
    void Barrier(Pipe p);
    void BarrierAll();
    // Pipe p's instruction `mySeq` may assume `other`'s instruction `seq` complete: p knows it, or it
    // is p's own (the scalar unit runs in program order; another pipe only after a pipe_barrier).
    bool Ordered(Pipe p, Pipe other, uint64_t seq, uint64_t mySeq) const;

private:
    struct Access {
        uint64_t seq = 0;
        const char* name = nullptr;
    };
    struct Block {
        Pipe writerPipe = kPipeS;
        Access writer;
        Access readers[kPipes];
        bool unwritten = false;
    };
    // `operand` of `in` at UB block `block` (kNotUb: a result outside UB) against an earlier access.
    static constexpr uint64_t kNotUb = ~uint64_t(0);
    void Check(const Instr& in, const char* operand, uint64_t block, Pipe other, const Access& earlier, const char* kind) const;

    uint64_t issued_[kPipes] = {};
    uint64_t known_[kPipes][kPipes] = {};
    uint64_t flagClock_[kPipes][kPipes][8][kPipes] = {};
    std::vector<Block> ub_;
};

const char* PipeName(Pipe p);

}  // namespace airfuse_vendor_twin
