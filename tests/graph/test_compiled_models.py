"""torch.compile with TorchAir's NPU backend, run on the CPU by the offline GE executor, equals
eager: outputs and a training step's gradients, per dtype, static and dynamic shapes, unfused and
with airfuse ops; and a converter that wires inputs wrong is caught by the numbers."""

import pytest
import torch

import airfuse
from models import Elementwise, Gpt2Mlp, LlamaBlock, rope_cos_sin

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Largest |compiled - eager| allowed, relative to max |eager|: a few roundings of the dtype, as the
# two runs order and accumulate differently (GE softmax/mean in float32 for half inputs, ...).
REL_TOL = {torch.float32: 2e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}
SEQ_LENS = (5, 8, 11)
MODELS = {
    "llama": lambda: LlamaBlock(),
    "llama_airfuse": lambda: LlamaBlock(rms_norm="airfuse", rope="airfuse"),
    "gpt2_mlp": Gpt2Mlp,
    "gpt2_mlp_airfuse": lambda: Gpt2Mlp(gelu="airfuse"),
    "elementwise": Elementwise,
}


class CountingBackend:
    """TorchAir's backend, counting the graphs Dynamo hands it (one per (re)compilation)."""

    def __init__(self, backend):
        self.backend = backend
        self.compiles = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        return self.backend(gm, example_inputs)


def _training_backend():
    # The default decompositions include aten.silu_backward, which TorchAir 2.13 cannot convert.
    # fuse=False: these models test TorchAir's graphs as written (fusion: tests/fusion).
    return airfuse.get_npu_backend(fuse=False)


def _inputs(name, seq, dtype):
    x = torch.randn(2, seq, 64, dtype=dtype)
    return (x, *rope_cos_sin(seq, 16, dtype)) if name.startswith("llama") else (x,)


def _step(model, inputs):
    """Forward and backward of a scalar loss: the output and the gradients of params and x."""
    x, *rest = inputs
    x = x.clone().requires_grad_()
    model.zero_grad(set_to_none=True)
    out = model(x, *rest)
    out.float().pow(2).mean().backward()
    return [out.detach(), x.grad, *(p.grad for p in model.parameters())]


def _assert_close(actual, expected, dtype, what):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    scale = expected.float().abs().max().clamp_min(1e-30)
    error = ((actual.float() - expected.float()).abs().max() / scale).item()
    assert error <= REL_TOL[dtype], f"{what}: relative error {error:.3g} > {REL_TOL[dtype]}"


def _check_training(name, model, compiled, dtype, seq):
    inputs = _inputs(name, seq, dtype)
    got, want = _step(compiled, inputs), _step(model, inputs)
    names = ["output", "x.grad", *(f"{n}.grad" for n, _ in model.named_parameters())]
    for actual, expected, what in zip(got, want, names, strict=True):
        _assert_close(actual, expected, dtype, f"{name} {dtype} seq={seq} {what}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", MODELS)
def test_static_training_step_equals_eager(name, dtype):
    model = MODELS[name]().to(dtype)
    compiled = torch.compile(model, backend=_training_backend(), fullgraph=True, dynamic=False)
    _check_training(name, model, compiled, dtype, seq=8)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", MODELS)
def test_dynamic_training_step_equals_eager_without_recompiling(name, dtype):
    model = MODELS[name]().to(dtype)
    backend = CountingBackend(_training_backend())
    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=True)
    _check_training(name, model, compiled, dtype, SEQ_LENS[0])
    first = backend.compiles
    for seq in SEQ_LENS[1:]:
        _check_training(name, model, compiled, dtype, seq)
    assert backend.compiles == first, "a new sequence length recompiled"


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", MODELS)
def test_inference_equals_eager(name, dynamic):
    """No grad: Dynamo builds a forward-only graph, through ``airfuse.get_npu_backend()`` as is."""
    dtype = torch.bfloat16
    model = MODELS[name]().to(dtype).requires_grad_(False)
    backend = CountingBackend(airfuse.get_npu_backend(fuse=False))
    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=dynamic)
    first = None
    for seq in SEQ_LENS if dynamic else SEQ_LENS[:1]:
        inputs = _inputs(name, seq, dtype)
        _assert_close(compiled(*inputs), model(*inputs), dtype, f"{name} seq={seq}")
        first = first or backend.compiles
    assert backend.compiles == first, "a new sequence length recompiled"


def test_inputs_mutated_in_place_are_written_back():
    """TorchAir turns an input's in-place update into an assigned output: the caller's tensor changes."""

    def accumulate(x, buffer):
        buffer.mul_(0.5).add_(x)
        return buffer * 2

    x, buffer = torch.randn(3, 4), torch.randn(3, 4)
    expected_buffer = buffer * 0.5 + x
    out = torch.compile(accumulate, backend=airfuse.get_npu_backend(), fullgraph=True)(x, buffer)
    torch.testing.assert_close(buffer, expected_buffer)
    torch.testing.assert_close(out, expected_buffer * 2)


# --- a wrong converter is caught by the numbers ------------------------------------------------

def _swap_converter(op, make):
    """Register ``make(original)`` as ``op``'s TorchAir converter; return a function restoring it."""
    from torchair import register_fx_node_ge_converter
    from torchair._ge_concrete_graph import fx2ge_converter

    original_entry, original_attr = fx2ge_converter._CONVERTERS[op], op._ge_converter
    register_fx_node_ge_converter(op)(make())

    def restore():
        fx2ge_converter._CONVERTERS[op] = original_entry
        op._ge_converter = original_attr

    return restore


def _rms_norm_fn(x, gamma):
    return torch.ops.airfuse.rms_norm(x, gamma, 1e-6)[0] * 2


def _compiled_rms_norm(x, gamma):
    return torch.compile(_rms_norm_fn, backend=airfuse.get_npu_backend(), fullgraph=True)(x, gamma)


def test_swapped_rms_norm_converter_inputs_are_detected():
    from airfuse.converters._emit import emit_ir
    from airfuse.ops.rms_norm import RMS_NORM

    # x 1-D, like gamma: swapped inputs still pass every shape and dtype check.
    x, gamma = torch.randn(64), torch.rand(64) + 0.5
    eager = _rms_norm_fn(x, gamma)
    torch.testing.assert_close(_compiled_rms_norm(x, gamma), eager)  # the real converter

    def swapped(x, gamma, epsilon=1e-6):
        return emit_ir(RMS_NORM, inputs={"x": gamma, "gamma": x}, attrs={"epsilon": epsilon})

    restore = _swap_converter(torch.ops.airfuse.rms_norm.default, lambda: swapped)
    try:
        torch._dynamo.reset()
        wrong = _compiled_rms_norm(x, gamma)
    finally:
        restore()
        torch._dynamo.reset()
    with pytest.raises(AssertionError, match="Mismatched elements"):
        torch.testing.assert_close(wrong, eager)
    torch.testing.assert_close(_compiled_rms_norm(x, gamma), eager)  # restored


def test_swapped_rms_norm_backward_converter_inputs_are_detected():
    """dy and x have one shape and dtype: only the gradients' numbers can show the swap."""
    from airfuse.converters._emit import emit_ir
    from airfuse.ops.rms_norm import RMS_NORM_BACKWARD

    def swapped(dy, x, rstd, gamma):
        return emit_ir(RMS_NORM_BACKWARD, inputs={"dy": x, "x": dy, "rstd": rstd, "gamma": gamma}, attrs={})

    model = LlamaBlock(rms_norm="airfuse")
    restore = _swap_converter(torch.ops.airfuse.rms_norm_backward.default, lambda: swapped)
    try:
        compiled = torch.compile(model, backend=_training_backend(), fullgraph=True)
        with pytest.raises(AssertionError, match="relative error"):
            _check_training("llama_airfuse", model, compiled, torch.float32, seq=8)
    finally:
        restore()
        torch._dynamo.reset()


def test_swapped_rope_converter_tables_are_detected():
    """cos and sin have one shape and dtype: only the numbers can show them swapped."""
    from airfuse.converters._emit import emit_ir
    from airfuse.ops.rope import ROPE

    def rope_fn(x, cos, sin):
        return torch.ops.airfuse.rope(x, cos, sin, "interleave") * 2

    def swapped(x, cos, sin, mode="half"):
        return emit_ir(ROPE, inputs={"x": x, "cos": sin, "sin": cos}, attrs={"mode": mode})

    x, cos, sin = torch.randn(2, 4, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 8)
    eager = rope_fn(x, cos, sin)
    torch.testing.assert_close(torch.compile(rope_fn, backend=airfuse.get_npu_backend(), fullgraph=True)(x, cos, sin), eager)
    restore = _swap_converter(torch.ops.airfuse.rope.default, lambda: swapped)
    try:
        torch._dynamo.reset()
        wrong = torch.compile(rope_fn, backend=airfuse.get_npu_backend(), fullgraph=True)(x, cos, sin)
    finally:
        restore()
        torch._dynamo.reset()
    with pytest.raises(AssertionError, match="Mismatched elements"):
        torch.testing.assert_close(wrong, eager)
