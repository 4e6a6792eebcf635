"""airfuse's fused CPU kernels (csrc/cpu): ``airfuse/lib/libairfuse_cpu.so`` in an installed package,
``build/libairfuse_cpu.so`` (``make twin``) in a source checkout (``airfuse.libraries``).

Every ``torch.ops.airfuse.<op>`` CPU kernel is the op's Python input checks, shared with its fake
impl so both refuse bad input with the same message, followed by the C++ kernel, registered as the
CPU dispatch of ``torch.ops.airfuse_cpu.<op>`` (same schema, defined in Python from the op
definition). A few ``airfuse_cpu`` ops have no ``airfuse`` op: an op fused with what an eager
caller does next with its outputs (``fused_kernel``), out of every traced graph. The library is
loaded when airfuse is imported; if it is missing, importing still works (the set-up imports
airfuse before it builds anything) and every airfuse CPU kernel raises an error saying how to
build it.

The library holds the kernels compiled for several instruction sets (DEFAULT, AVX2, AVX512, as
ATen names them) and uses the one matching ATen's own choice (``torch.backends.cpu.get_cpu_capability()``,
which ``ATEN_CPU_CAPABILITY`` lowers); ``use_capability`` switches for a while (tests, benchmarks).
"""

import contextlib
from pathlib import Path

import torch

from . import libraries
from .opdef import OpDefinition

NAMESPACE = "airfuse_cpu"
LIBRARY = libraries.library("airfuse_cpu")

_LIB = torch.library.Library(NAMESPACE, "DEF")
_loaded = False
_mismatch = None  # why the library cannot be loaded into this torch (airfuse.libraries.torch_mismatch)
_KERNELS = {}  # op name -> its CPU kernel (checked_kernel's), for callers already below the dispatcher


def define(op: OpDefinition):
    """Define ``torch.ops.airfuse_cpu.<op>`` with the op's schema; its CPU kernel comes from the library."""
    _LIB.define(op.name + op.schema)


def load():
    """Load the library once every ``airfuse_cpu`` schema is defined (airfuse/ops/__init__.py)."""
    global _loaded, _mismatch
    if _loaded or not LIBRARY.exists():
        return
    _mismatch = libraries.torch_mismatch(LIBRARY, torch.__version__, torch._C._GLIBCXX_USE_CXX11_ABI)
    if _mismatch is None:
        torch.ops.load_library(str(LIBRARY))
        _loaded = True


def _not_loaded() -> str:
    if _mismatch:
        return f"airfuse's CPU kernels cannot be loaded: {_mismatch}"
    return (f"airfuse's CPU kernels ({LIBRARY}) are not built; run `make setup twin` in the airfuse checkout "
            "(or `cmake -S . -B build && cmake --build build -j2`)")


def _native_control(name):
    if not _loaded:
        raise RuntimeError(f"airfuse CPU kernels: {name}: {_not_loaded()}")
    return getattr(getattr(torch.ops, NAMESPACE), name)


def capability() -> str:
    """The instruction-set variant the CPU kernels run: DEFAULT, AVX2 or AVX512."""
    return _native_control("capability")()


def capabilities() -> list[str]:
    """The variants this build has that this CPU can run, lowest first."""
    return list(_native_control("capabilities")())


def stream_bytes(kernel: str) -> int:
    """The bytes a call of ``kernel`` (a ``torch.ops.airfuse_cpu`` kernel's name) moves (inputs and
    outputs) from which the AVX2 and AVX512 variants write its outputs with streaming (non-temporal)
    stores, past the caches (csrc/cpu/vec_io.h): rope's and rms_norm's backward kernels from lower
    sizes than the others (kKernelStreamBytes in csrc/cpu/kernels.h, the table the kernels read
    too)."""
    return _native_control("stream_bytes")(kernel)


@contextlib.contextmanager
def use_capability(name: str):
    """Run the CPU kernels' ``name`` variant inside the block (an error if this build or CPU lacks it)."""
    previous = capability()
    _native_control("set_capability")(name)
    try:
        yield
    finally:
        _native_control("set_capability")(previous)


# How many argument signatures each op remembers as checked; a model uses a handful.
_REMEMBERED = 256


def checked_kernel(op: OpDefinition, check):
    """The CPU kernel of ``op``: ``check(*inputs, *attrs)`` then the fused C++ kernel.

    The checks read only each tensor's dtype, shape and device and each attr's value, so a call
    whose signature (those, and the attrs' types) already passed skips them: a set look-up instead
    of a few microseconds of Python. A signature that fails is never remembered, so bad input
    always runs the checks and gets their message."""
    kernel = _checked(op, check, op.name)
    _KERNELS[op.name] = kernel
    return kernel


def fused_kernel(op: OpDefinition, check, name: str, extra_inputs: str):
    """The kernel of ``torch.ops.airfuse_cpu.<name>``, defined here: ``op`` fused with what its
    caller does next with the outputs, taking ``extra_inputs`` (schema text) after op's inputs (op
    has no attrs). It runs ``check`` on op's own inputs, as op's kernel does, so bad input gets op's
    message. No op definition nor IR: only eager callers take it, never a traced graph (e.g.
    add_rms_norm's backward: rms_norm_backward_add)."""
    assert not op.attrs, f"{op.name}: fused_kernel appends inputs after the schema's, so no attrs"
    _LIB.define(name + op.schema.replace(") ->", f", {extra_inputs}) ->", 1))
    return _checked(op, check, name)


def _checked(op: OpDefinition, check, name: str):
    """``torch.ops.airfuse_cpu.<name>`` behind ``check`` on op's inputs and attrs, remembered by signature."""
    native = getattr(getattr(torch.ops, NAMESPACE), name).default
    inputs, defaults = len(op.inputs), tuple(attr.default for attr in op.attrs)
    checked = inputs + len(defaults)
    passed = set()

    def kernel(*args):
        # The dispatcher leaves out trailing attrs that equal their defaults.
        args += defaults[len(args) - inputs:]
        signature = _signature(args[:checked])
        if signature not in passed:
            check(*args[:checked])
            if len(passed) >= _REMEMBERED:
                passed.clear()
            passed.add(signature)
        if not _loaded:
            raise RuntimeError(f"{op.public_name}: {_not_loaded()}")
        return native(*args)

    kernel.__name__ = f"{name}_cpu"
    return kernel


def _signature(args) -> tuple:
    """What the input checks read of ``args``; list attrs (unhashable) as tuples. (A list
    comprehension: a generator expression costs a resumption per argument, a quarter more.)"""
    return tuple([
        (arg.dtype, arg.shape, arg.device) if isinstance(arg, torch.Tensor)
        else (type(arg), tuple(arg) if isinstance(arg, list) else arg)
        for arg in args
    ])


def cpu_kernel(op: OpDefinition):
    """What ``torch.ops.airfuse.<op>`` runs on CPU tensors below Autograd (its input checks and
    the C++ kernel), without the dispatch into Python that reaches it: the offline GE executor,
    which runs there, calls it directly."""
    return _KERNELS[op.name]
