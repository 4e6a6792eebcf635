"""airfuse.compat: each older release's behaviour, checked on whichever torch runs the tests (the
release's own behaviour is what `make compat TORCH=<version>` runs the whole suite on)."""

from types import SimpleNamespace

import pytest
import torch

from airfuse import compat


def _search(x, gamma, eps):
    return x * gamma + eps


def _trace(fn, args, get_decomp_fn=None):
    return ("traced", fn, tuple(args))


@pytest.mark.parametrize("release", [(2, 12), (2, 13)])
def test_pattern_arguments_come_from_the_match(monkeypatch, release):
    monkeypatch.setattr(compat, "TORCH", release)
    trace_fn, arguments = compat.pattern_arguments(_search, _trace)
    x, gamma = torch.ones(2), torch.ones(2)
    assert trace_fn(_search, [x, gamma, 1e-5]) == ("traced", _search, (x, gamma, 1e-5))
    match = SimpleNamespace(kwargs={"x": x, "gamma": gamma, "eps": 1e-6})
    assert arguments(match) == [x, gamma, 1e-6]


def test_up_to_2_12_a_scalar_baked_into_the_retraced_pattern_is_the_one_it_was_traced_with(monkeypatch):
    monkeypatch.setattr(compat, "TORCH", (2, 12))
    trace_fn, arguments = compat.pattern_arguments(_search, _trace)
    x, gamma, size = torch.ones(2), torch.ones(2), 7
    trace_fn(_search, [size, x, gamma, 1e-5])  # with a symbolic size, the pattern matcher puts it first
    assert arguments(SimpleNamespace(kwargs={"x": x, "gamma": gamma})) == [x, gamma, 1e-5]


def test_since_2_13_every_argument_is_in_the_match(monkeypatch):
    monkeypatch.setattr(compat, "TORCH", (2, 13))
    trace_fn, arguments = compat.pattern_arguments(_search, _trace)
    assert trace_fn is _trace
    with pytest.raises(KeyError, match="eps"):
        arguments(SimpleNamespace(kwargs={"x": 1, "gamma": 2}))


@pytest.mark.parametrize("release, options", [((2, 10), {}), ((2, 11), {}), ((2, 12), {"pattern_name": "rms_norm"})])
def test_pattern_name_only_where_register_replacement_takes_it(monkeypatch, release, options):
    monkeypatch.setattr(compat, "TORCH", release)
    assert compat.replacement_options("rms_norm") == options


@pytest.mark.parametrize("release, swapped", [((2, 10), True), ((2, 12), False)])
def test_fusion_traces_in_the_graphs_fake_mode_where_detect_fake_mode_asserts_one_mode(monkeypatch, release, swapped):
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode

    monkeypatch.setattr(compat, "TORCH", release)
    context_mode, graph_mode = FakeTensorMode(), FakeTensorMode()
    with tracing(TracingContext(context_mode)) as context:
        with compat.tracing_fake_mode(graph_mode):
            assert context.fake_mode is (graph_mode if swapped else context_mode)
        assert context.fake_mode is context_mode
    with compat.tracing_fake_mode(graph_mode):  # no tracing context: nothing to change
        assert TracingContext.try_get() is None


@pytest.mark.parametrize("release", [None, (2, 10)], ids=["running", "2.10"])
def test_compile_target_is_traced(monkeypatch, release):
    """On the running release as it is, and with 2.10's wrapping (traced on any release)."""
    if release:
        monkeypatch.setattr(compat, "TORCH", release)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    x = torch.randn(4, 8)
    torch._dynamo.reset()
    out = torch.compile(compat.compile_target(torch.nn.functional.silu), backend=backend, fullgraph=True)(x)
    assert torch.equal(out, torch.nn.functional.silu(x)) and len(graphs) == 1
    module = torch.nn.SiLU()
    assert compat.compile_target(module) is module


class _RepeatKeyValue(torch.nn.Module):
    """Hugging Face's repeat_kv: the reshape of an expanded tensor whose guards 2.12 cannot prove."""

    def forward(self, key):
        batch, heads, seq, dim = key.shape
        return key[:, :, None].expand(batch, heads, 2, seq, dim).reshape(batch, heads * 2, seq, dim)


@pytest.mark.parametrize("release", [None, (2, 12)], ids=["running", "2.12"])
def test_export_keeps_a_dynamic_sequence_through_grouped_query_attention(monkeypatch, release):
    """On the running release as it is, and with 2.12's runtime asserts (exported on any release)."""
    if release:
        monkeypatch.setattr(compat, "TORCH", release)
        assert compat.export_options() == {"prefer_deferred_runtime_asserts_over_guards": True}
    seq = torch.export.Dim("seq", min=2, max=32)
    program = torch.export.export(_RepeatKeyValue(), (torch.randn(1, 2, 4, 8),), dynamic_shapes=({2: seq},),
                                  strict=False, **compat.export_options())
    key = torch.randn(1, 2, 9, 8)
    assert torch.equal(program.module()(key), _RepeatKeyValue()(key))


@pytest.mark.parametrize("release", [None, (2, 10)], ids=["running", "2.10"])
def test_the_outer_redistribution_is_the_one_of_an_inputs_position(monkeypatch, release):
    from torch.utils._debug_mode import _RedistributeCall

    if release:
        monkeypatch.setattr(compat, "TORCH", release)
    outer = _RedistributeCall(0, "S(0)", "R", None, call_depth=1)
    step = _RedistributeCall(torch.ones(2), "S(0)", "R", None, call_depth=2)
    assert compat.is_outer_redistribution(outer) and not compat.is_outer_redistribution(step)
    outer.stringify_args([]), step.stringify_args([])  # DebugMode without store_original_args
    assert compat.is_outer_redistribution(outer) and not compat.is_outer_redistribution(step)


@pytest.mark.parametrize("release", [None, (2, 11)], ids=["running", "2.11"])
def test_an_op_on_a_collectives_output_is_recorded_as_on_a_real_tensor(monkeypatch, release):
    from torch.distributed._functional_collectives import AsyncCollectiveTensor
    from torch.utils._debug_mode import _OpCall

    if release:
        monkeypatch.setattr(compat, "TORCH", release)
    gathered = AsyncCollectiveTensor(torch.ones(2, 3))
    with compat.debug_mode(store_original_args=True) as debug_mode:
        total = torch.ops.aten.sum.default(gathered)
    assert total.item() == 6
    calls = [(str(call.op), type(call.args[0]), call.call_depth) for call in debug_mode.operators if isinstance(call, _OpCall)]
    assert calls == [("aten.sum.default", AsyncCollectiveTensor, 1)]


def _reduction_backward_graph_targets():
    from torch._functorch.aot_autograd import aot_function, make_boxed_func

    targets = []

    def compiler(gm, example_inputs):
        targets.extend(str(node.target) for node in gm.graph.nodes)
        return make_boxed_func(gm)

    x = torch.randn(10, 4, requires_grad=True)
    traced = aot_function(lambda x: torch.topk(x, 2).values.sum() + x.max(1).values.sum(), compiler, compiler)
    traced(x).backward()
    want = torch.zeros(10, 4).scatter(1, torch.topk(x, 2).indices, 1.0)
    want[torch.arange(10), x.max(1).indices] += 1
    torch.testing.assert_close(x.grad, want)
    return targets


@pytest.mark.parametrize("release", [None, (2, 10)], ids=["running", "2.10"])
def test_traced_reduction_backward_takes_the_gradients_zeros(monkeypatch, release):
    """No tensor made from nothing in the traced backward of topk and max, on the running release
    and with 2.10's kernel registered (on any release; taken away afterwards)."""
    op, key = torch.ops.aten.value_selecting_reduction_backward.default, torch._C.DispatchKey.CompositeImplicitAutograd
    registered_before = key in op.py_kernels
    if release:
        monkeypatch.setattr(compat, "TORCH", release)
    compat.trace_reduction_backward_from_the_gradient()
    try:
        targets = _reduction_backward_graph_targets()
    finally:
        if release and not registered_before:
            op.py_kernels.pop(key)
            op._dispatch_cache.clear()
    assert "aten.zeros.default" not in targets and targets.count("aten.new_zeros.default") == 2
