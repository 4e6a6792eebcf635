"""The Hugging Face families airfuse patches, exported to ONNX patched (``airfuse.patch``) and
unpatched with ``fuse=True`` (the composites rewritten to airfuse ops in the exported program), and
run in ONNX Runtime against eager.

An export costs seconds (ten or more on a loaded machine), so ``make test`` exports four
(family, variant, form) triples that between them take every variant, every form, and each MLP kind
(SiLU gate, merged gate_up, GELU); ``AIRFUSE_ONNX_MATRIX=full`` (``make onnx-matrix``) exports
every family both ways in both forms.
"""

import collections
import functools
import os

import onnx
import pytest
import torch

import airfuse
import airfuse.onnx
from airfuse.onnx import custom, runtime
from tiny_hf_models import FAMILIES, tiny_model, token_ids

pytest.importorskip("transformers")

_VARIANTS = ("patched", "fused")
if os.environ.get("AIRFUSE_ONNX_MATRIX") == "full":
    CASES = [(family, v, f) for family in FAMILIES for v in _VARIANTS for f in airfuse.onnx.FORMS]
else:
    CASES = [("llama", "patched", "standard"), ("llama", "fused", "custom"), ("phi3", "fused", "standard"),
             ("gemma", "patched", "custom")]
# Relative to max |eager logits|: the float32 op tolerance.
REL_TOL = 1e-5
_BATCH, _SEQ = torch.export.Dim("batch", min=1, max=32), torch.export.Dim("seq", min=2, max=32)

# airfuse nodes of one decoder layer with fuse=True (tests/fusion/test_fused_families.py says why);
# patch() alone has the residual add outside its norms: rms_norm where fusion puts add_rms_norm.
_NORMS = {"AirfuseRmsNorm": 1, "AirfuseAddRmsNorm": 2, "AirfuseRope": 2}
FUSED_NODES = {
    "llama": {**_NORMS, "AirfuseSiluMul": 1},
    "mistral": {**_NORMS, "AirfuseSiluMul": 1},
    "qwen2": {**_NORMS, "AirfuseSiluMul": 1},
    "qwen3": {**_NORMS, "AirfuseRmsNorm": 3, "AirfuseSiluMul": 1},
    "gemma": {**_NORMS, "AirfuseGelu": 1},
    "gemma2": {**_NORMS, "AirfuseRmsNorm": 3, "AirfuseGelu": 1},
    "gemma3_text": {**_NORMS, "AirfuseRmsNorm": 5, "AirfuseGelu": 1},
    "phi3": {**_NORMS, "AirfuseSwiglu": 1},
    "gpt2": {"AirfuseGelu": 1},
}


def patched_nodes(fused: dict) -> dict:
    counts = dict(fused)
    folded = counts.pop("AirfuseAddRmsNorm", 0)
    if folded:
        counts["AirfuseRmsNorm"] = counts.get("AirfuseRmsNorm", 0) + folded
    return counts


@functools.cache
def _program(family, variant):
    """(eager model, its ExportedProgram) for ``family``: patched, or unpatched with fuse=True."""
    model = tiny_model(family, layers=1)
    if variant == "patched":
        airfuse.patch(model)
    module = Logits(model).eval()
    program = airfuse.onnx.export_program(
        module, (token_ids(),), dynamic_shapes=({0: _BATCH, 1: _SEQ},), fuse=variant == "fused"
    )
    return module, program


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).logits


@pytest.mark.parametrize("family, variant, form", CASES)
def test_family_logits_in_ort_match_eager(family, variant, form):
    module, program = _program(family, variant)
    model = airfuse.onnx.export(program, form=form).model_proto
    onnx.checker.check_model(model, full_check=True)
    ids = token_ids(batch=3, seq=9, seed=2)
    [actual] = runtime.run(runtime.session(model), ids)
    with torch.no_grad():
        expected = module(ids)
    error = ((actual - expected).abs().max() / expected.abs().max()).item()
    assert error <= REL_TOL, f"{family} {variant} {form}: relative error {error:.3g}"
    counts = collections.Counter(n.op_type for n in model.graph.node if n.domain == custom.DOMAIN)
    expected_nodes = FUSED_NODES[family] if variant == "fused" else patched_nodes(FUSED_NODES[family])
    types = {n.op_type for n in model.graph.node}
    if form == "custom":
        assert counts == expected_nodes
        return
    assert not counts
    assert {"RMSNormalization", "RotaryEmbedding"} <= types or family == "gpt2"
    # No graph reads rstd: the exporter's optimizer removed its nodes.
    assert "ReduceMean" not in types and "Reciprocal" not in types
