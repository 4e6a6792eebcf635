"""A stand-in for ``torch_npu.npu.NPUGraph``: capture records the kernels a function launches,
replay runs them again on the CPU, on whatever the captured buffers hold by then.

On an NPU, ops launched on a capturing stream do not run: their kernels are recorded with the
addresses of their inputs and outputs, and ``replay()`` runs those kernels again. The stand-in
keeps that contract on CPU tensors, which stand for the NPU's memory:

- an op that computes (a kernel on the NPU) is recorded, not run: its outputs are allocated with
  the shapes its meta kernel gives, filled with NaN where the dtype has one (what they hold before
  a replay is undefined on an NPU), and kept alive by the graph as its private memory pool does;
- an op that only allocates (``empty*``), makes a view or sets a tensor's storage runs at once, as it
  launches no kernel;
- an op that must read device data on the host (``.item()``, an output shape that depends on the
  data, as ``nonzero`` or a boolean mask index) is refused, as capture on an NPU refuses a
  synchronization;
- an op that writes an argument while reading another, partly overlapping view of the same memory is
  refused: its result would depend on the order its kernel runs in;
- ``replay()`` runs each recorded op on the recorded tensors and writes its results into the
  recorded outputs; an op that mutates an argument mutates it again, on every replay.
"""

import contextlib
import math
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map_only

_ALLOCATION_ONLY = {
    torch.ops.aten.empty.memory_format,
    torch.ops.aten.empty_like.default,
    torch.ops.aten.empty_strided.default,
    torch.ops.aten.new_empty.default,
    torch.ops.aten.new_empty_strided.default,
}
# Ops that only set a tensor's metadata (its storage, its size) and launch no kernel; with them
# ``_unsafe_view``, a view whose schema does not say so.
_METADATA_ONLY = {torch.ops.aten.set_, torch.ops.aten.resize_, torch.ops.aten._unsafe_view}
CAPTURE_ERROR_MODES = ("global", "thread_local", "relaxed")

# Every graph that captured, so that tensors can be rebuilt over its memory by address
# (``torch_npu._C._construct_storage_from_data_pointer``) while the graph lives.
_LIVE_GRAPHS = weakref.WeakSet()


class RecordedCall:
    """One kernel launch: the op, its arguments (the captured tensors themselves) and the
    outputs it writes on replay (``None`` where an output is one of its arguments)."""

    def __init__(self, func, args, kwargs, outputs):
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs  # one entry per declared return

    def replay(self):
        results = _per_return(self.func, self.func(*self.args, **self.kwargs))
        for recorded, result in zip(self.outputs, results):
            if recorded is not None:
                for buffer, value in zip(tree_flatten(recorded)[0], tree_flatten(result)[0]):
                    buffer.copy_(value)


class NPUGraph:
    """``capture_begin``/``capture_end`` around the launches to record, ``replay()``, ``reset()``."""

    def __init__(self):
        self.calls = []
        self._storages = {}
        self._capturing = False
        self._captured = False

    def capture_begin(self, pool=None, capture_error_mode="global"):
        # ``pool`` shares memory between graphs on an NPU; each stand-in graph keeps its own buffers.
        if capture_error_mode not in CAPTURE_ERROR_MODES:
            raise ValueError(f"NPUGraph.capture_begin: capture_error_mode must be one of {CAPTURE_ERROR_MODES}, "
                             f"got {capture_error_mode!r}")
        if self._capturing or self._captured:
            raise RuntimeError("NPUGraph.capture_begin: this graph has already captured; reset() it first")
        self._capturing = True
        _LIVE_GRAPHS.add(self)

    def capture_end(self):
        if not self._capturing:
            raise RuntimeError("NPUGraph.capture_end: no capture in progress")
        self._capturing = False
        self._captured = True

    def replay(self):
        if not self._captured:
            raise RuntimeError("NPUGraph.replay: nothing captured")
        with torch.no_grad():
            for call in self.calls:
                call.replay()

    def reset(self):
        self.calls = []
        self._storages = {}
        self._captured = False
        _LIVE_GRAPHS.discard(self)

    def debug_dump(self, path):
        with open(path, "w") as dump:
            for call in self.calls:
                dump.write(f"{call.func}\n")

    def super_kernel_optimize(self, **options):
        raise RuntimeError("NPUGraph.super_kernel_optimize needs an Ascend NPU with CANN; airfuse is running "
                           "TorchAir's npugraph_ex mode offline (no NPU, no CANN)")

    def keep(self, tree):
        """Hold the memory of every tensor in ``tree`` for as long as the graph lives."""
        for tensor in tree_flatten(tree)[0]:
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                self._storages.setdefault(storage.data_ptr(), storage)

    def storage_at(self, data_ptr):
        return self._storages.get(data_ptr)

    def record(self, call):
        self.keep((call.args, call.kwargs, call.outputs))
        self.calls.append(call)


def storage_at(data_ptr, nbytes):
    """The memory a live captured graph holds at ``data_ptr`` (the stand-in's memory is the CPU's,
    and only a captured graph's buffers can be found again by address)."""
    for graph in list(_LIVE_GRAPHS):
        storage = graph.storage_at(data_ptr)
        if storage is not None:
            if storage.nbytes() < nbytes:
                raise RuntimeError(f"torch_npu._C._construct_storage_from_data_pointer: {nbytes} bytes asked at "
                                   f"{data_ptr:#x}, the captured buffer there has {storage.nbytes()}")
            return storage
    raise RuntimeError(f"torch_npu._C._construct_storage_from_data_pointer: {data_ptr:#x} is no buffer of a live "
                       "captured NPUGraph (the offline stand-in rebuilds tensors only over captured memory)")


class _Capture(TorchDispatchMode):
    """Records into ``graph`` instead of running, per the module docstring."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if torch.Tag.data_dependent_output in func.tags:
            raise _host_sync(func)
        if func in _ALLOCATION_ONLY or func.is_view or func.overloadpacket in _METADATA_ONLY:
            outputs = func(*args, **kwargs)
            self.graph.keep((args, outputs))
            return outputs
        _refuse_partial_overlap(func, args, kwargs)
        results, recorded = self._outputs(func, args, kwargs)
        self.graph.record(RecordedCall(func, args, kwargs, recorded))
        return results

    @staticmethod
    def _outputs(func, args, kwargs):
        """What the call returns now (its new buffers, or its arguments where it writes them) and
        the buffers replay fills (``None`` for returns that are arguments)."""
        schema = func._schema
        try:
            returns = _per_return(func, func(*_to_meta(args), **_to_meta(kwargs)))
        except NotImplementedError as error:
            # An op whose output shape may depend on data (nonzero, a boolean mask index) has a meta
            # kernel only for the calls where it does not.
            if torch.Tag.dynamic_output_shape in func.tags:
                raise _host_sync(func) from error
            raise RuntimeError(f"NPUGraph capture: {func} has no meta kernel, so the stand-in cannot allocate "
                               "its outputs without running it") from error
        arguments = dict(zip((a.name for a in schema.arguments), args))
        arguments.update(kwargs)
        results, recorded = [], []
        for declared, value in zip(schema.returns, returns):
            aliased = _aliased_argument(declared, schema, arguments)
            if aliased is not None:
                results.append(aliased)
                recorded.append(None)
            else:
                buffers = tree_map_only(torch.Tensor, _undefined_like, value)
                results.append(buffers)
                recorded.append(buffers)
        if not results:
            return None, recorded
        return (results[0] if len(results) == 1 else tuple(results)), recorded


def _refuse_partial_overlap(func, args, kwargs):
    """An op that writes one argument while reading another view of the same memory computes what
    its kernel's order makes of it (ATen's CPU loop and an NPU kernel's tiles differ); PyTorch
    refuses such calls where it can tell, and so does the stand-in, always."""
    arguments = dict(zip((a.name for a in func._schema.arguments), args))
    arguments.update(kwargs)
    written = [a.name for a in func._schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    for name in written:
        target = arguments.get(name)
        if not isinstance(target, torch.Tensor):
            continue
        for other_name, other in arguments.items():
            if other_name != name and isinstance(other, torch.Tensor) and _partially_overlap(target, other):
                raise RuntimeError(
                    f"{func} writes {name!r} while reading {other_name!r}, another view of the same memory: the "
                    "result depends on the order the kernel runs in (an in-place rewrite, such as TorchAir's "
                    "reinplace_inplaceable_ops_pass, must not make such a call)"
                )


def _byte_range(tensor):
    if tensor.numel() == 0:
        return 0, 0
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    start = tensor.storage_offset() * tensor.element_size()
    return start, start + (last + 1) * tensor.element_size()


def _partially_overlap(a, b):
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    same_view = a.storage_offset() == b.storage_offset() and a.shape == b.shape and a.stride() == b.stride()
    (a_start, a_end), (b_start, b_end) = _byte_range(a), _byte_range(b)
    return not same_view and a_start < b_end and b_start < a_end


def _host_sync(func):
    return RuntimeError(f"{func} reads device data on the host (a synchronization), which an aclgraph capture "
                        "refuses: the captured graph must not depend on tensor values")


def _aliased_argument(declared, schema, arguments):
    if declared.alias_info is None:
        return None
    for argument in schema.arguments:
        if argument.alias_info is not None and argument.alias_info.before_set & declared.alias_info.before_set:
            return arguments[argument.name]
    raise RuntimeError(f"NPUGraph capture: {schema.name} returns an alias of no argument")


def _to_meta(tree):
    def meta(tensor):
        return torch.empty_strided(tensor.size(), tensor.stride(), dtype=tensor.dtype, device="meta")

    tree = tree_map_only(torch.Tensor, meta, tree)
    if isinstance(tree, dict) and "device" in tree:
        tree = {**tree, "device": torch.device("meta")}
    return tree


def _undefined_like(meta):
    buffer = torch.empty_strided(meta.size(), meta.stride(), dtype=meta.dtype, device="cpu")
    if buffer.is_floating_point() or buffer.is_complex():
        buffer.fill_(math.nan)
    return buffer


def _per_return(func, value):
    """An op's result as one entry per return its schema declares (a ``Tensor[]`` return is one)."""
    return [value] if len(func._schema.returns) == 1 else list(value or ())


@contextlib.contextmanager
def capturing(graph, pool=None, capture_error_mode="global"):
    """``torch_npu.npu.graph``'s body: what runs inside is recorded into ``graph``."""
    graph.capture_begin(pool=pool, capture_error_mode=capture_error_mode)
    try:
        with _Capture(graph):
            yield graph
    finally:
        graph.capture_end()
