"""Graph capture of rms_norm through TorchAir: node counts, wiring, attrs, dynamic shapes, training.

Golden summaries live in tests/golden/; regenerate with AIRFUSE_UPDATE_GOLDEN=1 (see README).
"""

from pathlib import Path

import pytest
import torch
from torch import nn

import airfuse
from airfuse.modules import RMSNorm
from airfuse.testing import assert_matches_golden

GOLDEN = Path(__file__).parent.parent / "golden"


class EagerLlamaRMSNorm(nn.Module):
    """RMSNorm as Hugging Face LLaMA computes it, in plain torch ops (the unfused baseline)."""

    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        dtype = hidden_states.dtype
        h = hidden_states.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * h.to(dtype)


class NormMatmulResidual(nn.Module):
    def __init__(self, hidden, norm_cls):
        super().__init__()
        self.norm = norm_cls(hidden, eps=1e-5)
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x):
        return x + self.proj(self.norm(x))


def _producer_types(capture, node):
    types = {op.name: op.type for graph in capture.graphs for op in graph.op}
    return [types[name] for name in node.inputs]


def _consumers(capture, node_name):
    return [op.type for graph in capture.graphs for op in graph.op if any(i.startswith(node_name + ":") for i in op.input)]


def test_op_alone():
    x, gamma = torch.randn(4, 64), torch.rand(64)
    capture = airfuse.capture_ge_graph(lambda a, b: torch.ops.airfuse.rms_norm(a, b, 1e-5), x, gamma)
    assert capture.graph_breaks == 0
    [node] = capture.nodes("AirfuseRmsNorm")
    assert _producer_types(capture, node) == ["Data", "Data"]
    assert node.attrs["epsilon"] == pytest.approx(1e-5, rel=1e-6)
    assert node.output_names == ("y", "rstd")
    assert node.output_dtypes == ("DT_FLOAT", "DT_FLOAT")
    assert capture.op_types() == {"Data": 2, "AirfuseRmsNorm": 1, "NetOutput": 1}
    torch.testing.assert_close(capture.outputs[0], torch.ops.airfuse.rms_norm(x, gamma, 1e-5)[0])
    assert_matches_golden(capture, GOLDEN / "rms_norm_alone.json")


def test_llama_rmsnorm_module_becomes_one_node():
    x = torch.randn(2, 5, 64, dtype=torch.bfloat16)
    unfused = airfuse.capture_ge_graph(EagerLlamaRMSNorm(64).to(torch.bfloat16).requires_grad_(False), x, fuse=False)
    assert unfused.op_types()["AirfuseRmsNorm"] == 0
    assert {"Pow", "ReduceMean", "Rsqrt"} <= set(unfused.op_types())

    fused = airfuse.capture_ge_graph(RMSNorm(64, eps=1e-6, dtype=torch.bfloat16).requires_grad_(False), x)
    assert fused.graph_breaks == 0
    [node] = fused.nodes("AirfuseRmsNorm")
    assert node.attrs["epsilon"] == pytest.approx(1e-6, rel=1e-6)
    assert node.output_dtypes == ("DT_BF16", "DT_FLOAT")
    assert not {"Pow", "ReduceMean", "Rsqrt"} & set(fused.op_types())
    assert_matches_golden(fused, GOLDEN / "llama_rmsnorm.json")


def test_norm_matmul_residual():
    model = NormMatmulResidual(64, RMSNorm).requires_grad_(False)  # inference: nothing saved for backward
    capture = airfuse.capture_ge_graph(model, torch.randn(3, 64))
    assert capture.graph_breaks == 0
    [node] = capture.nodes("AirfuseRmsNorm")
    assert _producer_types(capture, node) == ["Data", "Data"]
    assert _consumers(capture, node.name) == ["MatMul"]
    assert capture.op_types()["Add"] == 1
    assert_matches_golden(capture, GOLDEN / "norm_matmul_residual.json")


def test_dynamic_batch_compiles_one_graph(torchair):
    """dynamic=True: two batch sizes run through one GE graph, with no recompilation."""
    model = NormMatmulResidual(32, RMSNorm).requires_grad_(False)
    capture = airfuse.capture_ge_graph(model, torch.randn(2, 7, 32), dynamic=True)
    assert len(capture.graphs) == 1
    [norm] = capture.nodes("AirfuseRmsNorm")
    [x_data] = [n for n in capture.nodes("Data") if n.name == norm.inputs[0]]
    assert x_data.output_shapes == ((-1, -1, 32),)  # batch and sequence are symbolic

    compiles = []

    def counting_backend(gm, example_inputs):
        compiles.append(gm)
        config = torchair.CompilerConfig()
        config.debug.run_eagerly = True  # graphs are built, not executed (see capture.py)
        return airfuse.get_npu_backend(config)(gm, example_inputs)

    compiled = torch.compile(model, backend=counting_backend, dynamic=True, fullgraph=True)
    x = torch.randn(2, 7, 32)
    torch.testing.assert_close(compiled(x), model(x))
    # The first call may restart Dynamo's analysis once (it specializes the float epsilon that
    # reaches the op); what matters is that other batch sizes reuse the compiled graph.
    compiles.clear()
    for batch in (5, 9):
        x = torch.randn(batch, 7, 32)
        torch.testing.assert_close(compiled(x), model(x))
    assert compiles == []


def test_training_graph_contains_the_backward_op():
    model = NormMatmulResidual(64, RMSNorm)
    x = torch.randn(3, 64, requires_grad=True)
    capture = airfuse.capture_ge_graph(lambda t: model(t).sum(), x)
    assert capture.graph_breaks == 0
    assert len(capture.graphs) == 2  # forward, backward
    [forward] = capture.nodes("AirfuseRmsNorm")
    [backward] = capture.nodes("AirfuseRmsNormGrad")
    assert forward.output_names == ("y", "rstd")
    assert backward.output_names == ("dx", "dgamma")
    backward_graph = capture.graphs[1]
    producers = {op.name: op.type for op in backward_graph.op}
    # x, rstd and gamma are saved by the forward graph and arrive as backward graph inputs.
    assert [producers[name] for name in backward.inputs[1:]] == ["Data", "Data", "Data"]
    assert x.grad is None
    assert_matches_golden(capture, GOLDEN / "training.json")
