"""The ``torch.library`` registration of airfuse ops, derived from their op definitions."""

import torch

from .opdef import NAMESPACE, OpDefinition

_LIB = torch.library.Library(NAMESPACE, "DEF")


def define(op: OpDefinition, cpu_kernel):
    """Define ``torch.ops.airfuse.<name>`` from ``op.schema`` and give it its CPU kernel."""
    _LIB.define(op.name + op.schema)
    _LIB.impl(op.name, cpu_kernel, "CPU")


def overload(op: OpDefinition) -> torch._ops.OpOverload:
    return getattr(torch.ops.airfuse, op.name).default
