"""airfuse's fused CPU kernels (csrc/cpu, built into ``build/libairfuse_cpu.so`` by ``make twin``).

Every ``torch.ops.airfuse.<op>`` CPU kernel is the op's Python input checks, shared with its fake
impl so both refuse bad input with the same message, followed by the C++ kernel, registered as the
CPU dispatch of ``torch.ops.airfuse_cpu.<op>`` (same schema, defined in Python from the op
definition). The library is loaded when airfuse is imported; if it is missing, importing still
works (the set-up imports airfuse before it builds anything) and every airfuse CPU kernel raises
an error saying how to build it.
"""

from pathlib import Path

import torch

from .opdef import OpDefinition

NAMESPACE = "airfuse_cpu"
LIBRARY = Path(__file__).resolve().parent.parent / "build" / "libairfuse_cpu.so"

_LIB = torch.library.Library(NAMESPACE, "DEF")
_loaded = False
_KERNELS = {}  # op name -> its CPU kernel (checked_kernel's), for callers already below the dispatcher


def define(op: OpDefinition):
    """Define ``torch.ops.airfuse_cpu.<op>`` with the op's schema; its CPU kernel comes from the library."""
    _LIB.define(op.name + op.schema)


def load():
    """Load the library once every ``airfuse_cpu`` schema is defined (airfuse/ops/__init__.py)."""
    global _loaded
    if LIBRARY.exists() and not _loaded:
        torch.ops.load_library(str(LIBRARY))
        _loaded = True


def checked_kernel(op: OpDefinition, check):
    """The CPU kernel of ``op``: ``check(*inputs, *attrs)`` then the fused C++ kernel."""
    native = getattr(getattr(torch.ops, NAMESPACE), op.name).default
    inputs, defaults = len(op.inputs), tuple(attr.default for attr in op.attrs)

    def kernel(*args):
        # The dispatcher leaves out trailing attrs that equal their defaults.
        args += defaults[len(args) - inputs:]
        check(*args)
        if not _loaded:
            raise RuntimeError(
                f"{op.public_name}: airfuse's CPU kernels ({LIBRARY}) are not built; run `make setup twin` in the airfuse "
                "checkout (or `cmake -S . -B build && cmake --build build -j2`)"
            )
        return native(*args)

    kernel.__name__ = f"{op.name}_cpu"
    kernel.check = check
    _KERNELS[op.name] = kernel
    return kernel


def cpu_kernel(op: OpDefinition):
    """What ``torch.ops.airfuse.<op>`` runs on CPU tensors below Autograd, without the dispatch
    into Python that reaches it: ``kernel.check(*inputs, *attrs)`` is the op's input checks, and
    ``native_kernel(op)`` the C++ kernel they guard (the offline GE executor calls them directly)."""
    return _KERNELS[op.name]


def native_kernel(op: OpDefinition):
    """The fused C++ kernel of ``op`` (``torch.ops.airfuse_cpu.<op>``), or None when the library
    is not built (then ``cpu_kernel(op)`` raises the error saying how to build it)."""
    return getattr(getattr(torch.ops, NAMESPACE), op.name).default if _loaded else None
