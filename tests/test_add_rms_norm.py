"""airfuse.add_rms_norm: numerics vs float64, the unfused graph it must agree with, opcheck,
autograd, bad input; the eager backward's one kernel against the two ops, and where each runs."""

import pytest
import torch

from reference import IR_DTYPES, TOLERANCES, rms_norm_reference

add_rms_norm = torch.ops.airfuse.add_rms_norm
ALL_DTYPES = IR_DTYPES + (torch.float64,)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1,), (3, 7), (2, 5, 4096), (4, 11008)], ids=str)
def test_matches_float64_reference(shape, dtype):
    x1, x2 = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    gamma = torch.rand(shape[-1], dtype=dtype) + 0.5
    y, rstd, x = add_rms_norm(x1, x2, gamma, 1e-5)
    x_ref = (x1.double() + x2.double()).to(dtype)
    y_ref, rstd_ref = rms_norm_reference(x_ref, gamma, 1e-5)
    torch.testing.assert_close(x, x_ref, rtol=0, atol=0)
    torch.testing.assert_close(y.double(), y_ref, **TOLERANCES[dtype])
    torch.testing.assert_close(rstd.double(), rstd_ref, **TOLERANCES[torch.float32 if dtype != torch.float64 else dtype])
    assert (y.dtype, rstd.dtype, x.dtype) == (dtype, torch.float32 if dtype != torch.float64 else dtype, dtype)


@pytest.mark.parametrize("dtype", IR_DTYPES, ids=str)
def test_agrees_bit_for_bit_with_the_unfused_ops(dtype):
    x1, x2 = torch.randn(6, 256, dtype=dtype), torch.randn(6, 256, dtype=dtype)
    gamma = torch.randn(256, dtype=torch.float32)
    y, rstd, x = add_rms_norm(x1, x2, gamma, 1e-6)
    x_unfused = torch.ops.airfuse.add(x1, x2)
    y_unfused, rstd_unfused = torch.ops.airfuse.rms_norm(x_unfused, gamma, 1e-6)
    assert torch.equal(x, x_unfused) and torch.equal(y, y_unfused) and torch.equal(rstd, rstd_unfused)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_opcheck(dtype):
    x1, x2 = (torch.randn(3, 16, dtype=dtype, requires_grad=True) for _ in range(2))
    gamma = torch.rand(16, dtype=dtype, requires_grad=True)
    torch.library.opcheck(add_rms_norm.default, (x1, x2, gamma, 1e-6))


def test_gradcheck_through_y_and_the_residual_x():
    x1, x2 = (torch.randn(3, 8, dtype=torch.float64, requires_grad=True) for _ in range(2))
    gamma = torch.rand(8, dtype=torch.float64, requires_grad=True)

    def both_outputs(a, b, g):
        y, _, x = add_rms_norm(a, b, g, 1e-6)
        return y * 0.5 + x.sin()

    assert torch.autograd.gradcheck(both_outputs, (x1, x2, gamma))


BAD_INPUTS = [
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), torch.randn(8)), RuntimeError, r"x2 must have x1's shape \[2, 8\], got \[8\] \(no broadcasting\)", id="broadcast"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(2, 8, dtype=torch.float16), torch.randn(8)), TypeError, r"x2 has dtype float16 with x1=float32", id="x2-dtype"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(2, 8), torch.randn(7)), RuntimeError, r"gamma must have shape \[8\]", id="gamma"),
    pytest.param(lambda: (torch.randn(2, 8), None, torch.randn(8)), TypeError, r"x2 must be a Tensor, got NoneType", id="none"),
    pytest.param(lambda: (torch.randn(0, 8), torch.randn(0, 8), torch.randn(8)), RuntimeError, r"x1 is empty", id="empty"),
]


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_in_eager_and_while_tracing(make_args, error, message):
    x1, x2, gamma = make_args()
    with pytest.raises(error, match=r"airfuse\.add_rms_norm: " + message):
        add_rms_norm(x1, x2, gamma, 1e-6)
    compiled = torch.compile(lambda a, b, g: add_rms_norm(a, b, g, 1e-6)[0], backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"airfuse\.add_rms_norm: " + message):
        compiled(x1, x2, gamma)


def test_bad_epsilon_is_refused():
    x = torch.randn(2, 8)
    with pytest.raises(ValueError, match=r"airfuse\.add_rms_norm: epsilon must be a finite float32 number >= 0"):
        add_rms_norm(x, x, torch.ones(8), -1.0)


# The eager CPU backward: rms_norm_backward and the residual gradient's add in one kernel when it
# can (airfuse/ops/add_rms_norm.py), the two ops otherwise; always the two ops' bits.
FUSED, ADD_ = "airfuse_cpu::rms_norm_backward_add", "aten::add_"


def _ops_run(fn) -> set:
    """The names of the ops fn runs, as the profiler records them."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return {event.name for event in prof.events()}


def _bits(t):
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _residual(layout, shape, dtype):
    if layout == "contiguous":
        return torch.randn(shape, dtype=dtype)
    if layout == "strided":  # every other element of a wider tensor
        return torch.randn(*shape[:-1], 2 * shape[-1], dtype=dtype)[..., ::2]
    if layout == "expanded":
        return torch.zeros((), dtype=dtype).expand(shape)
    if layout == "negative view":  # contiguous, but its values are its memory's negated
        return torch._neg_view(torch.randn(shape, dtype=dtype))
    return torch._efficientzerotensor(shape, dtype=dtype)  # contiguous, but no memory at all


@pytest.mark.parametrize("layout", ["contiguous", "strided", "expanded", "negative view", "zero tensor"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 7), (1, 4096), (3, 33), (2, 5, 100), (300, 64)], ids=str)
def test_eager_backward_is_rms_norm_backward_then_add_bit_for_bit(shape, dtype, layout):
    x1, x2 = (torch.randn(shape, dtype=dtype, requires_grad=True) for _ in range(2))
    gamma = (torch.rand(shape[-1], dtype=dtype) + 0.5).requires_grad_()
    y, rstd, x = add_rms_norm(x1, x2, gamma, 1e-6)
    dy, dx_residual = torch.randn(shape, dtype=dtype), _residual(layout, shape, dtype)
    grads = []
    ran = _ops_run(lambda: grads.extend(torch.autograd.grad((y, x), (x1, x2, gamma), (dy, dx_residual))))
    dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x.detach(), rstd, gamma.detach())
    dx.add_(dx_residual)
    for got, want in zip(grads, (dx, dx, dgamma), strict=True):
        assert got.dtype == want.dtype and torch.equal(_bits(got), _bits(want))
    # Only a contiguous residual with plain memory is fused: ATen adds the others without the copy
    # the kernel would need.
    assert (FUSED in ran, ADD_ in ran) == ((True, False) if layout == "contiguous" else (False, True))


def test_fused_backward_refuses_bad_input_with_rms_norm_backwards_message():
    from airfuse.ops.add_rms_norm import _rms_norm_backward_add

    x, gamma = torch.randn(3, 8), torch.ones(8)
    with pytest.raises(RuntimeError, match=r"airfuse\.rms_norm_backward: dy must have x's shape \[3, 8\], got \[3, 7\]"):
        _rms_norm_backward_add(torch.randn(3, 7), x, torch.ones(3, 1), gamma, torch.randn(3, 8))


def _grads_and_ops(x1, x2, gamma, create_graph=False):
    y, _, x = add_rms_norm(x1, x2, gamma, 1e-6)
    grads = []
    ran = _ops_run(lambda: grads.extend(torch.autograd.grad(
        (y * 0.5 + x.sin()).sum(), (x1, x2, gamma), create_graph=create_graph)))
    return grads, ran


def test_the_backward_keeps_the_two_ops_under_a_dispatch_mode_and_in_double_backward():
    """What records ops (make_fx, AOT autograd, FakeTensorMode: TorchDispatchModes) and a backward
    that is itself differentiated (create_graph) see rms_norm_backward then add_, as before."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.add(str(func))
            return func(*args, **(kwargs or {}))

    x1, x2 = (torch.randn(3, 8, requires_grad=True) for _ in range(2))
    gamma = torch.rand(8, requires_grad=True)
    eager, ran = _grads_and_ops(x1, x2, gamma)
    assert FUSED in ran and ADD_ not in ran
    with Recorder() as recorder:
        recorded, _ = _grads_and_ops(x1, x2, gamma)
    assert {"airfuse.rms_norm_backward.default", "aten.add_.Tensor"} <= recorder.ops
    assert not any(op.startswith("airfuse_cpu.") for op in recorder.ops)
    differentiable, ran = _grads_and_ops(x1, x2, gamma, create_graph=True)
    assert FUSED not in ran and ADD_ in ran
    for a, b, c in zip(eager, recorded, differentiable, strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)


def test_compiled_training_graphs_keep_the_two_ops():
    """torch.compile's backward graph (AOT autograd) and compiled autograd's graph (Dynamo through
    the backward's Python) hold rms_norm_backward and the add, never the eager-only fused kernel,
    and give the eager gradients."""
    from functorch.compile import make_boxed_compiler
    from torch._dynamo import compiled_autograd
    from torch._dynamo.backends.common import aot_autograd

    graphs = []

    def keep(gm, _example_inputs):
        graphs.append(gm)
        return gm.forward

    def targets(gm):
        return [str(node.target) for node in gm.graph.nodes if node.op in ("call_function", "call_method")]

    def loss(a, b, g):
        y, _, x = add_rms_norm(a, b, g, 1e-6)
        return (y * 0.5 + x.sin()).sum()

    x1, x2 = (torch.randn(3, 8, requires_grad=True) for _ in range(2))
    gamma = torch.rand(8, requires_grad=True)
    eager = torch.autograd.grad(loss(x1, x2, gamma), (x1, x2, gamma))
    boxed = make_boxed_compiler(keep)
    compiled = torch.compile(loss, backend=aot_autograd(fw_compiler=boxed, bw_compiler=boxed), fullgraph=True)
    assert all(torch.equal(a, b) for a, b in zip(eager, torch.autograd.grad(compiled(x1, x2, gamma), (x1, x2, gamma))))
    backward = targets(graphs[-1])
    assert "airfuse.rms_norm_backward.default" in backward and "aten.add.Tensor" in backward

    graphs.clear()
    with compiled_autograd._enable(lambda gm: torch.compile(gm, backend=keep, fullgraph=True)):
        loss(x1, x2, gamma).backward()
    captured = targets(graphs[-1])
    assert "airfuse.rms_norm_backward" in captured and "add_" in captured
    assert not any("airfuse_cpu" in target for graph in graphs for target in targets(graph))
    assert all(torch.equal(a, p.grad) for a, p in zip(eager, (x1, x2, gamma)))


ONE_OUTPUT_USED = [pytest.param(lambda y, x: y.sin(), id="y-only"), pytest.param(lambda y, x: x.sin(), id="x-only")]


@pytest.mark.parametrize("uses", ONE_OUTPUT_USED)
def test_an_unused_output_adds_no_zero_gradient(uses):
    """The last layer's residual x (or a y nobody reads) has no gradient: the backward gets None
    for it, and neither eager nor the compiled backward graph creates zeros to add."""
    from functorch.compile import make_boxed_compiler
    from torch._dynamo.backends.common import aot_autograd

    def loss(a, b, g):
        y, _, x = add_rms_norm(a, b, g, 1e-6)
        return uses(y, x).sum()

    x1, x2 = (torch.randn(3, 8, dtype=torch.float64, requires_grad=True) for _ in range(2))
    gamma = torch.rand(8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(loss, (x1, x2, gamma))
    eager = torch.autograd.grad(loss(x1, x2, gamma), (x1, x2, gamma), allow_unused=True)

    graphs = []
    keep = make_boxed_compiler(lambda gm, _inputs: graphs.append(gm) or gm.forward)
    compiled = torch.compile(loss, backend=aot_autograd(fw_compiler=keep, bw_compiler=keep), fullgraph=True)
    got = torch.autograd.grad(compiled(x1, x2, gamma), (x1, x2, gamma), allow_unused=True)
    for e, g in zip(eager, got, strict=True):
        assert (e is None and g is None) or torch.equal(e, g)
    backward = {str(node.target) for node in graphs[-1].graph.nodes if node.op == "call_function"}
    assert not any(target.startswith(("aten.zeros", "aten.full", "aten.add")) for target in backward), backward

