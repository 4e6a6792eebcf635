"""The GE ops Hugging Face MoE routing brings into a graph (TopKV2, Sort, GatherElements, FloorDiv,
ClipByValueV2, ScatterElements' "add" reduction in its backward), each against the torch operation
it stands for, and the values each refuses."""

import pytest
import torch

from airfuse.offline.ge_executor import GeExecutionError
from ge_graphs import DataType, ge, ints, rand, run_op


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [-1, 0])
def test_top_k_v2_is_torch_topk_with_int32_indices(largest, dim):
    x = rand(6, 5)
    values, indices = run_op(lambda a: ge.TopKV2(a, ints([2], DataType.DT_INT32), dim=dim, largest=largest), x)
    want_values, want_indices = torch.topk(x, 2, dim=dim, largest=largest)
    assert indices.dtype == torch.int32
    torch.testing.assert_close(values, want_values)
    assert torch.equal(indices.long(), want_indices)


def test_top_k_v2_refuses_k_beyond_the_dim():
    with pytest.raises(GeExecutionError, match=r"k 6 must be in \[0, 5\]"):
        run_op(lambda a: ge.TopKV2(a, ints([6], DataType.DT_INT32)), rand(2, 5))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_keeps_equal_values_in_input_order(descending):
    x = torch.tensor([[3, 1, 3, 0, 1, 3], [2, 2, 2, 2, 1, 0]])
    values, indices = run_op(lambda a: ge.Sort(a, axis=-1, descending=descending), x)
    want_values, want_indices = torch.sort(x, descending=descending, stable=True)
    assert indices.dtype == torch.int32
    assert torch.equal(values, want_values) and torch.equal(indices.long(), want_indices)


def test_sort_refuses_a_dtype_ge_sort_does_not_take():
    with pytest.raises(GeExecutionError, match="not one GE's Sort takes"):
        run_op(lambda a: ge.Sort(a), rand(4, dtype=torch.bfloat16))


@pytest.mark.parametrize("dim", [0, 1])
def test_gather_elements_is_aten_gather(dim):
    x = rand(4, 5)
    index = torch.randint(0, x.shape[dim], (3, 2))
    assert torch.equal(run_op(lambda a, i: ge.GatherElements(a, i, dim=dim), x, index), torch.gather(x, dim, index))


def test_gather_elements_refuses_out_of_range_and_negative_indices():
    for index in (torch.tensor([[4]]), torch.tensor([[-1]])):
        with pytest.raises(GeExecutionError, match="out of range"):
            run_op(lambda a, i: ge.GatherElements(a, i, dim=0), rand(4, 5), index)


def test_floor_div_rounds_toward_minus_infinity():
    x1, x2 = torch.tensor([7, -7, 7, -7, 0]), torch.tensor([2, 2, -2, -2, 3])
    assert torch.equal(run_op(ge.FloorDiv, x1, x2), torch.tensor([3, -4, -4, 3, 0]))
    f1, f2 = torch.tensor([7.5, -7.5]), torch.tensor([2.0, 2.0])
    assert torch.equal(run_op(ge.FloorDiv, f1, f2), torch.tensor([3.0, -4.0]))


def test_floor_div_refuses_integer_division_by_zero_and_mixed_dtypes():
    with pytest.raises(GeExecutionError, match="division by zero"):
        run_op(ge.FloorDiv, torch.tensor([1]), torch.tensor([0]))
    with pytest.raises(GeExecutionError, match="share one dtype"):
        run_op(ge.FloorDiv, torch.tensor([1]), torch.tensor([1.0]))


def test_clip_by_value_v2_clamps_with_broadcast_bounds():
    x = torch.tensor([[-3.0, 0.5, 9.0], [1.0, 2.0, 3.0]])
    low, high = torch.tensor(0.0), torch.tensor([1.0, 1.5, 2.5])
    assert torch.equal(run_op(ge.ClipByValueV2, x, low, high), torch.clamp(x, low, high))
    with pytest.raises(GeExecutionError, match="must broadcast to x"):
        run_op(ge.ClipByValueV2, x, torch.zeros(2, 2, 3), high)


def test_scatter_elements_add_is_aten_scatter_add_with_repeated_indices():
    data, updates = rand(3, 4), rand(5, 4)
    indices = torch.tensor([0, 2, 0, -1, 2]).view(5, 1).expand(5, 4)
    got = run_op(lambda d, i, u: ge.ScatterElements(d, i, u, axis=0, reduction="add"), data, indices, updates)
    torch.testing.assert_close(got, data.scatter_add(0, indices % 3, updates))
