"""Modelled time of airfuse's Ascend C kernels on LLM shapes, from the CPU twin's cost model.

For each kernel, shape and chip: the time the twin's per-pipe cost model gives the launch
(twin/README.md, "Cost model"; every parameter and its source: `--params`), the roofline, their
ratio and the block_dim the tiling chose. The roofline is the larger of the minimum GM bytes
(each input read once, each output written once) at the chip's HBM bandwidth and the vector
bound (the fewest float32 vector passes per element any implementation issues, VECTOR_PASSES,
at 256 B per cycle on every core), plus one copy-in and one copy-out latency: an output depends
on its input, so the first load must land before a dependent store can be issued, and that store
lands one more copy latency later (the two latencies are in series, never overlapped).
Chips: Ascend910B2 and Ascend910B3 (bfloat16), Ascend310P3 (float16; it has no bfloat16).

Every row is a full launch of the kernel in the twin's count-only mode (instructions costed, no
data computed: the whole table takes about 5 minutes on 2 cores). Earlier versions extrapolated
launches of more than 4 M elements from shorter runs; that was off by up to 11 % (310P rms_norm
16384 x 1024), so it is gone.

Tokens 1 and 16 are printed apart (launch-bound: latency, not bandwidth, decides them) and left
out of the worst ratio. Last line: worst_time_ratio=<x> over the rest (forward and backward
kernels are also summarised apart: the targets are 1.25 forward, 1.5 backward).
Needs `make twin`.
"""

import argparse

import torch

import airfuse  # noqa: F401
from airfuse import twin

CHIPS = {"Ascend910B2": (torch.bfloat16,), "Ascend910B3": (torch.bfloat16,), "Ascend310P3": (torch.float16,)}
TOKENS = (1, 16, 128, 1024, 4096, 16384)
LAUNCH_BOUND_TOKENS = (1, 16)
HIDDEN = (128, 1024, 4096, 8192, 16384)
MLP_WIDTHS = (11008, 14336)  # intermediate sizes of LLaMA-2 7B and LLaMA-3 8B / Mistral 7B
ROPE_HEADS, ROPE_DIM = 32, 128  # q of a 32-head attention, [1, S, N, D] with cos/sin [1, S, 1, D]
NORM_KERNELS = ("rms_norm", "add_rms_norm", "rms_norm_backward", "add")
ACT_KERNELS = ("silu_mul", "silu_mul_backward", "swiglu", "swiglu_backward", "gelu", "gelu_backward")
ROPE_KERNELS = ("rope", "rope_backward")

# Float32 vector passes per element of x that no implementation avoids, for half/bf16 data (the
# casts in and out included): rms_norm casts x, squares, reduces, scales, multiplies by gamma and
# casts back; the activation ones count Exp as 2 (its half-rate throughput on float32). gelu (tanh
# form) as x / (1 + exp(-w)): cast, x·x, a scale, an offset, ·x, Exp, +1, the divide and the cast
# back, the fewest passes known (airfuse's kernel issues exactly these).
VECTOR_PASSES = {"rms_norm": 6, "add_rms_norm": 9, "rms_norm_backward": 10, "add": 4, "silu_mul": 9, "silu_mul_backward": 15,
                 "swiglu": 9, "swiglu_backward": 15, "gelu": 10, "gelu_backward": 17, "rope": 6, "rope_backward": 6}


def params(chip):
    rows = twin.cost_parameters()
    family = chip[6:10]

    def get(name):
        for key in (chip, family):
            for r in rows:
                if r.chip == key and r.name == name:
                    return r.value
        raise KeyError(name)

    return get


def inputs(kernel, tokens, hidden, dtype):
    """(the kernel's twin call with count_only and block_dim to fill in, min GM bytes, elements of x)."""
    t = lambda *shape, dt=dtype: torch.empty(*shape, dtype=dt)  # noqa: E731
    if kernel in ("rms_norm", "add_rms_norm", "rms_norm_backward", "add"):
        x, x2, gamma = t(tokens, hidden), t(tokens, hidden), t(hidden)
        size = x.numel() * x.element_size()
        rstd = tokens * 4
        call, minimum = {
            "rms_norm": (lambda **k: twin.rms_norm(x, gamma, **k), 2 * size + gamma.numel() * gamma.element_size() + rstd),
            "add_rms_norm": (lambda **k: twin.add_rms_norm(x, x2, gamma, **k), 4 * size + gamma.numel() * gamma.element_size() + rstd),
            "rms_norm_backward": (lambda **k: twin.rms_norm_backward(x, x2, t(tokens, 1, dt=torch.float32), gamma, **k),
                                  3 * size + 2 * gamma.numel() * gamma.element_size() + rstd),
            "add": (lambda **k: twin.add(x, x2, **k), 3 * size),
        }[kernel]
        return call, minimum, x.numel()
    if kernel in ACT_KERNELS:
        a, b, dy = t(tokens, hidden), t(tokens, hidden), t(tokens, hidden)
        merged = t(tokens, 2 * hidden)
        size = a.numel() * a.element_size()
        call, minimum = {
            "silu_mul": (lambda **k: twin.silu_mul(a, b, **k), 3 * size),
            "silu_mul_backward": (lambda **k: twin.silu_mul_backward(dy, a, b, **k), 5 * size),
            "swiglu": (lambda **k: twin.swiglu(merged, **k), 3 * size),
            "swiglu_backward": (lambda **k: twin.swiglu_backward(dy, merged, **k), 5 * size),
            "gelu": (lambda **k: twin.gelu(a, **k), 2 * size),
            "gelu_backward": (lambda **k: twin.gelu_backward(dy, a, **k), 3 * size),
        }[kernel]
        return call, minimum, a.numel()
    x, cos = t(1, tokens, ROPE_HEADS, ROPE_DIM), t(1, tokens, 1, ROPE_DIM)
    size = x.numel() * x.element_size()
    return (lambda **k: getattr(twin, kernel)(x, cos, cos, **k)), 2 * size + 2 * cos.numel() * cos.element_size(), x.numel()


def run(kernel, tokens, hidden, dtype, chip, block_dim=0):
    call, minimum, elems = inputs(kernel, tokens, hidden, dtype)
    return call(chip=chip, count_only=True, block_dim=block_dim), minimum, elems


def roofline_us(kernel, minimum, elems, chip, dtype):
    p = params(chip)
    cores = {"Ascend910B2": 48, "Ascend910B3": 40, "Ascend310P3": 8}[chip]
    memory = minimum / (p("hbm_gbps") * 1e3)
    passes = VECTOR_PASSES[kernel] - (2 if dtype == torch.float32 else 0)
    vector = elems * 4 * passes / p("vec_bytes_per_cycle") / cores / (p("clock_ghz") * 1e3)
    return max(memory, vector) + 2 * p("mte_latency") / (p("clock_ghz") * 1e3)  # copy-in, then copy-out latency


def shapes():
    for kernel in NORM_KERNELS:
        for hidden in HIDDEN:
            for tokens in TOKENS:
                yield kernel, tokens, hidden
    for kernel in ACT_KERNELS:
        for hidden in MLP_WIDTHS:
            for tokens in TOKENS:
                yield kernel, tokens, hidden
    for kernel in ROPE_KERNELS:
        for tokens in TOKENS:
            yield kernel, tokens, ROPE_HEADS * ROPE_DIM


def is_backward(kernel):
    return kernel.endswith("_backward")


def table(chip, kernels):
    """Prints the chip's table; returns [(kernel, tokens, ratio)]."""
    out = []
    header = f"{'kernel':<18} {'tokens':>6} {'hidden':>6} {'dtype':<8} {'block_dim':>9} {'model_us':>10} {'roof_us':>9} {'ratio':>7}"
    for dtype in CHIPS[chip]:
        rows = [s for s in shapes() if s[0] in kernels]
        for title, keep in (("tokens >= 128", lambda t: t not in LAUNCH_BOUND_TOKENS), ("tokens 1 and 16 (launch-bound)",
                                                                                         lambda t: t in LAUNCH_BOUND_TOKENS)):
            print(f"chip {chip}, {str(dtype).removeprefix('torch.')}, {title}")
            print(header)
            for kernel, tokens, hidden in rows:
                if not keep(tokens):
                    continue
                try:
                    launch, minimum, elems = run(kernel, tokens, hidden, dtype, chip)
                except twin.TwinError as error:
                    print(f"{kernel:<18} {tokens:>6} {hidden:>6} not run: {str(error)[:100]}")
                    continue
                us, block_dim = launch.cost.us, launch.block_dim
                roof = roofline_us(kernel, minimum, elems, chip, dtype)
                ratio = us / roof
                if tokens not in LAUNCH_BOUND_TOKENS:
                    out.append((kernel, tokens, ratio))
                name = str(dtype).removeprefix("torch.")
                print(f"{kernel:<18} {tokens:>6} {hidden:>6} {name:<8} {block_dim:>9} {us:>10.2f} {roof:>9.2f} {ratio:>7.3f}", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", choices=sorted(CHIPS), action="append", help="repeatable; default: every chip")
    parser.add_argument("--kernel", action="append", help="repeatable; default: every kernel")
    parser.add_argument("--params", action="store_true", help="print the cost model's parameter table first")
    args = parser.parse_args()
    if args.params:
        for r in twin.cost_parameters():
            print(f"{r.chip:<12} {r.name:<24} {r.value:>8g} {r.unit:<15} {'ASSUMED' if r.assumed else 'sourced':<8} {r.source}")
    kernels = args.kernel or [*NORM_KERNELS, *ACT_KERNELS, *ROPE_KERNELS]
    results = [r for chip in args.chip or CHIPS for r in table(chip, kernels)]
    for label, pick in (("forward", lambda k: not is_backward(k)), ("backward", is_backward)):
        ratios = [r for k, _, r in results if pick(k)]
        if ratios:
            print(f"worst_{label}_time_ratio={max(ratios):.4f}")
    print(f"worst_time_ratio={max(r for _, _, r in results):.4f}")


if __name__ == "__main__":
    main()
