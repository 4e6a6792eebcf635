"""airfuse demo: Hugging Face models through TorchAir graph mode.

Tiny random-weight Llama and Qwen3 models (transformers, no download) run eagerly and compiled
with TorchAir's NPU backend: natively on an NPU host, offline here (airfuse's CPU GE executor).
Then one decoder layer of each is captured as a GE graph three ways: as written, patched with
``airfuse.patch`` and unpatched through the backend's automatic fusion (``fuse=True``), compared by
GE node counts and modeled HBM traffic; the fused layer's graph is saved.

    make demo            (writes build/demo/)
"""

import time
from pathlib import Path

import torch

import airfuse
from airfuse.testing import tiny_causal_lm
from airfuse.torchair_env import is_offline

OUT_DIR = Path("build/demo")
# Larger than the tests' models, still seconds to compile: 2 layers, GQA with 8 query / 4 KV heads.
CONFIG = dict(vocab_size=1024, hidden_size=256, intermediate_size=512, num_attention_heads=8, num_key_value_heads=4,
              head_dim=32, num_hidden_layers=2)
FAMILIES = ("llama", "qwen3")
SEQ_LENS = (9, 17, 33)
BATCH = 2
_START = time.monotonic()


def step(message):
    print(f"[{time.monotonic() - _START:6.1f}s] {message}", flush=True)


def relative_error(actual, expected):
    return ((actual.float() - expected.float()).abs().max() / expected.float().abs().max()).item()


def compiled_vs_eager(family):
    model = tiny_causal_lm(family, **CONFIG)
    compiles = []

    def backend(gm, example_inputs, npu_backend=airfuse.get_npu_backend()):
        compiles.append(gm)
        return npu_backend(gm, example_inputs)

    compiled = torch.compile(model, backend=backend, dynamic=True)
    for seq in SEQ_LENS:
        ids = torch.randint(0, CONFIG["vocab_size"], (BATCH, seq))
        with torch.no_grad():
            got, want = compiled(ids).logits, model(ids).logits
        step(f"{family}: logits [{BATCH}, {seq}, {CONFIG['vocab_size']}] compiled vs eager, float32: "
             f"relative error {relative_error(got, want):.1e}; graphs compiled so far: {len(compiles)}")


class DecoderLayer(torch.nn.Module):
    """One decoder layer as the model calls it: rotary cos/sin given, causal attention."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, hidden_states, cos, sin):
        return self.layer(hidden_states, position_embeddings=(cos, sin))


def capture_layer(model, fuse):
    layer = DecoderLayer(model.model.layers[0]).requires_grad_(False)  # forward graph only
    hidden = torch.randn(BATCH, SEQ_LENS[1], CONFIG["hidden_size"])
    cos, sin = model.model.rotary_emb(hidden, torch.arange(SEQ_LENS[1])[None])
    return airfuse.capture_ge_graph(layer, hidden, cos, sin, dynamic=False, fuse=fuse)


def describe(capture):
    counts, traffic = capture.node_counts(), capture.hbm_traffic()
    ops = sum(n for kind, n in counts.items() if kind not in ("data", "const", "output"))
    kinds = ", ".join(f"{kind} {counts[kind]}" for kind in ("matmul", "airfuse", "other") if counts[kind])
    return ops, kinds, traffic


def layer_accounting(family):
    """One decoder layer three ways: as written (fuse=False), after ``airfuse.patch`` (fuse=False),
    and unpatched with the backend's automatic fusion (fuse=True, the default)."""
    model = tiny_causal_lm(family, **CONFIG)
    captures = {
        "unfused": capture_layer(model, fuse=False),
        "patched": capture_layer(airfuse.patch(tiny_causal_lm(family, **CONFIG)), fuse=False),
        "fuse=True": capture_layer(model, fuse=True),
    }
    unfused_bytes = captures["unfused"].hbm_traffic().non_matmul_bytes
    for label, capture in captures.items():
        ops, kinds, traffic = describe(capture)
        saved = 1 - traffic.non_matmul_bytes / unfused_bytes
        step(f"{family} decoder layer, {label:9}: {ops:3} GE op nodes ({kinds}); modeled HBM bytes: non-matmul "
             f"{traffic.non_matmul_bytes / 1e6:.3f} MB ({saved:.0%} fewer than unfused), matmul {traffic.matmul_bytes / 1e6:.3f} MB")
    return captures["fuse=True"]


def main():
    torch.manual_seed(0)
    airfuse.import_torchair()
    mode = "offline (airfuse's CPU GE executor runs the graphs)" if is_offline() else "native (an NPU runs the graphs)"
    step(f"TorchAir {mode}; models: {', '.join(FAMILIES)} ({CONFIG['num_hidden_layers']} layers, hidden "
         f"{CONFIG['hidden_size']}, random weights)")
    for family in FAMILIES:
        compiled_vs_eager(family)
    fused_capture = None
    for family in FAMILIES:
        capture = layer_accounting(family)
        fused_capture = fused_capture or capture
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    written = fused_capture.render(OUT_DIR / "llama_decoder_layer_fused", formats=("svg",))
    pictures = ", ".join(str(path) for path in written)
    note = "" if len(written) > 1 else " (Graphviz's `dot` is not installed: render it with `dot -Tsvg`)"
    step(f"GE graph of one Llama decoder layer with fuse=True: {pictures}{note}")


if __name__ == "__main__":
    main()
