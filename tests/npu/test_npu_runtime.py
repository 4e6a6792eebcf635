"""What the binding hands the aclnn API on the emulated "npu": workspace, stream, and the errors
of every layer. Every test also checks that no aclTensor or executor is left alive."""

import pytest
import torch

from airfuse import compat
from npu_cases import assert_matches_cpu


def _rms_norm_inputs(rows=64, cols=1000, dtype=torch.float32):
    return torch.randn(rows, cols, dtype=dtype), torch.randn(cols, dtype=dtype)


def test_workspace_from_phase1_reaches_phase2_from_the_device_allocator(npu, no_leaks):
    """rms_norm_backward on many rows needs a user workspace (dgamma partial rows per core)."""
    x, gamma = _rms_norm_inputs()
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma)
    dy = torch.randn_like(x)
    out = torch.ops.airfuse.rms_norm_backward(*[t.to("npu") for t in (dy, x, rstd, gamma)])
    call = npu.last_call()
    assert call.op == b"AirfuseRmsNormGrad" and call.block_dim > 1
    # System workspace (16 MiB) plus the tiling's user part, as phase 1 asked for.
    assert call.required_workspace > 16 << 20
    assert call.workspace_size == call.required_workspace
    assert call.workspace % 32 == 0
    assert npu.allocation_size(call.workspace) == call.workspace_size
    assert_matches_cpu(out, torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma), rows=64)


@pytest.mark.skipif(not compat.HAS_STREAM_NATIVE_HANDLE, reason="torch 2.10 has no torch.Stream.native_handle (2.11+)")
def test_current_stream_reaches_phase2(npu, no_leaks):
    x, gamma = _rms_norm_inputs(4, 64)
    xn, gn = x.to("npu"), gamma.to("npu")
    default = torch.accelerator.current_stream("npu")
    torch.ops.airfuse.rms_norm(xn, gn)
    assert npu.last_call().stream == default.native_handle
    side = torch.Stream(device="npu")
    assert side.native_handle != default.native_handle
    with side:
        torch.ops.airfuse.rms_norm(xn, gn)
    assert npu.last_call().stream == side.native_handle
    torch.ops.airfuse.add(xn, xn)
    assert npu.last_call().stream == default.native_handle


def test_phase1_status_names_op_status_and_runtime_message(npu, no_leaks, monkeypatch):
    """On a 310P, op_host's tiling refuses bfloat16: GetWorkspaceSize returns a tiling error."""
    monkeypatch.setenv("EMULATED_NPU_SOC", "Ascend310P3")
    x, gamma = _rms_norm_inputs(4, 64, torch.bfloat16)
    with pytest.raises(RuntimeError) as err:
        torch.ops.airfuse.rms_norm(x.to("npu"), gamma.to("npu"))
    msg = str(err.value)
    assert "airfuse.rms_norm: aclnnAirfuseRmsNormGetWorkspaceSize returned status 561002" in msg
    assert "op_host's tiling refused inputs 4,64:27;64:27" in msg and "Ascend310P3" in msg
    # float16 runs on the same chip.
    out = torch.ops.airfuse.rms_norm(x.half().to("npu"), gamma.half().to("npu"))
    assert_matches_cpu(out, torch.ops.airfuse.rms_norm(x.half(), gamma.half()), rows=4)


def test_phase2_status_names_op_status_and_runtime_message(npu, no_leaks):
    x = torch.randn(8, 16).to("npu")
    npu.fail_next(361001, "stream was aborted")
    with pytest.raises(RuntimeError, match=r"airfuse\.add: aclnnAirfuseAdd returned status 361001: AirfuseAdd: stream was aborted"):
        torch.ops.airfuse.add(x, x)
    torch.testing.assert_close(torch.ops.airfuse.add(x, x).cpu(), (x + x).cpu())


def test_dtype_the_kernels_do_not_take(npu, no_leaks):
    x, gamma = _rms_norm_inputs(4, 8, torch.float64)
    with pytest.raises(TypeError, match=r"airfuse\.rms_norm: x has dtype float64, which the NPU kernels do not take; "
                                        r"expected one of float32, float16, bfloat16"):
        torch.ops.airfuse.rms_norm(x.to("npu"), gamma.to("npu"))


@pytest.mark.parametrize("make,error,match", [
    (lambda: (torch.randn(4, 8, dtype=torch.half), torch.randn(8, dtype=torch.bfloat16)), TypeError,
     r"airfuse\.rms_norm: gamma has dtype bfloat16 with x=float16; expected one of float16, float32"),
    (lambda: (torch.randn(4, 8), torch.randn(7)), RuntimeError, r"airfuse\.rms_norm: gamma must have shape \[8\]"),
    (lambda: (torch.randn(0, 8), torch.randn(8)), RuntimeError, r"airfuse\.rms_norm: x is empty"),
], ids=["dtype-combination", "gamma-shape", "empty"])
def test_bad_input_gives_the_op_definitions_errors(make, error, match, npu, no_leaks):
    x, gamma = make()
    with pytest.raises(error, match=match):
        torch.ops.airfuse.rms_norm(x.to("npu"), gamma.to("npu"))


def test_bad_attr(npu, no_leaks):
    x, gamma = _rms_norm_inputs(2, 8)
    with pytest.raises(ValueError, match=r"airfuse\.rms_norm: epsilon must be a finite .*, got nan"):
        torch.ops.airfuse.rms_norm(x.to("npu"), gamma.to("npu"), float("nan"))


def test_inputs_on_different_devices(npu, no_leaks):
    x, gamma = _rms_norm_inputs(2, 8)
    with pytest.raises(RuntimeError, match=r"airfuse\.rms_norm: gamma is on cpu but x is on npu:0"):
        torch.ops.airfuse.rms_norm(x.to("npu"), gamma)

