"""Every airfuse op on DTensors, over gloo: each placement its sharding rule offers runs on the
shards with no redistribution and gives the single-process result; a split the rule does not
offer (the dim an op reads whole) is redistributed by DTensor, and still right."""

import pytest
import torch
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.device_mesh import init_device_mesh
from torch.utils._debug_mode import DebugMode, _OpCall, _RedistributeCall

from airfuse import compat
from airfuse.distributed import offered_placements
from airfuse.ops import ALL_OPS
from ranks import run_ranks

# Rows split two ways are normalized the same way; the only float32 differences come from
# a Partial's sum (dgamma over two halves of the rows), a few roundings of the result.
RTOL, ATOL = 1e-5, 1e-6


def _randn(*shape, positive=False):
    t = torch.randn(*shape)
    return t.abs() + 0.5 if positive else t


def _rstd(x):
    return (x.square().mean(-1, keepdim=True) + 1e-6).rsqrt()


def _samples(op_name):
    """The op's arguments by schema name: [batch, seq, hidden] activations, rope on
    [batch, heads, seq, head_dim] with per-position tables (broadcast over the heads)."""
    torch.manual_seed(0)
    x, other = _randn(4, 6, 16), _randn(4, 6, 16)
    gamma = _randn(16, positive=True)
    tables = dict(cos=_randn(2, 1, 6, 16), sin=_randn(2, 1, 6, 16))
    samples = {
        "rms_norm": lambda: dict(x=x, gamma=gamma, epsilon=1e-6),
        "rms_norm_backward": lambda: dict(dy=other, x=x, rstd=_rstd(x), gamma=gamma),
        "add": lambda: dict(x=x, y=other),
        "add_rms_norm": lambda: dict(x1=x, x2=other, gamma=gamma, epsilon=1e-6),
        "silu_mul": lambda: dict(a=x, b=other),
        "silu_mul_backward": lambda: dict(dy=_randn(4, 6, 16), a=x, b=other),
        "swiglu": lambda: dict(x=x, dim=-1),
        "swiglu_backward": lambda: dict(dy=_randn(4, 6, 8), x=x, dim=-1),
        "rope": lambda: dict(x=_randn(2, 4, 6, 16), **tables, mode="half"),
        "rope_backward": lambda: dict(dy=_randn(2, 4, 6, 16), **tables, mode="interleave"),
        "gelu": lambda: dict(x=x, approximate="tanh"),
        "gelu_backward": lambda: dict(dy=other, x=x, approximate="none"),
    }
    assert op_name in samples, f"op {op_name}: _samples in tests/distributed/test_sharding_rules.py has no sample for it"
    return samples[op_name]()


def _distribute(full, placement, mesh):
    if isinstance(placement, Partial):
        # Each rank holds its share: the partial sums add up to full exactly (halves are exact).
        return DTensor.from_local(full / mesh.size(), mesh, [placement])
    return distribute_tensor(full, mesh, [placement])


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _airfuse_redistributions(debug_mode) -> list:
    """The redistributions DTensor decided on for the inputs of an airfuse op (implicit ones)."""
    found, inside = [], None
    for call in debug_mode.operators:
        if inside is not None and call.call_depth <= inside:
            inside = None
        if isinstance(call, _OpCall):
            if inside is None and str(call.op).startswith("airfuse."):
                inside = call.call_depth
        elif isinstance(call, _RedistributeCall) and compat.is_outer_redistribution(call) and inside is not None:
            found.append(call.render([]))
    return found


def _run(op, sample, placements, mesh):
    """The op on DTensors placed as ``placements`` (schema order, None for non-tensors): outputs
    as full tensors, output placements, and the redistributions inside the op."""
    args = [
        _distribute(value, placement, mesh) if placement is not None else value
        for value, placement in zip(sample.values(), placements, strict=True)
    ]
    with DebugMode() as debug_mode:
        outputs = _as_tuple(getattr(torch.ops.airfuse, op.name)(*args))
    return (
        [out.full_tensor() for out in outputs],
        [tuple(out.placements) for out in outputs],
        _airfuse_redistributions(debug_mode),
    )


def _check_every_offer(rank, world_size, op_names):
    mesh = init_device_mesh("cpu", (world_size,))
    checked = []
    for name in op_names:
        op = ALL_OPS[name]
        sample = _samples(name)
        want = _as_tuple(getattr(torch.ops.airfuse, name)(*sample.values()))
        for outputs, inputs in offered_placements(op, tuple(sample.values()), {}):
            got, placements, redistributions = _run(op, sample, inputs, mesh)
            where = f"{name} with inputs {inputs}"
            assert not redistributions, f"{where}: redistributed {redistributions}"
            assert placements == [(p,) for p in outputs], f"{where}: outputs placed {placements}, rule says {outputs}"
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL, msg=lambda m: f"{where}: {m}")
            checked.append((name, tuple(map(str, inputs))))
    return checked


def test_every_op_has_a_rule_and_a_sample():
    assert all(op.layout is not None for op in ALL_OPS.values())
    for name in ALL_OPS:
        assert set(_samples(name)) == {a.name for a in torch._C.parse_schema(ALL_OPS[name].qualname + ALL_OPS[name].schema).arguments}


def test_the_rules_say_what_the_issue_asks():
    """Row-wise ops split every dim but the normalized one, gamma replicated, dgamma a Partial sum
    where rows are split; swiglu splits every dim but its split dim; elementwise ops split all."""
    def offers(name, **overrides):
        sample = {**_samples(name), **overrides}
        return [(tuple(map(str, outs)), tuple(map(str, ins))) for outs, ins in offered_placements(ALL_OPS[name], tuple(sample.values()), {})]

    assert offers("rms_norm") == [
        (("R", "R"), ("R", "R", "None")),
        (("S(0)", "S(0)"), ("S(0)", "R", "None")),
        (("S(1)", "S(1)"), ("S(1)", "R", "None")),
    ]
    assert offers("rms_norm_backward")[1:] == [
        (("S(0)", "P(sum)"), ("S(0)", "S(0)", "S(0)", "R")),
        (("S(1)", "P(sum)"), ("S(1)", "S(1)", "S(1)", "R")),
        (("P(sum)", "P(sum)"), ("P(sum)", "R", "R", "R")),
    ]
    assert [outs for outs, _ in offers("swiglu", dim=1)] == [("R",), ("S(0)",), ("S(2)",)]
    # rope's tables broadcast over the heads: split heads, tables replicated; split positions, tables too.
    assert offers("rope")[1:] == [
        (("S(0)",), ("S(0)", "S(0)", "S(0)", "None")),
        (("S(1)",), ("S(1)", "R", "R", "None")),
        (("S(2)",), ("S(2)", "S(2)", "S(2)", "None")),
        (("P(sum)",), ("P(sum)", "R", "R", "None")),
    ]
    assert [ins for _, ins in offers("add")] == [("R", "R"), ("S(0)", "S(0)"), ("S(1)", "S(1)"), ("S(2)", "S(2)"), ("P(sum)", "P(sum)")]


def test_every_offer_runs_on_shards_and_equals_one_process():
    names = list(ALL_OPS)
    checked = run_ranks(_check_every_offer, 2, names, timeout=90)
    assert checked[0] == checked[1]
    assert {name for name, _ in checked[0]} == set(names)


def _check_whole_dim_split(rank, world_size):
    """rms_norm with x split along its normalized dim: DTensor gathers it (the rule offers no such
    split), and the result is still the single-process one."""
    mesh = init_device_mesh("cpu", (world_size,))
    sample = _samples("rms_norm")
    want = torch.ops.airfuse.rms_norm(*sample.values())
    got, placements, redistributions = _run(ALL_OPS["rms_norm"], sample, [Shard(2), Replicate(), None], mesh)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=0, atol=0)
    return redistributions


def test_a_split_of_the_normalized_dim_is_gathered_first():
    redistributions = run_ranks(_check_whole_dim_split, 2, timeout=60)
    assert redistributions[0] and all("S(2) -> R" in r or "S(2)->R" in r for r in redistributions[0][:1]), redistributions[0]


def _check_two_dim_mesh(rank, world_size):
    """A 2 x 2 mesh: batch split on one mesh dim, sequence on the other, in one call."""
    mesh = init_device_mesh("cpu", (2, 2))
    sample = _samples("rms_norm_backward")
    want = torch.ops.airfuse.rms_norm_backward(*sample.values())
    args = [distribute_tensor(t, mesh, [Shard(0), Shard(1)]) for t in list(sample.values())[:3]]
    args.append(distribute_tensor(sample["gamma"], mesh, [Replicate(), Replicate()]))
    with DebugMode() as debug_mode:
        dx, dgamma = torch.ops.airfuse.rms_norm_backward(*args)
    assert not _airfuse_redistributions(debug_mode)
    assert tuple(dx.placements) == (Shard(0), Shard(1)) and tuple(dgamma.placements) == (Partial(), Partial())
    torch.testing.assert_close(dx.full_tensor(), want[0], rtol=0, atol=0)
    torch.testing.assert_close(dgamma.full_tensor(), want[1], rtol=RTOL, atol=ATOL)
    return True


def test_four_ranks_on_a_two_dim_mesh():
    assert run_ranks(_check_two_dim_mesh, 4, timeout=90) == [True] * 4
