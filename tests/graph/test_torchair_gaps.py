"""The decompositions airfuse adds for ops Hugging Face models trace to and TorchAir cannot convert
(``airfuse.torchair_gaps``): equal to aten eagerly on every kind of input the op takes, and through
the compiled graph (TorchAir's conversion, the offline GE executor)."""

import pytest
import torch

import airfuse
from airfuse import torchair_gaps

aten = torch.ops.aten
FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def test_the_default_table_has_every_gap():
    table = airfuse.default_decompositions()
    for op in (aten.histc.default, aten.true_divide.Tensor, aten.true_divide.Scalar, aten._grouped_mm.default, aten.index_put.default):
        assert table[op] is torchair_gaps.decompositions()[op]


def _histc_cases(dtype, generator):
    """(x, bins, min, max): random values, values on the bin edges (ties), out-of-range values,
    whole numbers as expert ids are, and the data's own range (min == max)."""
    for trial in range(60):
        bins = int(torch.randint(1, 12, (), generator=generator))
        low = float(torch.randn((), generator=generator) * 3)
        high = low + float(torch.rand((), generator=generator) * 5) + 1e-3
        n = int(torch.randint(1, 40, (), generator=generator))
        x = torch.randn(n, generator=generator) * 4
        if trial % 4 == 1:
            x = torch.linspace(low, high, bins + 1)[torch.randint(0, bins + 1, (n,), generator=generator)]
        if trial % 4 == 2:
            low, high = 0, bins - 1
            x = torch.randint(-2, bins + 2, (n,), generator=generator).float()
        if trial % 5 == 3:
            low = high = 0
        yield x.to(dtype), bins, low, high


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_histc_equals_aten_on_ties_out_of_range_values_and_the_data_range(dtype):
    for x, bins, low, high in _histc_cases(dtype, torch.Generator().manual_seed(0)):
        got, want = torchair_gaps.histc(x, bins, low, high), torch.histc(x, bins, low, high)
        assert got.dtype == want.dtype and torch.equal(got, want), (x.tolist(), bins, low, high, got.tolist(), want.tolist())


def test_histc_counts_neither_nan_nor_values_beside_the_range():
    x = torch.tensor([0.0, float("nan"), 3.0, 3.0000002, -1e-7, float("inf"), 1.5])
    assert torch.equal(torchair_gaps.histc(x, 3, 0, 3), torch.histc(x, 3, 0, 3))
    same = torch.tensor([2.0, 2.0])  # one value: aten widens the range by 1 each way
    assert torch.equal(torchair_gaps.histc(same, 4), torch.histc(same, 4))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8], ids=str)
def test_histc_of_integers_bins_as_aten_does_their_float64_values(dtype):
    """The CPU kernel refuses integers, the NPU's takes them (transformers passes int32 expert ids
    there): the bins are those of the same values in float64, the counts in x's dtype."""
    generator = torch.Generator().manual_seed(1)
    x = torch.randint(0, 13, (50,), generator=generator).to(dtype)
    for bins, low, high in ((8, 0, 7), (5, 2, 11), (3, 0, 0), (7, 1, 12)):
        got = torchair_gaps.histc(x, bins, low, high)
        assert got.dtype == dtype and torch.equal(got, torch.histc(x.double(), bins, low, high).to(dtype))


def test_histc_refuses_what_aten_refuses():
    x = torch.rand(4)
    for args, message in (((0, 0, 1), "bins must be > 0"), ((3, 2, 1), "max must be larger than min"),
                          ((3, 0, float("inf")), "not finite")):
        with pytest.raises(RuntimeError, match=message):
            torchair_gaps.histc(x, *args)
    with pytest.raises(RuntimeError, match="bool"):
        torchair_gaps.histc(torch.ones(2, dtype=torch.bool), 2, 0, 1)


def test_index_put_equals_aten_with_negative_indices_and_accumulation():
    x, values = torch.randn(6, 3), torch.randn(4, 3)
    index = torch.tensor([5, -6, 2, -1])
    for accumulate in (False, True):
        got = torchair_gaps.index_put(x, [index], values, accumulate)
        assert torch.equal(got, aten.index_put(x, [index], values, accumulate))
    permutation = torch.randperm(7)
    inverse = torchair_gaps.index_put(torch.empty(7, dtype=torch.int64), [permutation], torch.arange(7))
    assert torch.equal(permutation[inverse], torch.arange(7))
    assert torchair_gaps.index_put(x, [torch.ones(6, dtype=torch.bool)], values[:1]) is NotImplemented


def _offsets(counts):
    return torch.tensor(counts).cumsum(0).to(torch.int32)


@pytest.mark.parametrize("counts", [[3, 0, 5, 4], [0, 0, 12, 0], [2, 2, 2, 1]], ids=str)
def test_grouped_mm_equals_aten_and_transformers_fallback_with_empty_groups(counts):
    """Rows after the last group (the last case leaves one) are zero, as in transformers' fallback."""
    from transformers.integrations import moe  # noqa: F401  (registers torch.ops.transformers.*)

    generator = torch.Generator().manual_seed(2)
    # aten's CPU kernel wants strides of 16 bytes: dims of 4 floats.
    x, weight, grad = (torch.randn(12, 4, generator=generator), torch.randn(4, 4, 8, generator=generator),
                       torch.randn(12, 8, generator=generator))
    offs = _offsets(counts)
    want = torch.ops.transformers.grouped_mm_fallback(x, weight, offs)
    torch.testing.assert_close(torchair_gaps.grouped_mm_fallback(x, weight, offs), want)
    got_grads = torchair_gaps.grouped_mm_fallback_backward(x, weight, offs, grad)
    want_grads = torch.ops.transformers.grouped_mm_fallback_backward(x, weight, offs, grad)
    for got, expected in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(got, expected)
    if sum(counts) == x.shape[0]:  # aten leaves rows after the last group undefined
        torch.testing.assert_close(torchair_gaps.grouped_mm(x, weight, offs), aten._grouped_mm(x, weight, offs))
        torch.testing.assert_close(torchair_gaps.grouped_mm(x.t().contiguous(), grad, offs),
                                   aten._grouped_mm(x.t().contiguous(), grad, offs))



def test_grouped_mm_decompositions_make_no_tensor_from_nothing():
    """They run in backward graphs, which TorchAir's aclgraph converter compiles outside the fake
    mode: an arange or zeros there gives a real tensor among FakeTensors (docs/npugraph_ex.md)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    offs = _offsets([3, 0, 5, 4])
    x, weight, grad = torch.randn(12, 4), torch.randn(4, 4, 8), torch.randn(12, 8)
    graph = make_fx(torchair_gaps.grouped_mm_fallback_backward)(x, weight, offs, grad).graph
    made = [str(node.target) for node in graph.nodes if node.op == "call_function"
            and not any(isinstance(arg, torch.fx.Node) for arg in node.args)]
    assert not made, made


class Routing(torch.nn.Module):
    """The ops the decompositions stand for, as MoE routing and Phi use them."""

    def forward(self, x, expert_ids):
        counts = torch.histc(expert_ids.float(), bins=4, min=0, max=3)
        order = torch.sort(expert_ids).indices
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(order.shape[0])
        return torch.true_divide(x, 3.0) + counts.sum(), counts, inverse


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_routing_equals_eager(dynamic):
    model = Routing()
    x, expert_ids = torch.randn(10), torch.tensor([3, 0, 3, 1, 1, 3, 0, 3, 2, 3])
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True, dynamic=dynamic)
    for got, want in zip(compiled(x, expert_ids), model(x, expert_ids), strict=True):
        assert torch.equal(got, want)
