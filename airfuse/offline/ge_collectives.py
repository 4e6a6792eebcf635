"""GE's HCCL collectives on the CPU: ``HcomAllGather``, ``HcomReduceScatter``, ``HcomAllReduce``
run through torch.distributed's process group (gloo here), for the offline GE executor.

TorchAir converts ``_c10d_functional`` collectives (what DTensor's redistributions become in a
compiled graph: tensor and sequence parallel plans) to these nodes. Off an NPU, TorchAir names the
group ``tag=<tag>;rank_list=<r0,r1,...>`` (its ``hcom_utils.encode_pg_tag_ranklist``, for process
groups on the CPU), which resolves back to the process group that traced the graph. Semantics
are the GE prototypes' (``HcomAllGather`` etc. in TorchAir's ``ge_apis``): ranks' tensors joined or
split along dim 0, ``reduction`` one of sum/prod/max/min, dtypes as the prototype lists them.
``fusion``/``fusion_id`` only tell GE which collectives it may merge into one launch: no effect on
values, so they are read and not acted on.
"""

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d

_REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_GATHER_DTYPES = (torch.float32, torch.int32, torch.int8, torch.int16, torch.float16, torch.int64, torch.uint64,
                  torch.uint8, torch.uint16, torch.uint32, torch.float64)
_REDUCE_DTYPES = (torch.float32, torch.int32, torch.int8, torch.int16, torch.float16)


def _check(condition, message):
    if not condition:
        raise ValueError(message() if callable(message) else message)


def _process_group(node):
    """The process group named by the node's ``group`` attr, and the rank count the node expects."""
    group = node.str("group")
    fields = dict(field.split("=", 1) for field in group.split(";") if "=" in field)
    _check(
        dist.is_initialized() and {"tag", "rank_list"} <= fields.keys(),
        lambda: f"group {group!r}: the offline executor runs collectives over a CPU process group that TorchAir "
        "named tag=...;rank_list=... (torch.distributed initialized with gloo); HCCL groups need an NPU",
    )
    ranks = [int(rank) for rank in fields["rank_list"].split(",")]
    process_group = distributed_c10d._find_pg_by_ranks_and_tag(fields["tag"], ranks)
    _check(process_group is not None, lambda: f"group {group!r}: no such process group in this process")
    return process_group, len(ranks)


def _fusion_attrs(node):
    node.int("fusion")
    node.int("fusion_id")


def _dtype(x, allowed):
    _check(x.dtype in allowed, lambda: f"x has dtype {x.dtype}; the IR prototype takes {', '.join(map(str, allowed))}")


def hcom_all_gather(node, x):
    process_group, group_size = _process_group(node)
    rank_size = node.int("rank_size")
    _fusion_attrs(node)
    _check(rank_size == group_size, lambda: f"rank_size {rank_size} != the group's {group_size} ranks")
    _dtype(x, _GATHER_DTYPES)
    y = x.new_empty((x.shape[0] * rank_size, *x.shape[1:]))
    dist.all_gather_into_tensor(y, x.contiguous(), group=process_group)
    return y


def hcom_reduce_scatter(node, x):
    process_group, group_size = _process_group(node)
    rank_size = node.int("rank_size")
    reduction = node.str("reduction")
    _fusion_attrs(node)
    _check(rank_size == group_size, lambda: f"rank_size {rank_size} != the group's {group_size} ranks")
    _check(reduction in _REDUCE_OPS, lambda: f"reduction {reduction!r} is not one of {', '.join(_REDUCE_OPS)}")
    _check(x.dim() >= 1 and x.shape[0] % rank_size == 0, lambda: f"x's dim 0 ({list(x.shape)}) must split into {rank_size} ranks")
    _dtype(x, _REDUCE_DTYPES)
    y = x.new_empty((x.shape[0] // rank_size, *x.shape[1:]))
    dist.reduce_scatter_tensor(y, x.contiguous(), op=_REDUCE_OPS[reduction], group=process_group)
    return y


def hcom_all_reduce(node, x):
    process_group, _ = _process_group(node)
    reduction = node.str("reduction")
    _fusion_attrs(node)
    _check(reduction in _REDUCE_OPS, lambda: f"reduction {reduction!r} is not one of {', '.join(_REDUCE_OPS)}")
    _dtype(x, _REDUCE_DTYPES)
    y = x.clone(memory_format=torch.contiguous_format)
    dist.all_reduce(y, op=_REDUCE_OPS[reduction], group=process_group)
    return y


COLLECTIVES = {
    "HcomAllGather": hcom_all_gather,
    "HcomAllReduce": hcom_all_reduce,
    "HcomReduceScatter": hcom_reduce_scatter,
}
