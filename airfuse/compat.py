"""What differs between the torch releases airfuse supports (2.10 to 2.14), each difference in one
place with the release that made it. Nothing else in airfuse branches on versions.

Every function here gives the newest releases' behaviour and, where an older release differs,
what makes airfuse behave the same there.
"""

import contextlib
import functools

import torch

TORCH = tuple(int(part) for part in torch.__version__.split("+", 1)[0].split(".")[:2])


def pattern_arguments(search, trace_fn):
    """(``trace_fn`` to register ``search`` with, ``arguments(match)``: ``search``'s arguments by name
    in a match ``extra_check`` receives).

    Since torch 2.13 the pattern matcher gives ``extra_check`` every argument of the search
    function. Up to 2.12 it retraces the search function with the matched values before the check,
    so a ``scalar_workaround`` argument (a norm's epsilon) is a constant of that pattern unless it
    happens to equal the placeholder value, and is missing from the check's ``match.kwargs``. The
    retrace goes through ``trace_fn`` just before the check, so there the values it was given are
    the ones missing."""
    names = search.__code__.co_varnames[: search.__code__.co_argcount]
    if TORCH >= (2, 13):
        return trace_fn, lambda match: [match.kwargs[name] for name in names]
    traced = {}

    def tracing(fn, args, *rest, **options):
        traced.update(zip(names, args[len(args) - len(names):]))  # symbolic sizes come first, if any
        return trace_fn(fn, args, *rest, **options)

    return tracing, lambda match: [match.kwargs[name] if name in match.kwargs else traced[name] for name in names]


def replacement_options(name: str) -> dict:
    """Keyword arguments of ``register_replacement`` beyond the pattern itself: its name (for the
    pattern matcher's logs), which ``register_replacement`` takes since torch 2.12; 2.10 has no
    ``pattern_name`` and gets none."""
    return {"pattern_name": name} if TORCH >= (2, 12) else {}


@contextlib.contextmanager
def tracing_fake_mode(fake_mode):
    """Within it, Dynamo's tracing context (if any) names ``fake_mode``, the fake mode of the graph
    a backend was given, as its fake mode.

    The tracing context around a Dynamo backend holds a fake mode of its own (sharing the shape
    environment), not the one of the graph's placeholder values. Since torch 2.12
    ``detect_fake_mode`` takes the context's mode and ignores the inputs'; torch 2.10's asserts
    they are one mode, so make_fx and the pattern matcher fail on the graph with "fake mode ... from
    tracing context 0 doesn't match mode ... from fake tensor input". 2.11 (whose suite passes so; not tried without) is
    given 2.10's treatment, which on a release that takes the context's mode changes nothing."""
    context = torch._guards.TracingContext.try_get()
    if TORCH >= (2, 12) or context is None or fake_mode is None:
        yield
        return
    own_mode, context.fake_mode = context.fake_mode, fake_mode
    try:
        yield
    finally:
        context.fake_mode = own_mode

# torch.Stream.native_handle (and the c10::Stream::native_handle() of csrc/npu/platform.h) came
# with torch 2.11; a test comparing stream handles is skipped on 2.10, naming it.
HAS_STREAM_NATIVE_HANDLE = TORCH >= (2, 11)


def compile_target(fn):
    """``fn`` as ``torch.compile`` is to be given it to trace it.

    torch 2.10's Dynamo does not trace a function of torch's own handed to ``torch.compile``
    directly (``torch.compile(F.silu)`` runs it eagerly, even with ``fullgraph=True``, and a
    capture finds no graph); a Python function calling it is traced, the call inlined. 2.12 to
    2.14 trace it as it is; 2.11 (whose suite passes so; not tried without) is given 2.10's treatment."""
    if TORCH >= (2, 12) or isinstance(fn, torch.nn.Module):
        return fn

    def calling(*args, **kwargs):
        return fn(*args, **kwargs)

    return calling


def export_options() -> dict:
    """Keyword arguments ``torch.export.export`` is given beside the model and its inputs.

    Up to torch 2.12 a reshape of an expanded tensor with a dynamic dimension (Hugging Face's
    ``repeat_kv`` of grouped-query attention) leaves guards such as ``Min(8*seq, 16*seq) == 8*seq``
    that hold for every size but that 2.12's range analysis cannot prove, so ``torch.export`` with a
    ``Dim`` for the sequence raises ``ConstraintViolationError`` even for a model airfuse never
    touched; 2.13 adds no such guard. There they are kept as runtime asserts of the program instead.
    2.10 and 2.11 are given the same, which the releases since 2.13 do not need."""
    return {} if TORCH >= (2, 13) else {"prefer_deferred_runtime_asserts_over_guards": True}


def is_outer_redistribution(call) -> bool:
    """Whether ``call``, a ``DebugMode`` record of a DTensor redistribution, is the outer one: the
    redistribution DTensor's dispatch decided on for an op's input (the records of its steps nest
    inside it).

    Since torch 2.11 the record says so (``is_outer_call``). 2.10's record has no such attribute;
    there, as since, the outer record's argument is the input's position, an int (the steps' is
    the tensor), which ``DebugMode`` keeps as it is with ``store_original_args`` and else as its
    text."""
    if TORCH >= (2, 11):
        return call.is_outer_call
    return isinstance(call.arg, int) if hasattr(call, "arg") else call.arg_str.isdigit()


def trace_reduction_backward_from_the_gradient():
    """Have tracing (make_fx, AOTAutograd) take the gradient's zeros in the backward of a
    value-selecting reduction along a dim (topk, max, min, ...), as torch 2.12 does.

    Up to torch 2.11 ``value_selecting_reduction_backward`` scatters the gradient into
    ``at::zeros`` of the input's size, a tensor made from nothing; TorchAir's aclgraph converter
    compiles outside the fake mode, so there that zeros tensor is real among FakeTensors ("Please
    convert all Tensors to FakeTensors first": the top-k of MoE routing in a training step). Since
    2.12 it is ``grad.new_zeros``. For 2.10 and 2.11 the python dispatcher (on while torch traces)
    is given that kernel; eager autograd keeps torch's, which computes the same."""
    op = torch.ops.aten.value_selecting_reduction_backward.default
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    if TORCH >= (2, 12) or key in op.py_kernels:
        return

    @op.py_impl(key)
    def scatter_into_zeros_of_the_gradient(grad, dim, indices, sizes, keepdim):
        if not keepdim:
            grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
        return grad.new_zeros(sizes).scatter(dim, indices, grad)


def debug_mode(**options):
    """A ``torch.utils._debug_mode.DebugMode(**options)`` that records an op run on the output of a
    functional collective (an ``AsyncCollectiveTensor``: DTensor's local shard right after a
    redistribution) as an op on a real tensor, as torch 2.12 does.

    Up to torch 2.11 ``DebugMode`` records ops on real tensors, FakeTensors and DTensors only: an op
    on an ``AsyncCollectiveTensor`` runs unrecorded, and so do the ops it runs once it has waited
    for the collective (they run below the mode). A sequence-parallel norm right after the
    embedding's reduce-scatter computes its shard that way, so its forward and backward, run on the
    shard as on any release, were missing from 2.10's and 2.11's records. There such an op is
    recorded with its output; DebugMode's dispatch hooks (tensor hashes) are not run on it."""
    return _debug_mode_class(TORCH)(**options)


@functools.cache
def _debug_mode_class(release):
    from torch.utils import _debug_mode

    if release >= (2, 12):
        return _debug_mode.DebugMode
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._functional_collectives import AsyncCollectiveTensor
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    class RecordingCollectiveOutputs(_debug_mode.DebugMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            only_collective_outputs = types and all(issubclass(t, AsyncCollectiveTensor) for t in types)
            if not only_collective_outputs or not self.record_realtensor or isinstance(_get_current_dispatch_mode(), FakeTensorMode):
                return super().__torch_dispatch__(func, types, args, kwargs)
            kwargs = kwargs or {}
            call = _debug_mode._OpCall(func, args, kwargs, self.call_depth + 1, stack=self.record_stack_trace)
            self._record_call(call)
            result = func(*args, **kwargs)
            self._record_call_output(call, result)
            return result

    return RecordingCollectiveOutputs
