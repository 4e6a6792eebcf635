"""One compiled forward per family ``airfuse.patch`` gained beyond the first nine (the MoE families
among them): ``fuse=True`` on the unpatched model, one graph (``fullgraph``), run by the offline GE
executor, equal to eager, with these airfuse nodes and no RMSNorm or SiLU composite left. The GE
graphs are the ones that ran: recorded as TorchAir hands them to GE, not captured apart.

``make test`` runs the families issue 32 names; ``make hf-matrix`` (``AIRFUSE_HF_MATRIX=full``) all.
"""

import pytest
import torch

import airfuse
from tiny_hf_models import TESTED_FAMILIES, tiny_model, token_ids

pytest.importorskip("transformers")

_NORMS = {"AirfuseRmsNorm": 1, "AirfuseAddRmsNorm": 2}
_ROPE = {"AirfuseRope": 2}
_GATED = {**_NORMS, **_ROPE, "AirfuseSiluMul": 1}
# The forward graph's airfuse nodes, one decoder layer (as tests/fusion/test_fused_families.py).
FORWARD_NODES = {
    "granite": _GATED,
    "smollm3": _GATED,
    # MoE: the routed experts' gate on the concatenated gate/up projection is a swiglu; Qwen2-MoE's
    # shared expert is a gated MLP (its sigmoid gate stays), Qwen3-MoE has q/k norms.
    "mixtral": {**_NORMS, **_ROPE, "AirfuseSwiglu": 1},
    "qwen2_moe": {**_GATED, "AirfuseSwiglu": 1},
    "qwen3_moe": {**_NORMS, **_ROPE, "AirfuseRmsNorm": 3, "AirfuseSwiglu": 1},
    # OLMo 2 norms the attention and MLP outputs before the residual adds (no add before those)
    # and q/k over all heads: 4 plain norms, the final norm with its add.
    "olmo2": {**_ROPE, "AirfuseRmsNorm": 4, "AirfuseAddRmsNorm": 1, "AirfuseSiluMul": 1},
    # GLM-4: post-attention/MLP norms too; its interleaved RoPE (pairs, not halves) is no pattern
    # fusion knows (airfuse.patch routes it to rope(mode="interleave")).
    "glm4": {**_NORMS, "AirfuseRmsNorm": 3, "AirfuseSwiglu": 1},
    # Ernie 4.5: GLM's interleaved RoPE, likewise left to patch().
    "ernie4_5": {**_NORMS, "AirfuseSiluMul": 1},
    "hunyuan_v1_dense": {**_GATED, "AirfuseRmsNorm": 3},  # + q/k norms
    "ministral": _GATED,
    "seed_oss": _GATED,
    "olmo3": {**_ROPE, "AirfuseRmsNorm": 4, "AirfuseAddRmsNorm": 1, "AirfuseSiluMul": 1},  # as OLMo 2
    "exaone4": {**_ROPE, "AirfuseRmsNorm": 4, "AirfuseAddRmsNorm": 1, "AirfuseSiluMul": 1},  # post-norms, q/k norms
    "helium": {**_NORMS, "AirfuseSiluMul": 1},  # interleaved RoPE, as Ernie 4.5
    "olmoe": {**_NORMS, **_ROPE, "AirfuseRmsNorm": 3, "AirfuseSwiglu": 1},  # + q/k norms
    "hunyuan_v1_moe": {**_GATED, "AirfuseRmsNorm": 3, "AirfuseSwiglu": 1},  # q/k norms, shared expert
    "ernie4_5_moe": {**_NORMS, "AirfuseSwiglu": 1},  # interleaved RoPE
    # Phi-1/2: LayerNorm, partial rotate-half RoPE, tanh GELU MLP.
    "phi": {**_ROPE, "AirfuseGelu": 1},
}
# GE op types of the composites fusion replaces: RMSNorm (Pow, Rsqrt), SiLU (Swish).
COMPOSITE_TYPES = {"Pow", "Rsqrt", "Swish"}
REL_TOL = 2e-5  # float32, relative to max |eager| (tests/fusion/test_fused_families.py)


@pytest.fixture
def ran_graphs(monkeypatch):
    """The GE graphs the offline stand-in compiles (each before it runs), in order."""
    import sys

    from airfuse.offline import native_module
    from airfuse.torchair_env import is_offline

    airfuse.import_torchair()
    if not is_offline():
        pytest.skip("the GE graphs are recorded from airfuse's offline stand-in for TorchAir's native module")

    graph_class = sys.modules[native_module.MODULE_NAME].TorchNpuGraphBase
    graphs, compile_graph = [], graph_class.compile

    def recording_compile(self):
        graphs.append(self.graph)
        return compile_graph(self)

    monkeypatch.setattr(graph_class, "compile", recording_compile)
    return graphs


def _families():
    return [family for family in FORWARD_NODES if family in TESTED_FAMILIES]


@pytest.mark.parametrize("family", _families())
def test_fused_forward_equals_eager_with_the_airfuse_nodes(family, ran_graphs):
    model = tiny_model(family, layers=1).requires_grad_(False)
    ids = token_ids()
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True)
    got, want = compiled(ids).logits, model(ids).logits
    error = ((got - want).abs().max() / want.abs().max()).item()
    assert error <= REL_TOL, f"{family}: relative error {error:.3g}"
    [graph] = ran_graphs
    counts = {}
    for op in graph.op:
        counts[op.type] = counts.get(op.type, 0) + 1
    assert {t: n for t, n in counts.items() if t.startswith("Airfuse")} == FORWARD_NODES[family]
    assert not COMPOSITE_TYPES & counts.keys(), f"{family}: composites {COMPOSITE_TYPES & counts.keys()} left"
