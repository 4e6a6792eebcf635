"""airfuse ops on the emulated "npu" under torch's machinery: opcheck, autograd and
torch.compile(backend="aot_eager"), each reaching the binding (counted by the stand-in vendor library)."""

import pytest
import torch

from npu_cases import PACKAGED_OPS, as_tuple, assert_matches_cpu, sample_inputs


@pytest.mark.parametrize("op", PACKAGED_OPS, ids=lambda o: o.name)
def test_opcheck(op, npu, no_leaks):
    inputs = [t.to("npu") for t in sample_inputs(op, op.dtype_combos[0], (4, 40))]
    calls = npu.calls(op.ir_type)
    torch.library.opcheck(getattr(torch.ops.airfuse, op.name).default, inputs)
    assert npu.calls(op.ir_type) > calls


def test_rms_norm_autograd_runs_the_backward_op_through_the_binding(npu, no_leaks):
    x, gamma = torch.randn(6, 48), torch.randn(48)
    dy = torch.randn(6, 48)
    grads = {}
    for device in ("cpu", "npu"):
        xd, gd = (t.detach().to(device).requires_grad_() for t in (x, gamma))
        y, _ = torch.ops.airfuse.rms_norm(xd, gd)
        y.backward(dy.to(device))
        grads[device] = (xd.grad, gd.grad)
    assert npu.calls("AirfuseRmsNormGrad") > 0 and npu.last_call().op == b"AirfuseRmsNormGrad"
    assert_matches_cpu(grads["npu"], grads["cpu"], rows=6)


def test_add_autograd(npu, no_leaks):
    x, y = (torch.randn(3, 5, device="npu", requires_grad=True) for _ in range(2))
    z = torch.ops.airfuse.add(x, y)
    assert npu.last_call().op == b"AirfuseAdd"
    z.sum().backward()
    assert torch.equal(x.grad.cpu(), torch.ones(3, 5)) and torch.equal(y.grad.cpu(), torch.ones(3, 5))


@pytest.mark.parametrize("op", PACKAGED_OPS, ids=lambda o: o.name)
def test_aot_eager_compile(op, npu, no_leaks):
    fn = getattr(torch.ops.airfuse, op.name)
    inputs = sample_inputs(op, op.dtype_combos[-1], (5, 24))
    compiled = torch.compile(lambda *a: fn(*a), backend="aot_eager", fullgraph=True)
    calls = npu.calls(op.ir_type)
    out = compiled(*[t.to("npu") for t in inputs])
    assert npu.calls(op.ir_type) == calls + 1
    assert_matches_cpu(as_tuple(out), as_tuple(fn(*inputs)), rows=5)
