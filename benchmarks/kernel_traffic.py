"""GM traffic of airfuse's Ascend C kernels on LLM shapes, measured on the CPU twin.

For each kernel, shape and dtype: the GM bytes the kernel moves (counted by the twin), the
minimum (each input read once, each output written once, plus one float32 partial row per core
used where a result is reduced across rows, as dgamma is), their ratio, the time that traffic
takes at the chip's GM bandwidth and the block_dim the tiling chose. Chips: 910B (1.6 TB/s HBM,
perf_anchors.md §1; float16, bfloat16) and 310P (no DataCopyPad: whole 32 B blocks with
overlapping windows; about 204 GB/s, half of the Atlas 300I Duo card's press figure, unverified;
float16 only, it has no bfloat16).

Big shapes run in the twin's count-only mode: the real kernel runs with every check and every
copy counted, but without moving data or computing (tests/kernels/test_twin_traffic.py proves
the counts equal a full run's). Needs `make twin`. Last line: worst_traffic_ratio=<x>, the worst
row over every chip shown.
"""

import argparse

import torch

import airfuse  # noqa: F401
from airfuse import twin

# chip -> (GM bytes per second, dtypes)
CHIPS = {
    "Ascend910B2": (1.6e12, (torch.float16, torch.bfloat16)),
    "Ascend310P3": (2.04e11, (torch.float16,)),
}
TOKENS = (1, 128, 4096, 16384)
HIDDEN = (4096, 8192)
# rope on q of a 32-head, head-dim-128 attention (hidden 4096): [B, N, S, D] with cos/sin
# [1, 1, S, D], and [B, S, N, D] with [1, S, 1, D]; the minimum reads each cos/sin slice once.
ROPE_HEADS, ROPE_DIM = 32, 128
ROPE_LAYOUTS = {"bnsd": lambda s: ((1, ROPE_HEADS, s, ROPE_DIM), (1, 1, s, ROPE_DIM)),
                "bsnd": lambda s: ((1, s, ROPE_HEADS, ROPE_DIM), (1, s, 1, ROPE_DIM))}


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def measure(kernel, tokens, hidden, dtype, chip):
    x, dy = torch.empty(tokens, hidden, dtype=dtype), torch.empty(tokens, hidden, dtype=dtype)
    gamma = torch.empty(hidden, dtype=dtype)
    if kernel == "rms_norm":
        run = twin.rms_norm(x, gamma, chip=chip, count_only=True)
        minimum = nbytes(x, gamma, *run.outputs)
    elif kernel == "rms_norm_backward":
        rstd = torch.empty(tokens, 1, dtype=torch.float32)
        run = twin.rms_norm_backward(dy, x, rstd, gamma, chip=chip, count_only=True)
        minimum = nbytes(dy, x, rstd, gamma, *run.outputs) + run.block_dim * hidden * 4
    elif kernel == "add_rms_norm":
        run = twin.add_rms_norm(x, dy, gamma, chip=chip, count_only=True)
        minimum = nbytes(x, dy, gamma, *run.outputs)
    elif kernel == "add":
        run = twin.add(x, dy, chip=chip, count_only=True)
        minimum = nbytes(x, dy, *run.outputs)
    else:
        return measure_activation(kernel, tokens, hidden, dtype, chip)
    return run, minimum


# The activation kernels on MLP widths (intermediate sizes of LLaMA-2 7B, LLaMA-3 8B / Mistral 7B).
ACT_KERNELS = ("silu_mul", "silu_mul_backward", "swiglu", "swiglu_backward", "gelu", "gelu_backward")
ACT_HIDDEN = (11008, 14336)
ACT_TOKENS = (1, 128, 4096)  # 16384 tokens of these widths take minutes even counted only


def measure_activation(kernel, tokens, hidden, dtype, chip):
    a, b, dy = (torch.empty(tokens, hidden, dtype=dtype) for _ in range(3))
    merged = torch.empty(tokens, 2 * hidden, dtype=dtype)  # swiglu's gate and up halves
    ins = {"silu_mul": (a, b), "silu_mul_backward": (dy, a, b), "swiglu": (merged,), "swiglu_backward": (dy, merged), "gelu": (a,),
           "gelu_backward": (dy, a)}[kernel]
    run = getattr(twin, kernel)(*ins, chip=chip, count_only=True)
    return run, nbytes(*ins, *run.outputs)


def measure_rope(kernel, layout, tokens, dtype, chip):
    x_shape, table_shape = ROPE_LAYOUTS[layout](tokens)
    x, cos = torch.empty(x_shape, dtype=dtype), torch.empty(table_shape, dtype=dtype)
    run = getattr(twin, kernel)(x, cos, cos, chip=chip, count_only=True)
    return run, nbytes(x, cos, cos, *run.outputs)


def rows(chip, dtypes):
    """(kernel label, tokens, hidden, dtype, run, minimum) for every row of the chip's table."""
    for kernel in ("rms_norm", "rms_norm_backward", "add", "add_rms_norm", *ACT_KERNELS):
        for dtype in dtypes:
            for hidden in ACT_HIDDEN if kernel in ACT_KERNELS else HIDDEN:
                for tokens in ACT_TOKENS if kernel in ACT_KERNELS else TOKENS:
                    yield (kernel, tokens, hidden, dtype, *measure(kernel, tokens, hidden, dtype, chip))
    for kernel in ("rope", "rope_backward"):
        for layout in ROPE_LAYOUTS:
            for dtype in dtypes:
                for tokens in TOKENS[:3]:
                    yield (f"{kernel}_{layout}", tokens, ROPE_HEADS * ROPE_DIM, dtype, *measure_rope(kernel, layout, tokens, dtype, chip))


def table(chip):
    """Prints the chip's table; returns its worst ratio."""
    bytes_per_s, dtypes = CHIPS[chip]
    print(f"chip {chip}")
    print(f"{'kernel':<18} {'tokens':>6} {'hidden':>6} {'dtype':<8} {'block_dim':>9} {'GM bytes':>12} {'min bytes':>12} {'ratio':>6} "
          f"{f'us@{bytes_per_s / 1e9:g}GB/s':>13}")
    worst = 0.0
    for kernel, tokens, hidden, dtype, run, minimum in rows(chip, dtypes):
        moved = run.bytes_read + run.bytes_written
        ratio = moved / minimum
        worst = max(worst, ratio)
        us = moved / bytes_per_s * 1e6
        name = str(dtype).removeprefix("torch.")
        print(f"{kernel:<18} {tokens:>6} {hidden:>6} {name:<8} {run.block_dim:>9} {moved:>12} {minimum:>12} {ratio:>6.3f} {us:>13.2f}")
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", choices=sorted(CHIPS), action="append", help="repeatable; default: every chip")
    args = parser.parse_args()
    worst = max(table(chip) for chip in args.chip or CHIPS)
    print(f"worst_traffic_ratio={worst:.4f}")


if __name__ == "__main__":
    main()
