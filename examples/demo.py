"""airfuse demo: Hugging Face models through TorchAir graph mode.

Tiny random-weight Llama and Qwen3 models (transformers, no download) run eagerly and compiled
with TorchAir's NPU backend: natively on an NPU host, offline here (airfuse's CPU GE executor).
Then one decoder layer of each is captured as a GE graph, plain and with airfuse's fused RMSNorm,
and compared by GE node counts and modeled HBM traffic; the fused layer's graph is saved.

    make demo            (writes build/demo/)
"""

import time
from pathlib import Path

import torch

import airfuse
from airfuse.modules import RMSNorm
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


def with_airfuse_rms_norm(model):
    """Swap every Hugging Face RMSNorm of Llama's form (weight * normalized x; Llama, Qwen3, ...)
    for airfuse's, weights and epsilon kept."""
    for name, module in list(model.named_modules()):
        if type(module).__name__ in ("LlamaRMSNorm", "Qwen3RMSNorm"):
            fused = RMSNorm(module.weight.shape[0], module.variance_epsilon, dtype=module.weight.dtype)
            fused.weight.data.copy_(module.weight.data)
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent), child, fused)
    return model


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


def capture_layer(model):
    layer = DecoderLayer(model.model.layers[0]).requires_grad_(False)  # forward graph only
    hidden = torch.randn(BATCH, SEQ_LENS[1], CONFIG["hidden_size"])
    cos, sin = model.model.rotary_emb(hidden, torch.arange(SEQ_LENS[1])[None])
    return airfuse.capture_ge_graph(layer, hidden, cos, sin, dynamic=False)


def describe(capture):
    counts, traffic = capture.node_counts(), capture.hbm_traffic()
    ops = sum(n for kind, n in counts.items() if kind not in ("data", "const", "output"))
    kinds = ", ".join(f"{kind} {counts[kind]}" for kind in ("matmul", "airfuse", "other") if counts[kind])
    return ops, kinds, traffic


def layer_accounting(family):
    plain_model = tiny_causal_lm(family, **CONFIG)
    fused_model = with_airfuse_rms_norm(tiny_causal_lm(family, **CONFIG))
    results = {}
    for label, model in (("plain", plain_model), ("airfuse RMSNorm", fused_model)):
        capture = capture_layer(model)
        ops, kinds, traffic = describe(capture)
        results[label] = (capture, traffic)
        step(f"{family} decoder layer, {label:15}: {ops:3} GE op nodes ({kinds}); modeled HBM bytes: "
             f"non-matmul {traffic.non_matmul_bytes / 1e6:.3f} MB, matmul {traffic.matmul_bytes / 1e6:.3f} MB")
    saved = 1 - results["airfuse RMSNorm"][1].non_matmul_bytes / results["plain"][1].non_matmul_bytes
    step(f"{family}: airfuse RMSNorm moves {saved:.0%} fewer non-matmul bytes per decoder layer")
    return results["airfuse RMSNorm"][0]


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
    written = fused_capture.render(OUT_DIR / "llama_decoder_layer_airfuse", formats=("svg",))
    pictures = ", ".join(str(path) for path in written)
    note = "" if len(written) > 1 else " (Graphviz's `dot` is not installed: render it with `dot -Tsvg`)"
    step(f"GE graph of one Llama decoder layer with airfuse RMSNorm: {pictures}{note}")


if __name__ == "__main__":
    main()
