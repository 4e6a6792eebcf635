// The GM ordering checks of gm_order.h.
#include "gm_order.h"
#include "core_model.h"

namespace airfuse_vendor_twin {

namespace {
uint16_t Id(const Core& c) { return uint16_t(c.blockIdx + 1); }
}  // namespace

void GmOrder::Touch(const Core& c, const Instr& in, const char* operand, const uint8_t* p, uint64_t bytes, bool write) {
    if (off_) return;
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
    if (b.writer == Id(c) && !c.order.Ordered(in.pipe, b.writerPipe, b.writerSeq, in.seq))
        Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe %s) reads (RAW) what this block's %s instruction %u stored, with nothing "
                          "ordering them (set_flag/wait_flag %s -> %s, or pipe_barrier)", operand, (unsigned long long)at, name,
                          PipeName(in.pipe), PipeName(b.writerPipe), b.writerSeq, PipeName(b.writerPipe), PipeName(in.pipe)));
    if (b.writer != kNone && b.writer != Id(c) && b.writerEpoch == c.syncEpoch)
        Fail(in.name, Fmt("%s, GM byte %llu of %s, reads what block %d wrote with no SyncAll between them: cross-core race", operand,
                          (unsigned long long)at, name, b.writer - 1));
    if (b.reader == kNone || b.readerEpoch != c.syncEpoch) {
        b.reader = Id(c);
        b.readerEpoch = c.syncEpoch;
    } else if (b.reader != Id(c)) {
        b.reader = kSeveral;
    }
    b.readerSeq = uint32_t(in.seq);
    b.readerPipe = in.pipe;
}

void GmOrder::Write(const Core& c, const Instr& in, const char* operand, size_t arg, uint64_t at, Byte& b) {
    const char* name = gm_[arg].name.c_str();
    if (b.writer == Id(c) && !c.order.Ordered(in.pipe, b.writerPipe, b.writerSeq, in.seq))
        Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe %s) writes (WAW) over this block's %s instruction %u with nothing "
                          "ordering them (%s)", operand, (unsigned long long)at, name, PipeName(in.pipe), PipeName(b.writerPipe), b.writerSeq,
                          in.pipe == b.writerPipe ? Fmt("pipe_barrier %s", PipeName(in.pipe)).c_str()
                                                  : Fmt("set_flag/wait_flag %s -> %s", PipeName(b.writerPipe), PipeName(in.pipe)).c_str()));
    if (b.writer != kNone && b.writer != Id(c) && b.writerEpoch == c.syncEpoch)
        Fail(in.name, Fmt("%s, GM byte %llu of %s, overwrites what block %d wrote with no SyncAll between them: cross-core race", operand,
                          (unsigned long long)at, name, b.writer - 1));
    if (b.reader != kNone && b.readerEpoch == c.syncEpoch) {
        if (b.reader != Id(c))
            Fail(in.name, Fmt("%s, GM byte %llu of %s, overwrites what %s read with no SyncAll between them: cross-core race", operand,
                              (unsigned long long)at, name, b.reader == kSeveral ? "other blocks" : Fmt("block %d", b.reader - 1).c_str()));
        if (!c.order.Ordered(in.pipe, b.readerPipe, b.readerSeq, in.seq))
            Fail(in.name, Fmt("%s, GM byte %llu of %s, (pipe %s) writes (WAR) what this block's %s instruction %u is still reading, with "
                              "nothing ordering them (set_flag/wait_flag %s -> %s, or pipe_barrier)", operand, (unsigned long long)at, name,
                              PipeName(in.pipe), PipeName(b.readerPipe), b.readerSeq, PipeName(b.readerPipe), PipeName(in.pipe)));
    }
    b = Byte{uint32_t(in.seq), Id(c), c.syncEpoch, 0, kNone, 0, in.pipe, kPipeMte2};
}

}  // namespace airfuse_vendor_twin
