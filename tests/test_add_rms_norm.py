"""airfuse.add_rms_norm: numerics vs float64, the unfused graph it must agree with, opcheck,
autograd, bad input."""

import pytest
import torch

from reference import IR_DTYPES, TOLERANCES, rms_norm_reference

add_rms_norm = torch.ops.airfuse.add_rms_norm
ALL_DTYPES = IR_DTYPES + (torch.float64,)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1,), (3, 7), (2, 5, 4096), (4, 11008)], ids=str)
def test_matches_float64_reference(shape, dtype):
    x1, x2 = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    gamma = torch.rand(shape[-1], dtype=dtype) + 0.5
    y, rstd, x = add_rms_norm(x1, x2, gamma, 1e-5)
    x_ref = (x1.double() + x2.double()).to(dtype)
    y_ref, rstd_ref = rms_norm_reference(x_ref, gamma, 1e-5)
    torch.testing.assert_close(x, x_ref, rtol=0, atol=0)
    torch.testing.assert_close(y.double(), y_ref, **TOLERANCES[dtype])
    torch.testing.assert_close(rstd.double(), rstd_ref, **TOLERANCES[torch.float32 if dtype != torch.float64 else dtype])
    assert (y.dtype, rstd.dtype, x.dtype) == (dtype, torch.float32 if dtype != torch.float64 else dtype, dtype)


@pytest.mark.parametrize("dtype", IR_DTYPES, ids=str)
def test_agrees_bit_for_bit_with_the_unfused_ops(dtype):
    x1, x2 = torch.randn(6, 256, dtype=dtype), torch.randn(6, 256, dtype=dtype)
    gamma = torch.randn(256, dtype=torch.float32)
    y, rstd, x = add_rms_norm(x1, x2, gamma, 1e-6)
    x_unfused = torch.ops.airfuse.add(x1, x2)
    y_unfused, rstd_unfused = torch.ops.airfuse.rms_norm(x_unfused, gamma, 1e-6)
    assert torch.equal(x, x_unfused) and torch.equal(y, y_unfused) and torch.equal(rstd, rstd_unfused)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_opcheck(dtype):
    x1, x2 = (torch.randn(3, 16, dtype=dtype, requires_grad=True) for _ in range(2))
    gamma = torch.rand(16, dtype=dtype, requires_grad=True)
    torch.library.opcheck(add_rms_norm.default, (x1, x2, gamma, 1e-6))


def test_gradcheck_through_y_and_the_residual_x():
    x1, x2 = (torch.randn(3, 8, dtype=torch.float64, requires_grad=True) for _ in range(2))
    gamma = torch.rand(8, dtype=torch.float64, requires_grad=True)

    def both_outputs(a, b, g):
        y, _, x = add_rms_norm(a, b, g, 1e-6)
        return y * 0.5 + x.sin()

    assert torch.autograd.gradcheck(both_outputs, (x1, x2, gamma))


BAD_INPUTS = [
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(8), torch.randn(8)), RuntimeError, r"x2 must have x1's shape \[2, 8\], got \[8\] \(no broadcasting\)", id="broadcast"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(2, 8, dtype=torch.float16), torch.randn(8)), TypeError, r"x2 has dtype float16 with x1=float32", id="x2-dtype"),
    pytest.param(lambda: (torch.randn(2, 8), torch.randn(2, 8), torch.randn(7)), RuntimeError, r"gamma must have shape \[8\]", id="gamma"),
    pytest.param(lambda: (torch.randn(2, 8), None, torch.randn(8)), TypeError, r"x2 must be a Tensor, got NoneType", id="none"),
    pytest.param(lambda: (torch.randn(0, 8), torch.randn(0, 8), torch.randn(8)), RuntimeError, r"x1 is empty", id="empty"),
]


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_in_eager_and_while_tracing(make_args, error, message):
    x1, x2, gamma = make_args()
    with pytest.raises(error, match=r"airfuse\.add_rms_norm: " + message):
        add_rms_norm(x1, x2, gamma, 1e-6)
    compiled = torch.compile(lambda a, b, g: add_rms_norm(a, b, g, 1e-6)[0], backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"airfuse\.add_rms_norm: " + message):
        compiled(x1, x2, gamma)


def test_bad_epsilon_is_refused():
    x = torch.randn(2, 8)
    with pytest.raises(ValueError, match=r"airfuse\.add_rms_norm: epsilon must be a finite float32 number >= 0"):
        add_rms_norm(x, x, torch.ones(8), -1.0)
