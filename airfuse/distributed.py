"""airfuse ops on DTensors: one DTensor sharding rule per op, derived from its ``Layout``.

``import airfuse`` registers them (``register_sharding_rules``) where torch.distributed is built,
so tensor- and sequence-parallel plans (``parallelize_module``) run airfuse ops on each device's
shard. What a rule offers DTensor, per mesh dim (DTensor takes their product over a mesh's dims and
redistributes an input only when no offer matches it):

- everything replicated;
- every dim of the first input but ``whole_dim`` split (``Shard(d)``): the tensors that have that
  dim split with it, those broadcast along it (size 1, rope's cos/sin on the heads) and the
  per-feature inputs (gamma) replicated, the per-feature outputs (dgamma, a sum over the rows)
  partial sums (``Partial``);
- for ops linear in some inputs (``linear_in``): partial sums of those inputs, the others
  replicated, give partial sums of every output.
"""

import functools

import torch

from .ops import ALL_OPS


def whole_dim_of(op, arguments: dict, rank: int) -> int | None:
    """The layout's ``whole_dim`` as an index in [0, rank), None for an elementwise op; ValueError
    for an attr out of range (the op's own check then reports it)."""
    whole = op.layout.whole_dim
    if whole is None:
        return None
    if isinstance(whole, str):
        whole = arguments[whole]
    if not -rank <= whole < rank:
        raise ValueError(whole)
    return whole % rank


@functools.cache
def _schema_arguments(signature: str) -> list:
    return torch._C.parse_schema(signature).arguments


def _bind(op, args, kwargs) -> dict:
    """The op's arguments by schema name, defaults filled in."""
    bound = {}
    for index, argument in enumerate(_schema_arguments(op.qualname + op.schema)):
        if index < len(args):
            bound[argument.name] = args[index]
        elif argument.name in kwargs:
            bound[argument.name] = kwargs[argument.name]
        else:
            bound[argument.name] = argument.default_value
    return bound


def offered_placements(op, args, kwargs) -> list:
    """The (output placements, input placements) pairs ``op`` runs with, for
    ``register_sharding``: inputs in schema order, None for non-tensors. ``args`` and ``kwargs``
    are the call's, tensors given as DTensorSpecs (shape and placements; no data)."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    layout = op.layout
    arguments = _bind(op, args, kwargs)
    names = list(arguments)
    tensors = {name: arguments[name] for name in op.tensor_args if hasattr(arguments[name], "shape")}
    first = tensors[op.inputs[0].name]
    rank = len(first.shape)
    outputs = [p.name for p in op.outputs]

    def inputs(placement_of):
        return [placement_of(name) if name in tensors else None for name in names]

    offers = [([Replicate()] * len(outputs), inputs(lambda name: Replicate()))]
    try:
        whole = whole_dim_of(op, arguments, rank)
    except ValueError:
        return offers  # run whole, where the op's input checks refuse the attr with their message
    for dim in range(rank):
        if dim == whole:
            continue

        def split_along(name, dim=dim):
            spec = tensors[name]
            if name in layout.per_feature or spec.shape[dim] != first.shape[dim]:
                return Replicate()
            return Shard(dim)

        offers.append(
            ([Partial() if name in layout.per_feature else Shard(dim) for name in outputs], inputs(split_along))
        )
    if layout.linear_in:
        offers.append(
            ([Partial()] * len(outputs), inputs(lambda name: Partial() if name in layout.linear_in else Replicate()))
        )
    return offers


def register_sharding_rules():
    """Register every op's rule with DTensor (``torch.distributed.tensor.experimental.register_sharding``);
    an op defined without a layout has none, and DTensor refuses it as it refuses any unknown op."""
    from torch.distributed.tensor.experimental import register_sharding

    for op in ALL_OPS.values():
        if op.layout is None:
            continue
        overload = getattr(torch.ops.airfuse, op.name).default

        def rule(*args, op=op, **kwargs):
            return offered_placements(op, args, kwargs)

        register_sharding(overload)(rule)
