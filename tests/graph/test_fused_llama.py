"""LLaMA layers with add_rms_norm, silu_mul and swiglu through TorchAir: one GE node per fused
op, no graph break, the training graph's Grad IRs, goldens, and compiled (offline GE executor)
equal to eager, forward and gradients; the fused layers equal the plain ones."""

from pathlib import Path

import pytest
import torch

import airfuse
from airfuse.testing import assert_matches_golden
from fused_llama import MLPS, LlamaLayers
from models import rope_cos_sin

GOLDEN = Path(__file__).parent.parent / "golden"
LAYERS = 2
MLP_IR = {"silu_mul": "AirfuseSiluMul", "swiglu": "AirfuseSwiglu"}
# Relative to max |eager|, as in test_compiled_models.py.
REL_TOL = {torch.float32: 2e-5, torch.bfloat16: 3e-2}


def _inputs(seq, dtype=torch.float32):
    return (torch.randn(2, seq, 64, dtype=dtype), *rope_cos_sin(seq, 16, dtype))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("mlp", MLPS)
def test_inference_capture_has_one_node_per_fused_op(mlp, dynamic):
    model = LlamaLayers(LAYERS, mlp=mlp).eval().requires_grad_(False)
    capture = airfuse.capture_ge_graph(model, *_inputs(8), dynamic=dynamic)
    counts = capture.op_types()
    assert capture.graph_breaks == 0
    assert counts["AirfuseAddRmsNorm"] == 2 * LAYERS  # every residual add feeding a norm
    assert counts["AirfuseRmsNorm"] == 1  # the first layer's input norm has no residual before it
    assert counts[MLP_IR[mlp]] == LAYERS
    assert not {"Sigmoid", "Swish", "Rsqrt"} & set(counts), "a composite was left beside the fused ops"
    if not dynamic:
        assert_matches_golden(capture, GOLDEN / f"llama_layers_{mlp}.json")


@pytest.mark.parametrize("mlp", MLPS)
def test_training_capture_uses_the_grad_irs(mlp):
    model = LlamaLayers(LAYERS, mlp=mlp)
    x, cos, sin = _inputs(8)
    capture = airfuse.capture_ge_graph(model, x.requires_grad_(), cos, sin)
    counts = capture.op_types()
    assert capture.graph_breaks == 0
    assert counts["AirfuseRmsNormGrad"] == 2 * LAYERS + 1  # add_rms_norm's backward is rms_norm_backward
    assert counts[MLP_IR[mlp] + "Grad"] == LAYERS
    assert_matches_golden(capture, GOLDEN / f"llama_layers_{mlp}_training.json")


def _step(model, inputs):
    x, cos, sin = inputs
    x = x.clone().requires_grad_()
    model.zero_grad(set_to_none=True)
    out = model(x, cos, sin)
    out.float().pow(2).mean().backward()
    return [out.detach(), x.grad, *(p.grad for p in model.parameters())]


def _assert_close(actual, expected, dtype, what):
    scale = expected.float().abs().max().clamp_min(1e-30)
    error = ((actual.float() - expected.float()).abs().max() / scale).item()
    assert error <= REL_TOL[dtype], f"{what}: relative error {error:.3g} > {REL_TOL[dtype]}"


@pytest.mark.parametrize("dtype", REL_TOL, ids=str)
@pytest.mark.parametrize("mlp", MLPS)
def test_compiled_training_step_equals_eager_at_three_lengths(mlp, dtype):
    model = LlamaLayers(LAYERS, mlp=mlp).to(dtype)
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True, dynamic=True)
    names = ["output", "x.grad", *(f"{n}.grad" for n, _ in model.named_parameters())]
    for seq in (5, 8, 11):
        inputs = _inputs(seq, dtype)
        for got, want, what in zip(_step(compiled, inputs), _step(model, inputs), names, strict=True):
            _assert_close(got, want, dtype, f"{mlp} {dtype} seq={seq} {what}")


@pytest.mark.parametrize("mlp", MLPS)
def test_fused_layers_equal_the_plain_layers(mlp):
    fused = LlamaLayers(LAYERS, mlp=mlp)
    plain = LlamaLayers(LAYERS, mlp=mlp, fused=False)
    plain.load_state_dict(fused.state_dict())
    inputs = _inputs(7)
    for got, want, what in zip(_step(fused, inputs), _step(plain, inputs), ["output", "x.grad"], strict=False):
        _assert_close(got, want, torch.float32, f"{mlp} {what}")


def _random_inputs(graph):
    """A random tensor for each Data node of a static GE graph (ints and bools small)."""
    from airfuse.offline.ge_executor import proto_dtype_to_torch

    inputs = {}
    for op in graph.op:
        if op.type == "Data":
            desc = op.output_desc[0]
            dtype = proto_dtype_to_torch(desc.dtype, op.name)
            shape = list(desc.shape.dim)
            inputs[op.attr["index"].i] = (
                torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.randint(0, 2, shape).to(dtype)
            )
    return [inputs[i] for i in range(len(inputs))]


@pytest.mark.parametrize("dtype", REL_TOL, ids=str)
def test_the_executors_folds_give_the_unfolded_plans_bits(dtype):
    """Forward and backward graphs of the layers: the plan with its folds (linears, view chains)
    computes exactly what the node-by-node plan does."""
    from airfuse.offline import ge_folds
    from airfuse.offline.ge_executor import GeExecutor

    model = LlamaLayers(LAYERS, mlp="silu_mul").to(dtype)
    x, cos, sin = _inputs(8, dtype)
    capture = airfuse.capture_ge_graph(model, x.requires_grad_(), cos, sin)
    folds = 0
    for graph in capture.graphs:
        folded, unfolded = GeExecutor(graph), GeExecutor(graph, fold=False)
        folds += sum(isinstance(step[1], ge_folds.Fold) for step in folded._run_steps)
        inputs = _random_inputs(graph)
        for _ in range(2):
            for a, b in zip(folded.run(inputs), unfolded.run(inputs), strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)
    assert folds >= 4 * LAYERS  # at least the attention and MLP linears of the forward
