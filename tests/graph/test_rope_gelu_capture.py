"""Graph capture of rope and gelu through TorchAir: attention with rope on q and k, GPT-2's MLP with
gelu, static and dynamic shapes, training graphs with the Grad IRs, goldens.

Golden summaries live in tests/golden/; regenerate with AIRFUSE_UPDATE_GOLDEN=1 (see README).
"""

from pathlib import Path

import pytest
import torch
from torch import nn

import airfuse
from airfuse.testing import assert_matches_golden
from models import Gpt2Mlp, LlamaBlock, rope_cos_sin

GOLDEN = Path(__file__).parent.parent / "golden"
LAYERS, SEQ, HEAD_DIM = 2, 8, 16  # LlamaBlock's defaults: hidden 64 in 4 heads


class Attention(nn.Module):
    """LLaMA's attention sublayers, stacked with residuals: RoPE on q and k in every layer."""

    def __init__(self, rope):
        super().__init__()
        self.layers = nn.ModuleList(LlamaBlock(rope=rope) for _ in range(LAYERS))

    def forward(self, x, cos, sin):
        for layer in self.layers:
            x = x + layer.attention(x, cos, sin)
        return x


def _attention_inputs(seq=SEQ, dtype=torch.float32):
    return (torch.randn(2, seq, 64, dtype=dtype), *rope_cos_sin(seq, HEAD_DIM, dtype))


def _producers(capture, node):
    types = {op.name: op.type for graph in capture.graphs for op in graph.op}
    return [types[name] for name in node.inputs]


def _consumers(capture, node_name):
    return [op.type for graph in capture.graphs for op in graph.op if any(i.startswith(node_name + ":") for i in op.input)]


def _data_shapes(capture):
    return [shape for node in capture.nodes("Data") for shape in node.output_shapes]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_attention_captures_two_rope_nodes_per_layer(dynamic):
    inputs = _attention_inputs(dtype=torch.bfloat16)
    capture = airfuse.capture_ge_graph(Attention("airfuse").to(torch.bfloat16).requires_grad_(False), *inputs, dynamic=dynamic)
    assert capture.graph_breaks == 0 and len(capture.graphs) == 1
    ropes = capture.nodes("AirfuseRope")
    assert len(ropes) == 2 * LAYERS
    for node in ropes:
        assert node.attrs["mode"] == "half"
        # q or k from its head transpose; cos and sin [S, D] unsqueezed to [1, 1, S, D].
        assert _producers(capture, node) == ["Transpose", "Unsqueeze", "Unsqueeze"]
        assert node.output_names == ("y",) and node.output_dtypes == ("DT_BF16",)
        assert _consumers(capture, node.name)  # q or k feeds the attention scores
    assert not {"SplitV", "Neg", "ConcatV2"} & set(capture.op_types())  # rotate_half's ops
    if dynamic:
        assert (-1, -1, 64) in _data_shapes(capture)  # batch and sequence are symbolic
    assert_matches_golden(capture, GOLDEN / f"attention_rope_{'dynamic' if dynamic else 'static'}.json")


def test_unfused_attention_has_rotate_half_and_no_rope_node():
    """The baseline the fused captures are compared with."""
    model = Attention("unfused").to(torch.bfloat16).requires_grad_(False)
    op_types = airfuse.capture_ge_graph(model, *_attention_inputs(dtype=torch.bfloat16), fuse=False).op_types()
    assert op_types["AirfuseRope"] == 0 and {"SplitV", "Neg", "ConcatV2"} <= set(op_types)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_gpt2_mlp_captures_one_gelu_node(dynamic):
    x = torch.randn(2, 5, 64, dtype=torch.float16)
    unfused = airfuse.capture_ge_graph(Gpt2Mlp().to(torch.float16).requires_grad_(False), x, dynamic=dynamic, fuse=False)
    assert unfused.op_types()["AirfuseGelu"] == 0 and unfused.op_types()["Gelu"] == 1

    capture = airfuse.capture_ge_graph(Gpt2Mlp(gelu="airfuse").to(torch.float16).requires_grad_(False), x, dynamic=dynamic)
    assert capture.graph_breaks == 0 and len(capture.graphs) == 1
    [node] = capture.nodes("AirfuseGelu")
    assert node.attrs["approximate"] == "tanh"
    assert node.output_names == ("y",) and node.output_dtypes == ("DT_FLOAT16",)
    assert capture.op_types()["MatMulV2"] == 2 and "Gelu" not in capture.op_types()
    if dynamic:
        assert (-1, -1, 64) in _data_shapes(capture)
    assert_matches_golden(capture, GOLDEN / f"gpt2_mlp_gelu_{'dynamic' if dynamic else 'static'}.json")


def test_attention_training_graph_has_a_rope_grad_per_rope():
    model = Attention("airfuse")
    x, cos, sin = _attention_inputs()
    capture = airfuse.capture_ge_graph(model, x.requires_grad_(), cos, sin)
    assert capture.graph_breaks == 0
    assert len(capture.graphs) == 2  # forward, backward
    assert capture.op_types()["AirfuseRope"] == capture.op_types()["AirfuseRopeGrad"] == 2 * LAYERS
    producers = {op.name: op.type for op in capture.graphs[1].op}
    for grad in capture.nodes("AirfuseRopeGrad"):
        assert grad.attrs["mode"] == "half" and grad.output_names == ("dx",)
        # cos and sin are saved by the forward graph and arrive as backward graph inputs.
        assert [producers[name] for name in grad.inputs[1:]] == ["Data", "Data"]
    assert x.grad is None
    assert_matches_golden(capture, GOLDEN / "attention_rope_training.json")


def test_gpt2_mlp_training_graph_has_the_gelu_grad():
    model = Gpt2Mlp(gelu="airfuse")
    x = torch.randn(3, 64, requires_grad=True)
    capture = airfuse.capture_ge_graph(model, x)
    assert capture.graph_breaks == 0 and len(capture.graphs) == 2
    [forward] = capture.nodes("AirfuseGelu")
    [backward] = capture.nodes("AirfuseGeluGrad")
    assert forward.attrs["approximate"] == backward.attrs["approximate"] == "tanh"
    # dy from c_proj's input gradient; x saved by the forward graph, a backward graph input.
    assert _producers(capture, backward) == ["MatMul", "Data"]
    assert backward.output_names == ("dx",)
    assert "GeluGrad" not in capture.op_types()
    assert_matches_golden(capture, GOLDEN / "gpt2_mlp_gelu_training.json")
