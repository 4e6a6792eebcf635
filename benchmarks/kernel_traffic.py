"""GM traffic of airfuse's Ascend C kernels on LLM shapes, measured on the CPU twin.

For each kernel, shape and dtype: the GM bytes the kernel moves (counted by the twin), the
minimum (each input read once, each output written once, plus one float32 partial row per core
used where a result is reduced across rows, as dgamma is), their ratio, the time that traffic
takes at 1.6 TB/s (910B HBM, perf_anchors.md §1) and the block_dim the tiling chose.

Big shapes run in the twin's count-only mode: the real kernel runs with every check and every
copy counted, but without moving data or computing (tests/kernels/test_twin_traffic.py proves
the counts equal a full run's). Needs `make twin`. Last line: worst_traffic_ratio=<x>.
"""

import argparse

import torch

import airfuse  # noqa: F401
from airfuse import twin

HBM_BYTES_PER_S = 1.6e12
TOKENS = (1, 128, 4096, 16384)
HIDDEN = (4096, 8192)
DTYPES = (torch.float16, torch.bfloat16)


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
    else:
        run = twin.add(x, dy, chip=chip, count_only=True)
        minimum = nbytes(x, dy, *run.outputs)
    return run, minimum


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default=twin.DEFAULT_CHIP)
    args = parser.parse_args()
    header = f"{'kernel':<18} {'tokens':>6} {'hidden':>6} {'dtype':<8} {'block_dim':>9} {'GM bytes':>12} {'min bytes':>12} {'ratio':>6} {'us@1.6TB/s':>10}"
    print(f"chip {args.chip}")
    print(header)
    worst = 0.0
    for kernel in ("rms_norm", "rms_norm_backward", "add"):
        for dtype in DTYPES:
            for hidden in HIDDEN:
                for tokens in TOKENS:
                    run, minimum = measure(kernel, tokens, hidden, dtype, args.chip)
                    moved = run.bytes_read + run.bytes_written
                    ratio = moved / minimum
                    worst = max(worst, ratio)
                    us = moved / HBM_BYTES_PER_S * 1e6
                    name = str(dtype).removeprefix("torch.")
                    print(f"{kernel:<18} {tokens:>6} {hidden:>6} {name:<8} {run.block_dim:>9} {moved:>12} {minimum:>12} {ratio:>6.3f} {us:>10.2f}")
    print(f"worst_traffic_ratio={worst:.4f}")


if __name__ == "__main__":
    main()
