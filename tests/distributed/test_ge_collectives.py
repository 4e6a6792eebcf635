"""The offline GE executor's HCCL collectives (airfuse/offline/ge_collectives.py) on 2 gloo ranks,
in graphs built with TorchAir's own op builders, against torch.distributed's results."""

import pytest
import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d

import airfuse
from airfuse.offline.ge_executor import GeExecutionError, GeExecutor
from ranks import run_ranks

airfuse.import_torchair()
from torchair._ge_concrete_graph import ge_apis as ge  # noqa: E402
from torchair._ge_concrete_graph.hcom_utils import encode_pg_tag_ranklist  # noqa: E402
from torchair.ge._ge_graph import GeGraph, torch_type_to_ge_type  # noqa: E402


def _run(build, x):
    graph = GeGraph()
    with graph:
        data = ge.Data(index=0, dtype=torch_type_to_ge_type(x.dtype), shape=list(x.shape), placement="CPU")
        ge.NetOutput([build(data)])
    return GeExecutor(graph._proto).run([x])[0]


def _refusal(build, x):
    with pytest.raises(GeExecutionError) as refused:
        _run(build, x)
    return str(refused.value)


def _collectives(rank, world_size):
    world = distributed_c10d._get_default_group()
    group = encode_pg_tag_ranklist(distributed_c10d._get_group_tag(world), list(range(world_size)))
    x = torch.arange(12, dtype=torch.float32).reshape(4, 3) * (rank + 1)
    gathered = _run(lambda t: ge.HcomAllGather(t, rank_size=world_size, group=group), x)
    expected = torch.empty(8, 3)
    dist.all_gather_into_tensor(expected, x)
    torch.testing.assert_close(gathered, expected, rtol=0, atol=0)
    for reduction, op in (("sum", dist.ReduceOp.SUM), ("max", dist.ReduceOp.MAX)):
        scattered = _run(lambda t: ge.HcomReduceScatter(t, reduction=reduction, group=group, rank_size=world_size), x)
        expected = torch.empty(2, 3)
        dist.reduce_scatter_tensor(expected, x, op=op)
        torch.testing.assert_close(scattered, expected, rtol=0, atol=0)
        reduced = _run(lambda t: ge.HcomAllReduce(t, reduction=reduction, group=group, fusion=0), x)
        expected = x.clone()
        dist.all_reduce(expected, op=op)
        torch.testing.assert_close(reduced, expected, rtol=0, atol=0)
    # Every rank refuses the same inputs before communicating, so none waits on the other.
    return [
        _refusal(lambda t: ge.HcomAllReduce(t, reduction="sum", group=group), x.bfloat16()),
        _refusal(lambda t: ge.HcomAllGather(t, rank_size=world_size + 1, group=group), x),
        _refusal(lambda t: ge.HcomReduceScatter(t, reduction="sum", group=group, rank_size=world_size), x[:3]),
        _refusal(lambda t: ge.HcomAllReduce(t, reduction="sum", group="hccl_world_group"), x),
    ]


def test_collectives_equal_torch_distributed_and_refuse_what_the_prototypes_do():
    refusals = run_ranks(_collectives, 2, timeout=60)
    assert refusals[0] == refusals[1]
    bf16, rank_size, uneven, hccl_group = refusals[0]
    assert "HcomAllReduce" in bf16 and "bfloat16" in bf16 and "prototype" in bf16
    assert "rank_size 3" in rank_size
    assert "must split into 2 ranks" in uneven
    assert "hccl_world_group" in hccl_group and "NPU" in hccl_group
