"""airfuse's fused CPU kernels against what a CPU user would otherwise run, side by side.

For each op, forward and backward, at tokens x hidden 4096 (MLP width 11008 for silu_mul and
swiglu; rope on 32 heads x 128 in Hugging Face's [batch, heads, tokens, head_dim] layout), float32
and bfloat16, in one process with interleaved rounds (median per-call time):
  airfuse   torch.ops.airfuse.<op> (backward: autograd through it, i.e. the <op>_backward kernel;
            add_rms_norm's: rms_norm_backward_add, rms_norm_backward with the residual's gradient)
  hf        the Hugging Face composite (LlamaRMSNorm, rotate_half, NewGELUActivation, act(gate) * up)
  F         the matching torch.nn.functional op where one exists (rms_norm, gelu)
  inductor  torch.compile (inductor) of the hf composite, the token dim marked dynamic so each op
            and dtype compiles once for 128..8192 tokens (1 token compiles separately)
  clone     x.clone() of the op's largest input: the bandwidth reference (airfuse's kernels stream
            the stores of large calls, csrc/cpu/vec_io.h and kernels.h, and can exceed it: of_clone > 1)
Backward times autograd.grad alone (each forward runs untimed before it). GB/s counts each tensor
the airfuse kernel must read or write once.

The clone is timed the way the row times airfuse. Forward rows: calls back to back. Backward rows:
each timed clone after an untimed airfuse forward, the previous forward's output still alive, as
each timed backward runs. The two differ where the tensors fit in the last-level cache (2048 tokens
here): back to back, a clone's output block is the one the previous clone just freed, in cache,
while after a forward the output lands in a block not just written and the forward has swept
its own inputs and output through the cache (one process, 1 thread, rope bfloat16 2048: 1251 us
back to back, 2298 after a forward with its output alive; rope_backward called directly in that
pattern ~2267). So of_clone compares the backward with a copy under the same conditions, and
of_loop_clone (backward rows) with the back-to-back clone: at 2048 tokens the latter sets a
cache-resident copy against a backward that cannot be (x, dy, dx and the forward's output do not
fit together); at 8192 tokens, where nothing stays in cache, the two agree.

Ratios are airfuse time / other time (< 1: airfuse is faster). The last line is worst_vs_inductor=<x>: the largest airfuse / inductor ratio over every
row with >= 128 tokens. add has no backward kernel (its gradient is dz twice), so no add bwd row.

    .venv/bin/python benchmarks/cpu_ops.py [--quick] [--threads N] [--ops a,b] [--clock wall|cpu] [--variant V] [--dtypes d,e]
                                           [--malloc reuse|system]

Page faults. glibc serves every block of 32 MiB or more (its largest mmap threshold) with a fresh
mmap and unmaps it on free, so each call of any contender allocating such an output (f32 2048 x
4096 and up, the clone included) pays about one minor fault per 4 KiB page it writes: 8,193 per
call for a 32 MiB clone, which took 14.2 ms against 4.7 ms for one row less (idle). Smaller blocks pay
them or not depending on glibc's moving threshold and on when the heap was last trimmed. That is
the allocator's cost, the same per byte for whichever op allocates, not the kernels' work, and it
made of_clone at 2048/8192 compare fault handling. So by default (--malloc reuse, named in the
header line) the process tells glibc, before any timing, never to mmap (M_MMAP_MAX=0) and never
to give the heap back (M_TRIM_THRESHOLD=-1): a freed block is reused by the next call of whichever
contender runs. It is process-wide, so every contender runs under it alike, and it is what a
long-running process sees under an allocator that keeps freed memory (jemalloc or tcmalloc, often
preloaded for PyTorch on CPU). --malloc system keeps glibc's defaults. Either way the columns
flt_af, flt_ind and flt_cl print the minor page faults per call (median over rounds, counted over
the timed span alone) of airfuse, inductor and the clone. Reuse is glibc's choice, not a promise:
with the largest blocks it still grows the heap on some calls (a 721 MB clone, swiglu bwd float32
8192: 176,128 faults on 2 calls of 4, measured apart), and such a row's fault column shows it.
Why, though the heap holds enough free memory: c10 allocates every CPU tensor with
posix_memalign(64), and glibc (2.36 here) serves an aligned request only from a free chunk of at
least its size plus the alignment and a minimum chunk. A freed block of exactly a tensor's size
whose neighbour is held (e.g. the tail split off it, taken by a small allocation) cannot serve the
next tensor of that size: the heap grows by a block, faulting every page, while the freed one
stays unused. Measured with glibc's mallinfo2, rms_norm fwd float32 (tokens 1 to 8192 in one
process): at 2048 tokens the Hugging Face composite grew the heap by 32 MB (8,192 faults) on 3 of
5 timed rounds with 204-300 MB free; at 8192 tokens the contenders grew it by 128-256 MB on each
of the 6 warm-up calls, 0.4-1.3 GB free; a C loop of posix_memalign(64, 32 MB), malloc(100),
free grew it 32 -> 128 MB in 6 calls (plain malloc: one block, reused). Which calls it hits depends on the heap's layout, hence runs that
differ (that row once had 10,923 faults a call: 32,768, one 128 MB block, per 3 calls). No glibc
setting removes it (mmap or trimming would fault on every call); an allocator keeping freed blocks
by size (jemalloc, tcmalloc), preloaded, would.

--clock cpu times with the process's CPU clock instead of the wall clock: on a loaded, shared
machine it leaves out the time the process waits for a core (it counts every thread's time, so it
suits --threads 1 only). airfuse's CPU kernels run their default instruction-set variant (the
header line names it; ATEN_CPU_CAPABILITY=avx2 lowers it, and ATen's and inductor's with it;
--variant AVX2 lowers airfuse's alone).
"""

import argparse
import ctypes
import math
import resource
import statistics
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import torch
import torch.nn.functional as F
from transformers.activations import NewGELUActivation
from transformers.models.llama.modeling_llama import LlamaRMSNorm, rotate_half

import airfuse  # noqa: F401  (registers torch.ops.airfuse.*)
from airfuse import cpu_kernels

EPS = 1e-6
HIDDEN, MLP = 4096, 11008
HEADS, HEAD_DIM = HIDDEN // 128, 128
ops = torch.ops.airfuse
clock = time.perf_counter  # main() may switch it to time.process_time


def _hf_rms_norm(x, gamma):
    # LlamaRMSNorm's own forward, with gamma itself as its weight so gradients reach gamma.
    return LlamaRMSNorm.forward(SimpleNamespace(weight=gamma, variance_epsilon=EPS), x)


def _residual(norm, x, gamma):
    """A decoder layer's residual add then norm: (norm(x), x), x feeding the next residual."""
    return norm(x, gamma), x


def _hf_swiglu(x):
    # Phi-3's merged gate_up_proj: gate, up = chunk(2); act(gate) * up.
    gate, up = x.chunk(2, -1)
    return F.silu(gate) * up


_new_gelu = NewGELUActivation()  # GPT-2's "gelu_new", the tanh form


def _hf_gelu(x):
    return _new_gelu(x)


@dataclass
class Bench:
    name: str
    # (tokens, dtype) -> inputs by name; differentiable ones first, in the order grads are taken.
    make: Callable
    airfuse: Callable
    hf: Callable
    functional: Callable | None = None
    differentiable: tuple = ()
    # Inputs the airfuse backward kernel reads besides the output gradients (add_rms_norm's x1
    # stands for its output x, which the backward reads, of the same size).
    backward_reads: tuple = ()
    # The inputs whose gradients the backward writes, when not every differentiable one has its own
    # tensor (add_rms_norm's x1 and x2 get one dx, written once).
    backward_writes: tuple | None = None


def _rows(width):
    return lambda tokens, dtype: {"x": torch.randn(tokens, width, dtype=dtype)}


def _norm_inputs(tokens, dtype):
    return {"x": torch.randn(tokens, HIDDEN, dtype=dtype), "gamma": torch.rand(HIDDEN, dtype=dtype) + 0.5}


def _add_norm_inputs(tokens, dtype):
    return {"x1": torch.randn(tokens, HIDDEN, dtype=dtype), "x2": torch.randn(tokens, HIDDEN, dtype=dtype),
            "gamma": torch.rand(HIDDEN, dtype=dtype) + 0.5}


def _pair(width):
    return lambda tokens, dtype: {"a": torch.randn(tokens, width, dtype=dtype), "b": torch.randn(tokens, width, dtype=dtype)}


def _rope_inputs(tokens, dtype):
    angles = torch.rand(1, 1, tokens, HEAD_DIM) * math.pi
    return {"x": torch.randn(1, HEADS, tokens, HEAD_DIM, dtype=dtype), "cos": angles.cos().to(dtype), "sin": angles.sin().to(dtype)}


BENCHES = [
    Bench("rms_norm", _norm_inputs, lambda x, gamma: ops.rms_norm(x, gamma, EPS)[0], _hf_rms_norm,
          lambda x, gamma: F.rms_norm(x, (x.shape[-1],), gamma, EPS), ("x", "gamma"), ("x", "gamma")),
    Bench("add_rms_norm", _add_norm_inputs, lambda x1, x2, gamma: ops.add_rms_norm(x1, x2, gamma, EPS)[::2],
          lambda x1, x2, gamma: _residual(_hf_rms_norm, x1 + x2, gamma),
          lambda x1, x2, gamma: _residual(lambda x, g: F.rms_norm(x, (x.shape[-1],), g, EPS), x1 + x2, gamma),
          ("x1", "x2", "gamma"), ("x1", "gamma"), ("x1", "gamma")),
    Bench("add", lambda tokens, dtype: {"x": torch.randn(tokens, HIDDEN, dtype=dtype), "y": torch.randn(tokens, HIDDEN, dtype=dtype)},
          ops.add, lambda x, y: x + y),
    Bench("silu_mul", _pair(MLP), ops.silu_mul, lambda a, b: F.silu(a) * b, None, ("a", "b"), ("a", "b")),
    Bench("swiglu", _rows(2 * MLP), ops.swiglu, _hf_swiglu, None, ("x",), ("x",)),
    Bench("rope", _rope_inputs, ops.rope, lambda x, cos, sin: x * cos + rotate_half(x) * sin, None, ("x",), ("cos", "sin")),
    Bench("gelu", _rows(HIDDEN), ops.gelu, _hf_gelu, lambda x: F.gelu(x, approximate="tanh"), ("x",), ("x",)),
]


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def _mark_tokens_dynamic(inputs):
    # Every input with the token dim (dim 0 of [tokens, ...], dim 2 of rope's [1, heads, tokens, d]).
    for t in inputs.values():
        dim = 2 if t.dim() == 4 else 0
        if t.dim() >= 2 and t.shape[dim] > 1:
            torch._dynamo.mark_dynamic(t, dim)


def _minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _start():
    # Faults read before the clock starts and (in _elapsed) after it stops: the read stays untimed.
    faults = _minor_faults()
    return clock(), faults


def _elapsed(started):
    """(seconds, minor page faults) since _start()."""
    seconds = clock() - started[0]
    return seconds, _minor_faults() - started[1]


def _timed_forward(fn, inputs, calls):
    """(seconds, minor faults) per call."""
    with torch.no_grad():
        started = _start()
        for _ in range(calls):
            fn(**inputs)
        seconds, faults = _elapsed(started)
    return seconds / calls, faults / calls


def _timed_after_forward(forward, inputs, timed, calls):
    """(seconds, minor faults) per call of timed(out), each timed after an untimed forward whose
    outputs `out` stay alive until the next forward (as a backward's saved activations do)."""
    seconds = faults = 0.0
    for _ in range(calls):
        out = as_tuple(forward(**inputs))
        started = _start()
        timed(out)
        call_seconds, call_faults = _elapsed(started)
        seconds, faults = seconds + call_seconds, faults + call_faults
    return seconds / calls, faults / calls


def _timed_backward(fn, inputs, grads, differentiable, calls):
    leaves = [inputs[name] for name in differentiable]
    return _timed_after_forward(fn, inputs, lambda out: torch.autograd.grad(out, leaves, grads[: len(out)]), calls)


def measure(candidates: dict, run, rounds: int, target_s: float) -> tuple[dict, dict]:
    """Median per-call seconds and median per-call minor faults of each candidate over interleaved
    rounds (the order rotated each round); each round times enough calls to last about target_s."""
    calls = {}
    for name, fn in candidates.items():
        run(fn, 1)  # warm-up (and, for inductor, compile)
        calls[name] = max(1, min(1000, int(target_s / max(run(fn, 1)[0], 1e-7))))
    samples = {name: [] for name in candidates}
    names = list(candidates)
    for r in range(rounds):
        # Each round starts with a different candidate, so none always inherits the cache state
        # one particular other candidate leaves behind.
        for name in names[r % len(names):] + names[:r % len(names)]:
            samples[name].append(run(candidates[name], calls[name]))
    seconds = {name: statistics.median(t for t, _ in s) for name, s in samples.items()}
    faults = {name: statistics.median(f for _, f in s) for name, s in samples.items()}
    return seconds, faults


def bench_rows(bench: Bench, direction: str, dtype, tokens_list, compiled, rounds, target_s):
    for tokens in tokens_list:
        inputs = bench.make(tokens, dtype)
        backward = direction == "bwd"
        if backward:
            for name in bench.differentiable:
                inputs[name].requires_grad_()
        reference_out = as_tuple(bench.airfuse(**inputs))
        grads = [torch.randn_like(o) for o in reference_out] if backward else []
        if tokens > 1:
            _mark_tokens_dynamic(inputs)
        candidates = {"airfuse": bench.airfuse, "hf": bench.hf}
        if bench.functional is not None:
            candidates["F"] = bench.functional
        candidates["inductor"] = compiled
        if backward:
            run = lambda fn, calls: _timed_backward(fn, inputs, grads, bench.differentiable, calls)  # noqa: E731
            writes = bench.differentiable if bench.backward_writes is None else bench.backward_writes
            moved = nbytes(grads) + nbytes(inputs[n] for n in bench.backward_reads) + nbytes(inputs[n] for n in writes)
        else:
            run = lambda fn, calls: _timed_forward(fn, inputs, calls)  # noqa: E731
            moved = nbytes(inputs.values()) + nbytes(reference_out)
        largest = max(inputs.values(), key=lambda t: t.numel()).detach()
        clones = {"clone": _timed_clones(largest)}
        if backward:
            clones = {"clone": _timed_clones_after_forward(bench.airfuse, inputs, largest), "loop_clone": clones["clone"]}
        times, faults = measure({**candidates, **clones}, lambda fn, calls: fn(calls) if fn in clones.values() else run(fn, calls),
                                rounds, target_s)
        yield tokens, moved, largest, times, faults


def _timed_clones(largest):
    """Clones back to back: (seconds, minor faults) per call."""
    def run(calls):
        started = _start()
        for _ in range(calls):
            largest.clone()
        seconds, faults = _elapsed(started)
        return seconds / calls, faults / calls
    return run


def _timed_clones_after_forward(forward, inputs, largest):
    """Clones timed as _timed_backward times each backward (_timed_after_forward)."""
    return lambda calls: _timed_after_forward(forward, inputs, lambda _: largest.clone(), calls)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tokens 1, 128, 2048 only and 3 rounds")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the machine is shared)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock, or the process CPU clock (with --threads 1)")
    parser.add_argument("--variant", help="airfuse CPU kernel variant (DEFAULT, AVX2, AVX512; default: ATen's choice)")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="comma-separated subset of dtypes")
    parser.add_argument("--ops", default=",".join(b.name for b in BENCHES), help="comma-separated subset of ops")
    parser.add_argument("--malloc", choices=("reuse", "system"), default="reuse",
                        help="reuse: glibc never mmaps nor trims, freed blocks are reused (default); system: glibc's defaults")
    args = parser.parse_args()
    if args.malloc == "reuse":
        _reuse_freed_blocks()
    with cpu_kernels.use_capability(args.variant or cpu_kernels.capability()):
        run(args)


# mallopt(3)'s parameters (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
MALLOC_REUSE = "reuse(M_MMAP_MAX=0,M_TRIM_THRESHOLD=-1)"


def _reuse_freed_blocks():
    """glibc never mmaps a block (so never unmaps one) and never trims the heap: the process keeps
    the pages it has touched, and a freed block serves the next allocation (module docstring)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:
        raise SystemExit("cpu_ops.py --malloc reuse: this C library has no mallopt (not glibc); run with --malloc system") from None
    if mallopt(M_MMAP_MAX, 0) != 1 or mallopt(M_TRIM_THRESHOLD, -1) != 1:
        raise SystemExit("cpu_ops.py --malloc reuse: glibc's mallopt refused M_MMAP_MAX=0 or M_TRIM_THRESHOLD=-1")


def run(args):
    torch.set_num_threads(args.threads)
    global clock  # noqa: PLW0603  (the timing helpers read it)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    torch._dynamo.config.recompile_limit = 64
    tokens_list = (1, 128, 2048) if args.quick else (1, 128, 2048, 8192)
    rounds, target_s = (3, 0.02) if args.quick else (5, 0.05)
    wanted = args.ops.split(",")
    print(f"threads={torch.get_num_threads()} rounds={rounds} tokens={tokens_list} torch={torch.__version__} clock={args.clock} "
          f"airfuse_cpu={cpu_kernels.capability()} aten_cpu={torch.backends.cpu.get_cpu_capability()} "
          f"malloc={MALLOC_REUSE if args.malloc == 'reuse' else 'system'}")
    header = (f"{'op':<13}{'dir':<4}{'dtype':<9}{'tokens':>6} {'airfuse_us':>11} {'/hf':>6} {'/F':>6} {'/ind':>6} {'GB/s':>7} {'clone_GB/s':>10} "
              f"{'of_clone':>8} {'of_loop_clone':>13} {'flt_af':>7} {'flt_ind':>7} {'flt_cl':>7}")
    print(header)
    worst = 0.0
    for bench in BENCHES:
        if bench.name not in wanted:
            continue
        for direction in ("fwd", "bwd") if bench.differentiable else ("fwd",):
            for dtype in (getattr(torch, name) for name in args.dtypes.split(",")):
                compiled = torch.compile(bench.hf)
                for tokens, moved, largest, t, flt in bench_rows(bench, direction, dtype, tokens_list, compiled, rounds, target_s):
                    ratio = lambda other: f"{t['airfuse'] / t[other]:6.2f}" if other in t else f"{'-':>6}"  # noqa: E731
                    gbps = moved / t["airfuse"] / 1e9
                    clone_gbps = 2 * nbytes([largest]) / t["clone"] / 1e9
                    of_loop = f"{gbps / (2 * nbytes([largest]) / t['loop_clone'] / 1e9):13.2f}" if "loop_clone" in t else f"{'-':>13}"
                    print(f"{bench.name:<13}{direction:<4}{str(dtype).removeprefix('torch.'):<9}{tokens:>6} {t['airfuse'] * 1e6:11.1f} "
                          f"{ratio('hf')} {ratio('F')} {ratio('inductor')} {gbps:7.2f} {clone_gbps:10.2f} {gbps / clone_gbps:8.2f} {of_loop} "
                          f"{flt['airfuse']:7.0f} {flt['inductor']:7.0f} {flt['clone']:7.0f}", flush=True)
                    if tokens >= 128:
                        worst = max(worst, t["airfuse"] / t["inductor"])
    print(f"worst_vs_inductor={worst:.2f}")


if __name__ == "__main__":
    main()
