// The GM ordering checks of gm_order.h.
#include "gm_order.h"
#include "core_model.h"

namespace airfuse_vendor_twin {

namespace {
uint16_t Id(const Core& c) { return uint16_t(c.blockIdx + 1); }
}  // namespace

void GmOrder::Touch(const Core& c, const Instr& in, const char* operand, const uint8_t* p, uint64_t bytes, bool write) {
    for (size_t arg = 0; arg < gm_.size(); ++arg) {
        const GmBuffer& g = gm_[arg];
        if (p < g.base || p >= g.base + g.bytes) continue;
        uint64_t at = uint64_t(p - g.base);
        for (uint64_t i = at; i < at + bytes; ++i) {
            if (write) Write(c, in, operand, arg, i, At(arg, i));
            else Read(c, in, operand, arg, i, At(arg, i));
        }
        return;
    }
}

GmOrder::Byte& GmOrder::At(size_t arg, uint64_t offset) {
    std::unique_ptr<Byte[]>& page = shadow_[arg][offset / kPageBytes];
    if (!page) page = std::make_unique<Byte[]>(kPageBytes);
    return page[offset % kPageBytes];
}

void GmOrder::Read(const Core& c, const Instr& in, const char* operand, size_t arg, uint64_t at, Byte& b) {
    const char* name = gm_[arg].name.c_str();
    if (b.writer == Id(c) && !c.order.Knows(kPipeMte2, kPipeMte3, b.writerSeq))
        Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe MTE2) reads (RAW) what this block's MTE3 instruction %u stored, with nothing "
                          "ordering them (set_flag/wait_flag MTE3 -> MTE2, or pipe_barrier)", operand, (unsigned long long)at, name, b.writerSeq));
    if (b.writer != kNone && b.writer != Id(c) && b.writerEpoch == c.syncEpoch)
        Fail(in.name, Fmt("%s, GM byte %llu of %s, reads what block %d wrote with no SyncAll between them: cross-core race", operand,
                          (unsigned long long)at, name, b.writer - 1));
    if (b.reader == kNone || b.readerEpoch != c.syncEpoch) {
        b = Byte{b.writerSeq, b.writer, b.writerEpoch, uint32_t(in.seq), Id(c), c.syncEpoch};
    } else if (b.reader == Id(c)) {
        b.readerSeq = uint32_t(in.seq);
    } else {
        b.reader = kSeveral;
    }
}

void GmOrder::Write(const Core& c, const Instr& in, const char* operand, size_t arg, uint64_t at, Byte& b) {
    const char* name = gm_[arg].name.c_str();
    if (b.writer == Id(c) && b.writerSeq != in.seq && !c.order.Knows(kPipeMte3, kPipeMte3, b.writerSeq))
        Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe MTE3) writes (WAW) over this block's MTE3 instruction %u with nothing "
                          "ordering them (pipe_barrier MTE3)", operand, (unsigned long long)at, name, b.writerSeq));
    if (b.writer != kNone && b.writer != Id(c) && b.writerEpoch == c.syncEpoch)
        Fail(in.name, Fmt("%s, GM byte %llu of %s, overwrites what block %d wrote with no SyncAll between them: cross-core race", operand,
                          (unsigned long long)at, name, b.writer - 1));
    if (b.reader != kNone && b.readerEpoch == c.syncEpoch) {
        if (b.reader != Id(c))
            Fail(in.name, Fmt("%s, GM byte %llu of %s, overwrites what %s read with no SyncAll between them: cross-core race", operand,
                              (unsigned long long)at, name, b.reader == kSeveral ? "other blocks" : Fmt("block %d", b.reader - 1).c_str()));
        if (!c.order.Knows(kPipeMte3, kPipeMte2, b.readerSeq))
            Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe MTE3) writes (WAR) what this block's MTE2 instruction %u is still loading, with "
                              "nothing ordering them (set_flag/wait_flag MTE2 -> MTE3, or pipe_barrier)", operand, (unsigned long long)at, name,
                              b.readerSeq));
    }
    b = Byte{uint32_t(in.seq), Id(c), c.syncEpoch, 0, kNone, 0};
}

}  // namespace airfuse_vendor_twin
