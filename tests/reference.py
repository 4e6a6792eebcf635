"""Float64 references written independently of airfuse's kernels, and per-dtype tolerances."""

import torch

# Outputs are rounded once to their dtype; these bound that rounding plus float32 accumulation.
TOLERANCES = {
    torch.float32: dict(atol=1e-5, rtol=1e-5),
    torch.float16: dict(atol=2e-3, rtol=2e-3),
    torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2),
    torch.float64: dict(atol=1e-12, rtol=1e-12),
}
IR_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def rms_norm_reference(x, gamma, epsilon):
    x64, g64 = x.double(), gamma.double()
    rstd = 1.0 / torch.sqrt((x64 * x64).mean(-1, keepdim=True) + epsilon)
    return x64 * rstd * g64, rstd


def rms_norm_grads_reference(dy, x, gamma, epsilon):
    x64 = x.detach().double().requires_grad_()
    g64 = gamma.detach().double().requires_grad_()
    y, _ = rms_norm_reference(x64, g64, epsilon)
    y.backward(dy.double())
    return x64.grad, g64.grad


def rope_reference(x, cos, sin, mode):
    """y[j] = x[j] cos[j] + sign[j] x[partner[j]] sin[j], element by element: each element's rotation
    partner is D/2 away (half) or its pair neighbour (interleave), negated in the pair's first slot."""
    d = x.shape[-1]
    j = torch.arange(d)
    if mode == "half":
        partner, first = (j + d // 2) % d, j < d // 2
    else:
        partner, first = j ^ 1, j % 2 == 0
    sign = torch.where(first, -1.0, 1.0).double()
    x64 = x.double()
    return x64 * cos.double() + sign * x64[..., partner] * sin.double()


def rope_backward_reference(dy, cos, sin, mode):
    """float64 autograd of rope_reference with respect to x."""
    x64 = torch.zeros(dy.shape, dtype=torch.float64, requires_grad=True)
    rope_reference(x64, cos, sin, mode).backward(dy.double())
    return x64.grad


def gelu_backward_reference(dy, x, approximate):
    """float64 autograd of torch.nn.functional.gelu."""
    x64 = x.detach().double().requires_grad_()
    torch.nn.functional.gelu(x64, approximate=approximate).backward(dy.double())
    return x64.grad


def every_finite(dtype):
    """Every finite value of a 16-bit dtype."""
    values = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    return values[values.isfinite()]


def ulps(got, want):
    """How many values of their 16-bit dtype lie from want to got (0: equal)."""
    def ordered(t):
        bits = t.view(torch.int16).int()
        return torch.where(bits < 0, -32768 - bits, bits)

    return (ordered(got) - ordered(want)).abs()


def assert_rounded_as_float64(got, want, least, slack, inputs, what):
    """got, a 16-bit result, against the float64 want: at least the fraction `least` of its values
    are want rounded once, and every other lies within 1 ulp of that or within `slack` (a number, or
    a tensor per element) of want; `inputs` name the failures."""
    apart = ulps(got, want.to(got.dtype))
    assert (apart == 0).double().mean() >= least, what
    near = (apart <= 1) | ((got.double() - want).abs() <= slack)
    assert near.all(), (what, inputs[~near], got[~near], want[~near])
