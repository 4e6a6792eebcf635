"""What a user meets on the way to compiling real models: the backend's default decompositions,
capture_ge_graph's options and its example inputs, and TorchAir's import-time noise."""

import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import airfuse
from airfuse.torchair_env import is_offline

aten = torch.ops.aten


def test_default_decompositions_cover_silu_backward_and_cpu_sdpa_offline():
    table = airfuse.default_decompositions()
    assert aten.silu_backward.default in table and aten.slice_backward.default in table
    cpu_sdpa = {aten._scaled_dot_product_flash_attention_for_cpu.default, aten._scaled_dot_product_flash_attention_for_cpu_backward.default}
    assert cpu_sdpa <= table.keys() if is_offline() else not cpu_sdpa & table.keys()


class SiluMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


def _grads(model, run, x):
    model.zero_grad(set_to_none=True)
    run(x).pow(2).sum().backward()
    return [p.grad for p in model.parameters()]


def test_training_silu_needs_no_user_decompositions():
    model, x = SiluMlp(), torch.randn(4, 16)
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True)
    for got, want in zip(_grads(model, compiled, x), _grads(model, model, x), strict=True):
        torch.testing.assert_close(got, want)


SLICES = {
    "start before the dim": lambda t: t[:, -15:],  # Hugging Face's sliding-window cache, window > sequence
    "both bounds negative": lambda t: t[:, -15:-2],
    "negative start, step 2": lambda t: t[:, -6::2],
    "step 2 to the end": lambda t: t[:, 1::2],
    "negative start in range": lambda t: t[:, -3:],
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("slicing", SLICES)
def test_slice_backward_takes_negative_bounds_as_aten_does(slicing, dynamic):
    """TorchAir's slice_backward converter takes a negative bound modulo the size: -15 of 7 became 6,
    and the gradient of ``x[:, -15:]`` got 13 positions. The default decomposition passes aten's."""
    x, weight = torch.randn(2, 7, 4), torch.randn(4)

    def loss(t):
        return (SLICES[slicing](t) * weight).pow(2).sum()

    compiled = torch.compile(loss, backend=airfuse.get_npu_backend(), fullgraph=True, dynamic=dynamic)
    grads = []
    for run in (compiled, loss):
        t = x.clone().requires_grad_()
        run(t).backward()
        grads.append(t.grad)
    torch.testing.assert_close(*grads)


def test_user_decompositions_win_over_the_defaults():
    calls = []

    def silu_backward(grad_output, x):
        calls.append(x.shape)
        sigmoid = torch.sigmoid(x)
        return grad_output * sigmoid * (1 + x * (1 - sigmoid))

    model, x = SiluMlp(), torch.randn(4, 16)
    backend = airfuse.get_npu_backend(custom_decompositions={aten.silu_backward.default: silu_backward})
    got = _grads(model, torch.compile(model, backend=backend, fullgraph=True), x)
    assert calls, "the user's silu_backward decomposition was not used"
    for g, want in zip(got, _grads(model, model, x), strict=True):
        torch.testing.assert_close(g, want)


def test_capture_takes_custom_decompositions_and_leaves_the_config_alone(torchair):
    x = torch.randn(4, 8)
    config = torchair.CompilerConfig()
    plain = airfuse.capture_ge_graph(F.silu, x, compiler_config=config)
    decomposed = airfuse.capture_ge_graph(
        F.silu, x, compiler_config=config, custom_decompositions={aten.silu.default: lambda t: t * torch.sigmoid(t)}
    )
    assert plain.op_types()["Swish"] == 1
    assert "Swish" not in decomposed.op_types() and decomposed.op_types()["Sigmoid"] == 1
    fresh = torchair.CompilerConfig()
    assert config.debug.run_eagerly.value == fresh.debug.run_eagerly.value
    assert config.debug.graph_dump.type.value == fresh.debug.graph_dump.type.value


def _data_shapes(capture):
    return [tuple(node.output_shapes[0]) for node in capture.nodes("Data")]


def test_capture_does_not_mark_its_example_inputs_dynamic():
    model = SiluMlp()
    x = torch.randn(4, 16, requires_grad=True)  # captures build the backward graph too
    static_before = _data_shapes(airfuse.capture_ge_graph(model, x, dynamic=False))
    airfuse.capture_ge_graph(model, x, dynamic=True)
    static_after = _data_shapes(airfuse.capture_ge_graph(model, x, dynamic=False))
    assert static_after == static_before and all(-1 not in shape for shape in static_after)


def test_a_missing_converter_is_not_buried_in_torchair_import_warnings():
    """TorchAir imports its torch_npu converters lazily, on the first op without a converter."""
    script = textwrap.dedent(
        """
        import torch, airfuse
        try:
            torch.compile(lambda x: torch.kthvalue(x, 2).values, backend=airfuse.get_npu_backend())(torch.rand(4))
        except Exception as error:
            print("raised", error)
        """
    )
    result = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True, text=True, timeout=300)
    assert "raised" in result.stdout and "kthvalue" in result.stdout
    assert "Failed to import torchair" not in result.stderr


def _zero_where(x, mask):
    x = x.clone()
    x[mask] = 0
    return x


@pytest.mark.parametrize("mask_dims", [2, 1], ids=["mask_over_2_of_3_dims", "mask_over_1_of_3_dims"])
def test_masked_index_put_compiles_as_where(mask_dims):
    """``t[mask] = 0`` (DTensor's vocab-parallel embedding): TorchAir has no index_put converter."""
    x = torch.randn(3, 4, 5)
    mask = torch.rand(x.shape[:mask_dims]) > 0.5
    capture = airfuse.capture_ge_graph(_zero_where, x, mask)
    assert capture.op_types()["SelectV2"] == 1
    compiled = torch.compile(_zero_where, backend=airfuse.get_npu_backend(fuse=False), dynamic=False)
    torch.testing.assert_close(compiled(x, mask), _zero_where(x, mask), rtol=0, atol=0)


def test_other_index_puts_are_left_alone():
    """A mask with several values, an accumulating mask and several indexed dims reach TorchAir as
    they are (the integer-index form is tests/graph/test_torchair_gaps.py's)."""
    x, index = torch.randn(4, 5), torch.tensor([0, 2])
    index_put = airfuse.torchair_gaps.index_put
    assert index_put(x, [x > 0], torch.ones(2)) is NotImplemented
    assert index_put(x, [x > 0], torch.tensor(0.0), accumulate=True) is NotImplemented
    assert index_put(x, [index, index], torch.tensor(0.0)) is NotImplemented


def test_torchair_turns_sigterm_into_a_compile_error_and_then_ignores_it():
    """Importing TorchAir 2.13 installs its SIGTERM/SIGINT handler (torchair/core/_backend.py): it
    finalizes GE with ``torch._dynamo.reset()``, then sets the signal to SIG_IGN and re-sends it,
    so the process never stops. During a compile the reset fails instead ("Cannot clear callbacks
    while 1 are pending"), so a run stopped with SIGTERM or Ctrl-C fails the test compiling at
    that moment and goes on with the rest (README, `make hf-matrix`). Fails once TorchAir fixes it."""
    script = textwrap.dedent(
        """
        import os, signal, torch, airfuse

        airfuse.import_torchair()

        def terminated_while_compiling(gm, example_inputs):
            os.kill(os.getpid(), signal.SIGTERM)
            return gm.forward

        try:
            torch.compile(lambda x: x + 1, backend=terminated_while_compiling)(torch.ones(2))
            print("compiled")
        except Exception as error:
            print("compile raised:", error)
        os.kill(os.getpid(), signal.SIGTERM)
        print("alive, SIGTERM now ignored:", signal.getsignal(signal.SIGTERM) == signal.SIG_IGN)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "compile raised:" in result.stdout and "Cannot clear callbacks while 1 are pending" in result.stdout
    assert "alive, SIGTERM now ignored: True" in result.stdout
