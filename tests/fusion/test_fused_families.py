"""Acceptance per supported family: ``fuse=True`` on the unpatched model gives exactly the airfuse
nodes, per op type, of ``airfuse.patch`` + ``fuse=True``, forward and backward, with no composite
left; compiled (offline GE executor) equals eager for both."""

import copy

import pytest
import torch

import airfuse
from tiny_hf_models import tiny_model, token_ids

pytest.importorskip("transformers")

# GE op types only the composites produce in these models: RMSNorm (Pow, Rsqrt), SiLU (Swish),
# rotate-half (Neg), tanh GELU (Tanh written out, Gelu for F.gelu).
COMPOSITE_TYPES = {"Pow", "Rsqrt", "Swish", "Sigmoid", "Neg", "Tanh", "Gelu"}
# Gemma2 soft-caps attention scores and logits with tanh: a Tanh that is no GELU.
OTHER_USES = {"gemma2": {"Tanh"}}

# The forward graph's airfuse nodes, one decoder layer: its input norm has no residual before it;
# the norm after attention and the final norm take the residual add with them.
_NORMS = {"AirfuseRmsNorm": 1, "AirfuseAddRmsNorm": 2, "AirfuseRope": 2}
FORWARD_NODES = {
    "llama": {**_NORMS, "AirfuseSiluMul": 1},
    "mistral": {**_NORMS, "AirfuseSiluMul": 1},
    "qwen2": {**_NORMS, "AirfuseSiluMul": 1},
    "qwen3": {**_NORMS, "AirfuseRmsNorm": 3, "AirfuseSiluMul": 1},  # + q_norm, k_norm
    "gemma": {**_NORMS, "AirfuseGelu": 1},
    # Gemma2/3 norm the attention and MLP outputs before their residual adds (no add before those),
    # and Gemma3 adds q/k norms.
    "gemma2": {**_NORMS, "AirfuseRmsNorm": 3, "AirfuseGelu": 1},
    "gemma3_text": {**_NORMS, "AirfuseRmsNorm": 5, "AirfuseGelu": 1},
    "phi3": {**_NORMS, "AirfuseSwiglu": 1},
    "gpt2": {"AirfuseGelu": 1},
}
# The families airfuse.patch supported first; the later ones have one compiled forward each in
# tests/fusion/test_more_families.py.
FAMILIES = tuple(FORWARD_NODES)
# Relative to max |eager|, as in tests/graph/test_compiled_models.py (float32).
REL_TOL = 2e-5



def _counts(graph) -> dict:
    counts = {}
    for op in graph.op:
        counts[op.type] = counts.get(op.type, 0) + 1
    return counts


def _airfuse(counts) -> dict:
    return {t: n for t, n in counts.items() if t.startswith("Airfuse")}


@pytest.mark.parametrize("family", FAMILIES)
def test_fuse_on_the_unpatched_model_places_what_patch_places(family):
    model = tiny_model(family, layers=1)
    ids = token_ids()
    fused = airfuse.capture_ge_graph(model, ids)
    patched = airfuse.capture_ge_graph(airfuse.patch(copy.deepcopy(model)), ids)
    assert len(fused.graphs) == len(patched.graphs) == 2  # forward and backward
    for fused_graph, patched_graph in zip(fused.graphs, patched.graphs, strict=True):
        fused_counts, patched_counts = _counts(fused_graph), _counts(patched_graph)
        assert _airfuse(fused_counts) == _airfuse(patched_counts)
        left = (COMPOSITE_TYPES - OTHER_USES.get(family, set())) & set(fused_counts)
        assert not left, f"{family}: composite ops {left} left in {fused_graph.name}"
    assert _airfuse(_counts(fused.graphs[0])) == FORWARD_NODES[family]
    backward = _airfuse(_counts(fused.graphs[1]))
    assert backward and all(t.endswith("Grad") for t in backward)


@pytest.mark.parametrize("family, attention", [("phi3", "eager"), ("llama", "sdpa")])
def test_fused_graph_moves_no_more_bytes_than_the_patched_one(family, attention):
    """Forward graphs: the unpatched model with fuse=True against the patched one as TorchAir builds
    it: the same matmuls, no more modeled non-matmul HBM bytes. Phi-3 concatenates an empty tensor
    after its RoPE; with SDPA (decomposed offline) a ``.contiguous()`` decides o_proj's matmul."""
    model = tiny_model(family, layers=1, attention=attention).requires_grad_(False)
    fused = airfuse.capture_ge_graph(model, token_ids())
    patched = airfuse.capture_ge_graph(airfuse.patch(copy.deepcopy(model)), token_ids(), fuse=False)
    fused_bytes, patched_bytes = fused.hbm_traffic(), patched.hbm_traffic()
    assert fused.node_counts()["matmul"] == patched.node_counts()["matmul"]
    assert fused_bytes.matmul_bytes == patched_bytes.matmul_bytes
    assert fused_bytes.non_matmul_bytes <= patched_bytes.non_matmul_bytes


def _relative_errors(got, want):
    assert len(got) == len(want) > 1
    return [((a - e).abs().max() / e.abs().max().clamp_min(1e-30)).item() for a, e in zip(got, want, strict=True)]


def _step(model, compiled, ids):
    """Logits and parameter gradients of one training step, compiled and eager."""
    results = []
    for fn in (compiled, model):
        model.zero_grad(set_to_none=True)
        logits = fn(ids).logits
        logits.float().pow(2).mean().backward()
        results.append([logits.detach(), *(p.grad for p in model.parameters() if p.grad is not None)])
    return results


@pytest.mark.parametrize("patched", [False, True], ids=["unpatched", "patched"])
@pytest.mark.parametrize("family", FAMILIES)
def test_compiled_with_fusion_equals_eager(family, patched):
    model = tiny_model(family, layers=1)
    if patched:
        airfuse.patch(model)
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True)
    error = max(_relative_errors(*_step(model, compiled, token_ids())))
    assert error <= REL_TOL, f"{family}: relative error {error:.3g}"


@pytest.mark.parametrize("family", ["gemma2", "gemma3_text"])
def test_training_with_a_sliding_window_longer_than_the_sequence(family):
    """The sliding-window cache keeps the last ``window - 1`` keys, ``k[:, :, -(window - 1):]``: a slice
    starting before the sequence, whose gradient TorchAir's slice_backward converter got 6 positions
    too long (see airfuse.default_decompositions). The other tests' window (3) is shorter than the sequence."""
    model = tiny_model(family, layers=1, sliding_window=16)
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True)
    error = max(_relative_errors(*_step(model, compiled, token_ids())))
    assert error <= REL_TOL, f"{family}: relative error {error:.3g}"
