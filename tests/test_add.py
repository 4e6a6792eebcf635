"""airfuse.add: CPU numerics, opcheck, autograd, capture, bad input."""

import pytest
import torch

import airfuse
from reference import IR_DTYPES, TOLERANCES

add = torch.ops.airfuse.add
ALL_DTYPES = IR_DTYPES + (torch.float64,)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1,), (3, 7), (2, 4097), (2, 3, 4, 5)], ids=str)
def test_matches_float64_reference(shape, dtype):
    x, y = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    z = add(x, y)
    assert z.dtype == dtype and z.shape == x.shape
    torch.testing.assert_close(z.double(), x.double() + y.double(), **TOLERANCES[dtype])


def test_non_contiguous_inputs():
    x = torch.randn(16, 6).t()
    y = torch.randn(6, 32)[:, ::2]
    torch.testing.assert_close(add(x, y), x + y)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_opcheck(dtype):
    x = torch.randn(3, 5, dtype=dtype, requires_grad=True)
    y = torch.randn(3, 5, dtype=dtype, requires_grad=True)
    torch.library.opcheck(add.default, (x, y))


def test_gradcheck_float64():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(add, (x, y))


def test_captured_as_one_node():
    x, y = torch.randn(2, 8, dtype=torch.float16), torch.randn(2, 8, dtype=torch.float16)
    capture = airfuse.capture_ge_graph(lambda a, b: add(a, b) * 2, x, y)
    [node] = capture.nodes("AirfuseAdd")
    assert node.output_names == ("z",) and node.output_dtypes == ("DT_FLOAT16",)
    assert capture.graph_breaks == 0


@pytest.mark.parametrize(
    "make_args, error, message",
    [
        (lambda: (torch.randn(2, 8), torch.randn(8)), RuntimeError, r"y must have x's shape \[2, 8\], got \[8\] \(no broadcasting\)"),
        (lambda: (torch.randn(2, 8), torch.randn(2, 8, dtype=torch.float16)), TypeError, r"y has dtype float16 with x=float32; expected one of float32"),
        (lambda: (torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64)), TypeError, r"x has dtype int64"),
        (lambda: (torch.randn(0, 3), torch.randn(0, 3)), RuntimeError, r"x is empty"),
        (lambda: (torch.randn(2, 8), None), TypeError, r"y must be a Tensor, got NoneType"),
    ],
    ids=["shape", "dtype-mix", "int", "empty", "none-y"],
)
def test_bad_input(make_args, error, message):
    x, y = make_args()
    with pytest.raises(error, match=r"airfuse\.add: " + message):
        add(x, y)
    with pytest.raises(Exception, match=r"airfuse\.add: " + message):
        torch.compile(add, backend="aot_eager", fullgraph=True)(x, y)
