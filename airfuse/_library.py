"""The ``torch.library`` registration of airfuse ops, derived from their op definitions."""

import torch

from . import cpu_kernels
from .opdef import NAMESPACE, OpDefinition

_LIB = torch.library.Library(NAMESPACE, "DEF")


def define(op: OpDefinition, check):
    """Define ``torch.ops.airfuse.<name>`` from ``op.schema``; its CPU kernel runs ``check`` (the
    input checks the fake impl also runs) and then the op's fused C++ kernel (airfuse/cpu_kernels.py)."""
    _LIB.define(op.name + op.schema)
    cpu_kernels.define(op)
    _LIB.impl(op.name, cpu_kernels.checked_kernel(op, check), "CPU")


def overload(op: OpDefinition) -> torch._ops.OpOverload:
    return getattr(torch.ops.airfuse, op.name).default
