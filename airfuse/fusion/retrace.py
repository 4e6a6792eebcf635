"""Dynamo's graph as an aten graph that still carries autograd, and the float inputs to specialize.

Dynamo hands a backend a graph of torch-level calls (methods, functions, operators). Tracing it
again with ``make_fx(pre_dispatch=True)`` under Dynamo's own fake mode gives one canonical aten
form (``aten.to.dtype``, ``aten.pow.Tensor_Scalar``, ``aten.mean.dim``, ...) on which patterns can
be matched, taken before AOTAutograd: a fused op there brings its own backward into the training
graph. (TorchAir's pattern passes run after AOTAutograd, on the partitioned graphs, where the
backward of the composite has already been built from the composite's gradient ops.)
"""

import torch
from torch._dynamo.exc import TensorifyScalarRestartAnalysis
from torch._dynamo.symbolic_convert import TensorifyState
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.experimental.proxy_tensor import make_fx
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten


def trace_aten(fn, args, get_decomp_fn=None):
    """The pattern matcher's ``trace_fn``: the same tracing as ``retrace`` applies to the graph."""
    del get_decomp_fn  # nothing is decomposed: the graph keeps the ops the model called
    with _KeepContiguous():
        return drop_noop_casts(make_fx(fn, pre_dispatch=True)(*args))


def retrace(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    # The inputs' own fake mode (Dynamo's tracing context may hold another); a graph without
    # tensor inputs has none, and then the context's is the one its constants will meet.
    fake_mode = input_fake_mode(gm) or torch._guards.detect_fake_mode()
    with fake_mode, _KeepContiguous():
        return drop_noop_casts(make_fx(gm, pre_dispatch=True)(*_placeholder_values(gm)))


def input_fake_mode(gm: torch.fx.GraphModule):
    """The fake mode of the fake tensors Dynamo's ``gm`` takes, None when it takes none."""
    return next((v.fake_mode for v in _placeholder_values(gm) if isinstance(v, FakeTensor)), None)


class _KeepContiguous(TorchFunctionMode):
    """Trace ``Tensor.contiguous`` as an ``aten.contiguous`` node even when the traced tensor is
    contiguous already (``Tensor.contiguous`` returns it then, before any op is dispatched, so
    make_fx would record nothing). Whether a copy is needed is decided again, with the strides
    AOTAutograd sees: those can differ from Dynamo's, when a fused op or a decomposition lays its
    output out otherwise (offline, SDPA's decomposition returns another layout than its fake
    kernel), and a dropped copy there turns the next linear into a batched matmul."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.contiguous:
            return _contiguous(*args, **(kwargs or {}))
        return func(*args, **(kwargs or {}))


def _contiguous(tensor, memory_format=torch.contiguous_format):
    return aten.contiguous.default(tensor, memory_format=memory_format)


def drop_noop_casts(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Remove casts to the dtype a tensor already has. ``x.to(torch.float32)`` of a float32 ``x``
    returns ``x`` itself, so make_fx records the cast and every later use of ``x`` (the residual
    stream, say) reads the cast node: the norm's intermediate would seem to have outside users."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and not node.kwargs and _casts_to_own_dtype(node):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.recompile()
    return gm


def _casts_to_own_dtype(node) -> bool:
    if node.target == aten.to.dtype and len(node.args) == 2:
        source, dtype = node.args
    elif node.target == aten.type_as.default:
        source, other = node.args
        dtype = other.meta["val"].dtype
    else:
        return False
    return source.meta["val"].dtype == dtype


def specialize_norm_epsilons(dynamo_gm: torch.fx.GraphModule, aten_gm: torch.fx.GraphModule):
    """Restart Dynamo with every norm epsilon specialized, if any is a graph input.

    With ``dynamic=True`` Dynamo makes a module's float attribute (``variance_epsilon``) a graph
    input, read with ``aten.item``; airfuse's norms take epsilon as a constant attribute. Baking the
    value seen now would be wrong once it changes, so the float is specialized the way torch's own
    ``tensorify_python_scalars`` does it: Dynamo restarts, makes it a constant and guards on its value.
    Only floats in an epsilon position (added to a mean before an rsqrt, or ``aten.rms_norm``'s eps)
    are specialized; others stay inputs."""
    placeholders = dict(zip(aten_gm.graph.find_nodes(op="placeholder"), _placeholder_values(dynamo_gm), strict=True))
    names = []
    for item in aten_gm.graph.find_nodes(op="call_function", target=aten.item.default):
        source = item.args[0]
        value = placeholders.get(source)
        if value is None or value.item_memo is None or not any(_is_epsilon_use(user, item) for user in item.users):
            continue
        names.append(value.item_memo.node._expr.name)
    if names:
        for name in names:
            TensorifyState.specialize(name)
        raise TensorifyScalarRestartAnalysis


def _is_epsilon_use(user, item) -> bool:
    if user.target == aten.rms_norm.default:
        return user.args[3:4] == (item,)
    return user.target == aten.add.Tensor and any(u.target == aten.rsqrt.default for u in user.users)


def _placeholder_values(gm):
    return [node.meta["example_value"] for node in gm.graph.find_nodes(op="placeholder")]
