"""airfuse.rms_norm / rms_norm_backward: CPU numerics, opcheck, autograd, torch.compile, bad input."""

import math

import pytest
import torch

from airfuse.ops.rms_norm import RMS_NORM
from reference import IR_DTYPES, TOLERANCES, rms_norm_grads_reference, rms_norm_reference

rms_norm = torch.ops.airfuse.rms_norm
rms_norm_backward = torch.ops.airfuse.rms_norm_backward

SHAPES = [(8,), (1,), (3,), (4097,), (2, 4097), (4, 8192), (3, 1), (2, 3, 5, 64), (2, 2, 3, 7)]
ALL_DTYPES = IR_DTYPES + (torch.float64,)


def _gamma_dtypes(dtype):
    return [dtype] if dtype in (torch.float32, torch.float64) else [dtype, torch.float32]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_forward_matches_float64_reference(shape, dtype):
    for gamma_dtype in _gamma_dtypes(dtype):
        x = torch.randn(shape, dtype=dtype) * 3
        gamma = torch.rand(shape[-1], dtype=gamma_dtype) + 0.5
        y, rstd = rms_norm(x, gamma, 1e-5)
        y_ref, rstd_ref = rms_norm_reference(x, gamma, 1e-5)
        assert y.dtype == dtype and y.shape == x.shape
        assert rstd.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
        assert rstd.shape == (*shape[:-1], 1)
        torch.testing.assert_close(y.double(), y_ref, **TOLERANCES[dtype])
        torch.testing.assert_close(rstd.double(), rstd_ref, **TOLERANCES[torch.float32 if dtype != torch.float64 else dtype])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_non_contiguous_input(dtype):
    base = torch.randn(64, 6, dtype=dtype)
    for x in (base.t(), torch.randn(5, 128, dtype=dtype)[:, ::2]):
        assert not x.is_contiguous()
        gamma = torch.rand(x.shape[-1], dtype=dtype) + 0.5
        y, _ = rms_norm(x, gamma, 1e-6)
        assert y.is_contiguous()
        torch.testing.assert_close(y.double(), rms_norm_reference(x, gamma, 1e-6)[0], **TOLERANCES[dtype])


def test_default_epsilon_is_the_op_definitions():
    x, gamma = torch.full((2, 4), 1e-4), torch.ones(4)
    torch.testing.assert_close(rms_norm(x, gamma)[0], rms_norm(x, gamma, RMS_NORM.attrs[0].default)[0])
    assert RMS_NORM.attrs[0].default == 1e-6


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4097)], ids=str)
def test_backward_matches_float64_reference(shape, dtype):
    for gamma_dtype in _gamma_dtypes(dtype):
        x = torch.randn(shape, dtype=dtype)
        gamma = torch.rand(shape[-1], dtype=gamma_dtype) + 0.5
        dy = torch.randn(shape, dtype=dtype)
        _, rstd = rms_norm(x, gamma, 1e-5)
        dx, dgamma = rms_norm_backward(dy, x, rstd, gamma)
        dx_ref, dgamma_ref = rms_norm_grads_reference(dy, x, gamma, 1e-5)
        assert dx.dtype == dtype and dgamma.dtype == gamma_dtype
        torch.testing.assert_close(dx.double(), dx_ref, **TOLERANCES[dtype])
        # dgamma sums len(rows) products: allow for that many roundings of the inputs.
        rows = math.prod(shape[:-1])
        tol = TOLERANCES[gamma_dtype]
        torch.testing.assert_close(dgamma.double(), dgamma_ref, atol=tol["atol"] * rows, rtol=tol["rtol"])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_opcheck(dtype):
    for gamma_dtype in _gamma_dtypes(dtype):
        x = torch.randn(3, 5, 16, dtype=dtype, requires_grad=True)
        gamma = torch.rand(16, dtype=gamma_dtype, requires_grad=True)
        torch.library.opcheck(rms_norm.default, (x, gamma, 1e-5))
        _, rstd = rms_norm(x.detach(), gamma.detach(), 1e-5)
        torch.library.opcheck(rms_norm_backward.default, (torch.randn_like(x), x.detach(), rstd, gamma.detach()))


def test_gradcheck_float64():
    x = torch.randn(3, 2, 9, dtype=torch.float64, requires_grad=True)
    gamma = torch.rand(9, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: rms_norm(a, b, 1e-4)[0], (x, gamma))


def test_rstd_is_not_differentiable():
    x = torch.randn(2, 8, requires_grad=True)
    y, rstd = rms_norm(x, torch.ones(8), 1e-6)
    assert y.requires_grad and not rstd.requires_grad


def _model(x, gamma):
    y, _ = rms_norm(x, gamma, 1e-5)
    return (y * y.sigmoid()).sum(-1)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_compiled_forward_and_backward_equal_eager(backend, dtype):
    x = torch.randn(4, 6, 32, dtype=dtype)
    gamma = torch.rand(32, dtype=dtype) + 0.5
    results = []
    for fn in (_model, torch.compile(_model, backend=backend, fullgraph=True)):
        xi, gi = x.clone().requires_grad_(), gamma.clone().requires_grad_()
        out = fn(xi, gi)
        out.backward(torch.ones_like(out))
        results.append((out, xi.grad, gi.grad))
    for eager, compiled in zip(*results, strict=True):
        torch.testing.assert_close(compiled, eager, **TOLERANCES[dtype])


# --- bad input: the same clear error in eager and while tracing for torch.compile (fake) ------

BAD_INPUTS = [
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(7), 1e-6), RuntimeError, r"gamma must have shape \[8\]", id="gamma-length"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(2, 8), 1e-6), RuntimeError, r"gamma must have shape", id="gamma-rank"),
    pytest.param(lambda: (torch.ones(2, 8, dtype=torch.int32), torch.ones(8), 1e-6), TypeError, r"x has dtype int32", id="int-x"),
    pytest.param(lambda: (torch.randn(2, 8), torch.ones(8, dtype=torch.int64), 1e-6), TypeError, r"gamma has dtype int64", id="int-gamma"),
    pytest.param(lambda: (torch.randn(2, 8, dtype=torch.float16), torch.randn(8, dtype=torch.bfloat16), 1e-6), TypeError, r"gamma has dtype bfloat16 with x=float16; expected one of float16, float32", id="gamma-dtype"),
    pytest.param(lambda: (torch.tensor(1.0), torch.randn(1), 1e-6), RuntimeError, r"x must have at least 1 dimension", id="0-d-x"),
    pytest.param(lambda: (torch.randn(0, 8), torch.randn(8), 1e-6), RuntimeError, r"x is empty", id="empty-x"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), -1e-6), ValueError, r"epsilon must be a finite float32 number >= 0", id="negative-epsilon"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), float("nan")), ValueError, r"epsilon must be a finite float32 number", id="nan-epsilon"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), float("inf")), ValueError, r"epsilon must be a finite float32 number", id="inf-epsilon"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), 1e300), ValueError, r"epsilon must be a finite float32 number >= 0, got 1e\+300", id="epsilon-beyond-float32"),
    pytest.param(lambda: (torch.randn(2, 8), None, 1e-6), TypeError, r"gamma must be a Tensor, got NoneType", id="none-gamma"),
    pytest.param(lambda: (None, torch.randn(8), 1e-6), TypeError, r"x must be a Tensor, got NoneType", id="none-x"),
]


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_in_eager(make_args, error, message):
    with pytest.raises(error, match=r"airfuse\.rms_norm: " + message):
        rms_norm(*make_args())


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_while_tracing(make_args, error, message):
    x, gamma, epsilon = make_args()
    compiled = torch.compile(lambda a, b: rms_norm(a, b, epsilon)[0], backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"airfuse\.rms_norm: " + message):
        compiled(x, gamma)


def test_bad_input_to_backward_is_refused():
    x, gamma = torch.randn(2, 8), torch.randn(8)
    _, rstd = rms_norm(x, gamma)
    with pytest.raises(RuntimeError, match=r"airfuse\.rms_norm_backward: dy must have x's shape \[2, 8\]"):
        rms_norm_backward(torch.randn(2, 9), x, rstd, gamma)
    with pytest.raises(RuntimeError, match=r"airfuse\.rms_norm_backward: rstd must have shape \[2, 1\]"):
        rms_norm_backward(torch.randn(2, 8), x, rstd.view(1, 2), gamma)
    with pytest.raises(TypeError, match=r"airfuse\.rms_norm_backward: rstd has dtype float16"):
        rms_norm_backward(torch.randn(2, 8), x, rstd.half(), gamma)
    with pytest.raises(TypeError, match=r"airfuse\.rms_norm_backward: rstd must be a Tensor, got NoneType"):
        rms_norm_backward(torch.randn(2, 8), x, None, gamma)


def test_device_mismatch_is_refused():
    with pytest.raises(RuntimeError, match=r"airfuse\.rms_norm: gamma is on meta but x is on cpu"):
        rms_norm(torch.randn(2, 8), torch.empty(8, device="meta"))


@pytest.mark.parametrize("scale, epsilon", [(1e20, 1e-6), (1e-30, 0.0)], ids=["x-squared-overflows", "x-squared-underflows"])
def test_float32_range_limits_behave_as_torch(scale, epsilon):
    """Decided and documented (README): when x² leaves float32's range, airfuse gives what
    F.rms_norm gives (y ±0 on overflow, ±inf on underflow with epsilon 0) rather than raising;
    the statistics are float32 by contract, as on the NPU."""
    x = torch.randn(4, 16) * scale
    gamma = torch.randn(16)
    y, _ = rms_norm(x, gamma, epsilon)
    expected = torch.nn.functional.rms_norm(x, [16], gamma, epsilon)
    torch.testing.assert_close(y, expected, equal_nan=True, rtol=0, atol=0)
    assert not y.isfinite().all() or (y == 0).all()


@pytest.mark.parametrize("epsilon", [True, torch.tensor(0.5)], ids=["bool", "0-d-tensor"])
def test_torch_ops_parser_converts_epsilon_before_airfuse_sees_it(epsilon):
    """A PyTorch limit (README, "Bad input"): the schema's float argument is converted by PyTorch's
    parser before any airfuse code runs, so eager computes with float(epsilon). The twin wrappers
    and the converters, which see the raw value, refuse it. If this test fails, PyTorch now passes
    the raw value through and airfuse's check_attr_float can refuse it in eager too."""
    x, gamma = torch.randn(2, 8), torch.randn(8)
    y, _ = rms_norm(x, gamma, epsilon)
    torch.testing.assert_close(y, rms_norm(x, gamma, float(epsilon))[0], rtol=0, atol=0)


def test_numpy_epsilon_is_a_tensor_under_torch_compile():
    """A PyTorch limit (README, "Bad input"): eager takes a numpy epsilon as the number it is, but
    Dynamo wraps every numpy scalar as a 0-d array, i.e. a tensor, which the float argument refuses,
    naming the op and the argument. If this test fails, Dynamo keeps numpy scalars as numbers."""
    import numpy as np

    x, gamma, epsilon = torch.randn(2, 8), torch.randn(8), np.float64(1e-5)
    torch.testing.assert_close(rms_norm(x, gamma, epsilon)[0], rms_norm(x, gamma, 1e-5)[0], rtol=0, atol=0)
    compiled = torch.compile(lambda a, b: rms_norm(a, b, epsilon)[0], backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"(?s)Expected a value of type 'float' for argument 'epsilon'.*airfuse::rms_norm"):
        compiled(x, gamma)
