"""Compiled (offline TorchAir, airfuse's GE executor) versus eager time per call of a LLaMA block.

The block is Hugging Face's ``LlamaDecoderLayer`` (transformers, random weights, float32) with its
rotary embedding, eager attention (matmul + additive causal mask + softmax: the same math in both
paths, so the ratio measures the executor rather than a different attention algorithm) and the
gated SiLU MLP. "compiled" is ``torch.compile(block, backend=airfuse.get_npu_backend(),
fullgraph=True, dynamic=False)``: without an NPU, TorchAir converts the FX graph to a GE graph and
airfuse's offline executor runs it on the CPU. Each block is compiled twice: with the default
backend (``fuse=True``: RMSNorm, RoPE and the SiLU product become airfuse ops, so their CPU kernels
count too) and with ``fuse=False`` (TorchAir's own GE ops only: the executor's cost alone).

Both paths run under ``torch.no_grad()``, interleaved round by round; each figure is the median
over rounds of the mean time per call within a round, on the process CPU clock by default (stable
on a shared machine; ``--clock wall`` for a quiet one). Shapes (batch 1):
  small: hidden 256, 4 heads (2 KV heads), MLP 688, 1 layer, 8 tokens
  large: hidden 2048, 16 heads (4 KV heads), MLP 5632, 1 layer, 256 tokens
Last line: worst_compiled_vs_eager=<x> (compiled with the default backend / eager, worst block;
the line before it is the same for fuse=False). Targets (issue 12): <= 1.5 small, <= 1.1 large.
``--profile TOP`` prints where the compiled small block's time goes (cProfile, TOP functions).
"""

import argparse
import cProfile
import pstats
import statistics
import time

import torch
from torch import nn

import airfuse

BLOCKS = {
    "small": dict(hidden_size=256, num_attention_heads=4, num_key_value_heads=2, intermediate_size=688, tokens=8),
    "large": dict(hidden_size=2048, num_attention_heads=16, num_key_value_heads=4, intermediate_size=5632, tokens=256),
}
TARGETS = {"small": 1.5, "large": 1.1}


class LlamaBlock(nn.Module):
    """One decoder layer as the Hugging Face model calls it: rotary tables computed from the positions."""

    def __init__(self, config):
        super().__init__()
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

        self.layer = LlamaDecoderLayer(config, layer_idx=0)
        self.rotary = LlamaRotaryEmbedding(config)

    def forward(self, x, position_ids, causal_mask):
        cos_sin = self.rotary(x, position_ids)
        return self.layer(x, attention_mask=causal_mask, position_ids=position_ids, position_embeddings=cos_sin)


def build(name, fuse):
    import transformers

    shape = dict(BLOCKS[name])
    tokens = shape.pop("tokens")
    config = transformers.LlamaConfig(**shape, vocab_size=128, attn_implementation="eager")
    torch.manual_seed(0)
    block = LlamaBlock(config).eval()
    x = torch.randn(1, tokens, shape["hidden_size"])
    positions = torch.arange(tokens)[None]
    mask = torch.full((tokens, tokens), float("-inf")).triu(1)[None, None]
    inputs = (x, positions, mask)
    compiled = torch.compile(block, backend=airfuse.get_npu_backend(fuse=fuse), fullgraph=True, dynamic=False)
    with torch.no_grad():
        expected, actual = block(*inputs), compiled(*inputs)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)  # timing a wrong result is no use
    return block, compiled, inputs


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def per_call(fn, inputs, calls, clock=time.perf_counter):
    start = clock()
    for _ in range(calls):
        fn(*inputs)
    return (clock() - start) / calls


def measure(paths, inputs, rounds, budget, clock):
    """Median seconds per call of each of ``paths`` (name -> callable), interleaved round by
    round; about ``budget`` seconds per round and path."""
    with torch.no_grad():
        calls = max(1, int(budget / max(per_call(fn, inputs, 1, clock) for fn in paths.values())))
        times = {name: [] for name in paths}
        for _ in range(rounds):
            for name, fn in paths.items():
                times[name].append(per_call(fn, inputs, calls, clock))
    return {name: statistics.median(values) for name, values in times.items()}


def profile(compiled, inputs, calls, top):
    profiler = cProfile.Profile()
    with torch.no_grad():
        profiler.runcall(per_call, compiled, inputs, calls)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per round and path")
    parser.add_argument("--clock", choices=CLOCKS, default="cpu")
    parser.add_argument("--blocks", nargs="+", choices=BLOCKS, default=list(BLOCKS))
    parser.add_argument("--profile", type=int, default=0, metavar="TOP", help="cProfile the compiled small block")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"threads={torch.get_num_threads()} clock={args.clock} rounds={args.rounds}")
    print(f"{'block':6} {'shape (batch 1)':44} {'eager us':>10} {'fuse us':>10} {'ratio':>6} {'no-fuse us':>10} {'ratio':>6} {'target':>6}")
    worst = {"fuse": 0.0, "no-fuse": 0.0}
    for name in args.blocks:
        block, fused, inputs = build(name, fuse=True)
        _, unfused, _ = build(name, fuse=False)
        times = measure({"eager": block, "fuse": fused, "no-fuse": unfused}, inputs, args.rounds, args.budget, CLOCKS[args.clock])
        ratio = {fuse: times[fuse] / times["eager"] for fuse in worst}
        worst = {fuse: max(worst[fuse], ratio[fuse]) for fuse in worst}
        s = BLOCKS[name]
        shape = f"h{s['hidden_size']} heads {s['num_attention_heads']}/{s['num_key_value_heads']} mlp {s['intermediate_size']} x{s['tokens']} tok"
        print(
            f"{name:6} {shape:44} {times['eager'] * 1e6:10.1f} {times['fuse'] * 1e6:10.1f} {ratio['fuse']:6.2f} "
            f"{times['no-fuse'] * 1e6:10.1f} {ratio['no-fuse']:6.2f} {TARGETS[name]:6.2f}"
        )
        if args.profile and name == "small":
            profile(fused, inputs, calls=2000, top=args.profile)
    print(f"worst_compiled_vs_eager_no_fuse={worst['no-fuse']:.2f}")
    print(f"worst_compiled_vs_eager={worst['fuse']:.2f}")


if __name__ == "__main__":
    main()
