"""The offline executor's folds (airfuse/offline/ge_folds.py): a linear's Transpose/Reshape/MatMul/
Reshape and chains of views run as one step, with the results of the unfolded plan bit for bit,
and its strictness: member errors and output checks name the member node, observe sees every node."""

import pytest
import torch

from airfuse.offline import ge_folds
from airfuse.offline.ge_executor import GeExecutionError, GeExecutor
from ge_graphs import build_graph, ge, ge_ir_pb2, ints, rand


def _linear(x, w, head=(-1, 8), tail=(2, 3, 5)):
    """Reshape(x) @ Transpose(w) then Reshape, as TorchAir converts F.linear (w: [out, in])."""
    product = ge.MatMul(ge.Reshape(x, ints(head)), ge.Transpose(w, ints([1, 0])), None)
    return ge.Reshape(product, ints(tail)) if tail is not None else product


def _folds(executor):
    return [call for _, call, *_ in executor._run_steps if isinstance(call, ge_folds.Fold)]


def _same_bits(graph, *inputs, folds):
    folded, unfolded = GeExecutor(graph), GeExecutor(graph, fold=False)
    assert len(_folds(folded)) == folds and not _folds(unfolded)
    for _ in range(2):  # the first run judges the fast function, the second uses it
        for a, b in zip(folded.run(list(inputs)), unfolded.run(list(inputs)), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)
    return folded


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_a_linear_folds_into_one_step_with_the_same_bits(dtype):
    x, w = rand(2, 3, 8, dtype=dtype), rand(5, 8, dtype=dtype)
    executor = _same_bits(build_graph(_linear, x, w), x, w, folds=1)
    assert len(executor._run_steps) == 1
    [fold] = _folds(executor)
    assert list(fold.judged.values()) == [True]


def test_a_linear_whose_head_reshape_regroups_x_keeps_its_meaning():
    # [2, 3, 4, 2] -> [6, 8] is not F.linear of x itself: the fold reshapes x as the tail needs.
    x, w = rand(2, 3, 4, 2), rand(5, 8)
    _same_bits(build_graph(_linear, x, w), x, w, folds=1)


def test_a_linear_without_a_tail_and_one_of_non_contiguous_x():
    x, w = rand(4, 6), rand(5, 3)
    graph = build_graph(lambda a, b: _linear(ge.Transpose(ge.Reshape(a, ints([3, 8])), ints([1, 0])), b, head=(8, 3), tail=None), x, w)
    # The views before the head Reshape fold apart; the head copies the transposed view.
    _same_bits(graph, x, w, folds=2)


def test_a_chain_of_views_folds_and_a_value_read_twice_does_not():
    x = rand(2, 3, 4)

    def build(t):
        moved = ge.Unsqueeze(ge.Transpose(ge.Reshape(t, ints([2, 12])), ints([1, 0])), axes=[0])
        return [ge.Reshape(moved, ints([4, 6])), ge.Neg(ge.Identity(ge.Reshape(t, ints([24]))))]

    executor = _same_bits(build_graph(build, x), x, folds=2)
    assert sorted(node.type for node, *_ in executor._run_steps) == ["Identity", "Neg", "Reshape"]


def test_a_graph_output_or_a_value_with_other_readers_is_never_folded_away():
    x, w = rand(6, 8), rand(5, 8)

    def build(a, b):
        weight_t = ge.Transpose(b, ints([1, 0]))
        return [ge.MatMul(ge.Reshape(a, ints([6, 8])), weight_t, None), weight_t]

    _same_bits(build_graph(build, x, w), x, w, folds=0)


def _any_shape(graph):
    """``graph`` with its Data nodes declaring only their rank."""
    for op in graph.op:
        if op.type == "Data":
            op.output_desc[0].shape.dim[:] = [-1] * len(op.output_desc[0].shape.dim)
    return graph


def test_an_error_inside_a_fold_names_the_member_node_on_every_run():
    x, w = rand(2, 3, 8), rand(5, 8)
    executor = GeExecutor(_any_shape(build_graph(_linear, x, w)))
    executor.run([x, w])
    bad = rand(5, 7)
    for _ in range(2):
        with pytest.raises(GeExecutionError, match=r"node 'MatMul'.*contracted dims differ"):
            executor.run([x, bad])
    assert torch.equal(executor.run([x, w])[0], GeExecutor(build_graph(_linear, x, w), fold=False).run([x, w])[0])


def test_a_member_output_check_is_kept():
    x, w = rand(2, 3, 8), rand(5, 8)
    graph = build_graph(_linear, x, w)
    datas = {op.name for op in graph.op if op.type == "Data"}
    [head] = [op for op in graph.op if op.type == "Reshape" and op.input[0].split(":")[0] in datas]
    desc = head.output_desc[0]
    desc.attr["_meta"].s = b"Tensor(...)"
    desc.dtype = ge_ir_pb2.DataType.Value("DT_FLOAT16")
    executor = GeExecutor(graph)
    assert _folds(executor)
    with pytest.raises(GeExecutionError, match=rf"node '{head.name}'.*output 0 is torch.float32, the graph declares torch.float16"):
        executor.run([x, w])


def test_observe_sees_every_node_of_a_folded_plan():
    x, w = rand(2, 3, 8), rand(5, 8)
    executor = GeExecutor(build_graph(_linear, x, w))
    seen = []
    executor.run([x, w], observe=lambda node, inputs, outputs: seen.append(node.type))
    assert _folds(executor) and sorted(seen) == ["MatMul", "Reshape", "Reshape", "Transpose"]


def test_a_chain_of_views_is_replayed_for_each_layout_of_its_input():
    """A view chain's replay (as_strided for its views, the copying Reshape as it is) holds for the
    strides and storage offset it was made for: x with another layout gets the members' results too."""
    def build(t):
        return ge.Unsqueeze(ge.Reshape(ge.Transpose(t, ints([1, 0])), ints([2, 12])), axes=[0])

    graph = build_graph(build, rand(4, 6))
    folded, unfolded = GeExecutor(graph), GeExecutor(graph, fold=False)
    assert len(_folds(folded)) == 1
    contiguous, transposed, offset = rand(4, 6), rand(6, 4).t(), rand(5, 6)[1:]
    for x in [contiguous, transposed, offset, contiguous, transposed, offset]:
        [a], [b] = folded.run([x]), unfolded.run([x])
        assert a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)
