"""airfuse.swiglu / swiglu_backward: numerics vs float64 (torch_npu npu_swiglu semantics), opcheck,
autograd, bad input."""

import pytest
import torch

from reference import IR_DTYPES, TOLERANCES

swiglu = torch.ops.airfuse.swiglu
ALL_DTYPES = IR_DTYPES + (torch.float64,)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape, dim", [((2,), -1), ((4, 8), 0), ((2, 3, 22016), -1), ((1, 27648), 1), ((4, 6, 5), 1)], ids=str)
def test_forward_and_backward_match_float64(shape, dim, dtype):
    x = torch.randn(shape, dtype=dtype) * 3
    x64 = x.double().requires_grad_()
    a, b = x64.chunk(2, dim)
    y_ref = torch.nn.functional.silu(a) * b
    dy = torch.randn(y_ref.shape, dtype=dtype)
    y_ref.backward(dy.double())
    y = swiglu(x, dim)
    dx = torch.ops.airfuse.swiglu_backward(dy, x, dim)
    assert y.shape == y_ref.shape and y.dtype == dx.dtype == dtype
    torch.testing.assert_close(y.double(), y_ref.detach(), **TOLERANCES[dtype])
    torch.testing.assert_close(dx.double(), x64.grad, **TOLERANCES[dtype])


def test_default_dim_is_the_last():
    x = torch.randn(3, 10)
    assert torch.equal(swiglu(x), torch.ops.airfuse.silu_mul(*x.chunk(2, -1)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_opcheck(dtype):
    x = torch.randn(4, 32, dtype=dtype, requires_grad=True)
    torch.library.opcheck(swiglu.default, (x, -1))
    torch.library.opcheck(swiglu.default, (x, 0))
    torch.library.opcheck(torch.ops.airfuse.swiglu_backward.default, (torch.randn(4, 16, dtype=dtype), x.detach(), 1))


def test_gradcheck_float64():
    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: swiglu(t, 0), (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),))
    assert torch.autograd.gradcheck(swiglu, (x,))


def test_dynamic_shapes_do_not_specialize():
    compiled = torch.compile(lambda t: swiglu(t, -1), backend="aot_eager", dynamic=True, fullgraph=True)
    for n in (4, 6, 10):
        x = torch.randn(3, n)
        torch.testing.assert_close(compiled(x), swiglu(x))


@pytest.mark.parametrize(
    "make_args, error, message",
    [
        (lambda: (torch.randn(2, 7), -1), RuntimeError, r"x\.shape\[-1\] must be even to split into gate and up halves, got 7"),
        (lambda: (torch.randn(2, 8), 2), IndexError, r"dim must be in \[-2, 1\] for x of rank 2, got 2"),
        (lambda: (torch.tensor(1.0), -1), RuntimeError, r"x must have at least 1 dimension"),
        (lambda: (torch.ones(2, 4, dtype=torch.int64), -1), TypeError, r"x has dtype int64"),
        (lambda: (torch.randn(0, 4), -1), RuntimeError, r"x is empty"),
    ],
    ids=["odd", "dim-range", "0-d", "int", "empty"],
)
def test_bad_input_is_refused_in_eager_and_while_tracing(make_args, error, message):
    x, dim = make_args()
    with pytest.raises(error, match=r"airfuse\.swiglu: " + message):
        swiglu(x, dim)
    with pytest.raises(Exception, match=r"airfuse\.swiglu: " + message):
        torch.compile(lambda t: swiglu(t, dim), backend="aot_eager", fullgraph=True)(x)


def test_bad_input_to_backward_is_refused():
    x = torch.randn(2, 8)
    with pytest.raises(RuntimeError, match=r"airfuse\.swiglu_backward: dy must have shape \[2, 4\] \(x's with dim -1 halved\), got \[2, 8\]"):
        torch.ops.airfuse.swiglu_backward(torch.randn(2, 8), x, -1)
