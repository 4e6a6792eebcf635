"""What the cross-layer property harness needs of each op beyond its op definition.

The op definition gives the dtype combinations, the inputs in order and the attrs with their
defaults; a case adds how the input shapes relate and a float64 reference written independently of
airfuse's kernels. ``test_every_op_has_a_case`` makes defining an op without a case fail.
"""

from dataclasses import dataclass
from typing import Callable

import torch
from hypothesis import strategies as st

from airfuse.ops.gelu import APPROXIMATIONS
from airfuse.ops.rope import MODES
from reference import gelu_backward_reference, rms_norm_reference, rope_backward_reference, rope_reference

# Magnitudes of x: small, unit and large values keep float32 accumulation and rounding honest.
_SCALES = (1e-2, 1.0, 1e2)
_EPSILONS = (0.0, 1e-6, 1e-5, 1e-2)
_PRODUCT_SCALES = (1e-2, 1.0, 1e1)


@dataclass(frozen=True)
class Case:
    # (draw, combo, generator) -> {IR input or attr name: value}; combo is the op definition's dtype combination.
    sample: Callable
    # (**inputs) -> float64 outputs in IR output order.
    reference: Callable
    # (**inputs) -> {output name: factor} widening that output's atol where the math cancels terms
    # of this size (float32 keeps ~7 digits of the terms, not of their difference).
    cancellation: Callable = lambda **inputs: {}


def _rows_and_hidden(draw):
    leading = draw(st.lists(st.integers(1, 5), min_size=0, max_size=2))
    hidden = draw(st.one_of(st.integers(1, 40), st.sampled_from([64, 127, 128, 255, 4096])))
    return [*leading, hidden]


def _tensor(shape, dtype, generator, *, scale=1.0, positive=False):
    values = torch.rand(shape, generator=generator, dtype=torch.float64) + 0.5 if positive else torch.randn(shape, generator=generator, dtype=torch.float64)
    return (values * scale).to(dtype)


def _rms_norm_sample(draw, combo, generator):
    shape = _rows_and_hidden(draw)
    scale = draw(st.sampled_from(_SCALES))
    return {
        "x": _tensor(shape, combo["x"], generator, scale=scale),
        "gamma": _tensor(shape[-1:], combo["gamma"], generator, positive=True),
        "epsilon": draw(st.sampled_from(_EPSILONS[1:] if scale < 1 else _EPSILONS)),
    }


def _rms_norm_backward_sample(draw, combo, generator):
    forward = _rms_norm_sample(draw, combo, generator)
    x, gamma = forward["x"], forward["gamma"]
    _, rstd = rms_norm_reference(x, gamma, forward["epsilon"])
    return {"dy": _tensor(x.shape, combo["dy"], generator), "x": x, "rstd": rstd.to(combo["rstd"]), "gamma": gamma}


def _rms_norm_backward_reference(dy, x, rstd, gamma):
    """float64 autograd of y = x * (mean(x²) + e)^-½ * gamma, with each row's e chosen so that the
    forward's rstd is exactly the rstd given (the backward op takes rstd as an input)."""
    x64 = x.detach().double().requires_grad_()
    g64 = gamma.detach().double().requires_grad_()
    row_epsilon = (1.0 / rstd.double() ** 2 - (x64.detach() ** 2).mean(-1, keepdim=True))
    y = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + row_epsilon) * g64
    y.backward(dy.double())
    return x64.grad, g64.grad


def _rms_norm_backward_cancellation(dy, x, rstd, gamma):
    # dx = rstd·dy·gamma − x·rstd²·mean(dy·gamma·x·rstd): the terms are of size rstd·|dy·gamma|.
    terms = (rstd.double() * dy.double() * gamma.double()).abs().max().item()
    # dgamma sums dy·x·rstd over the rows.
    sums = (dy.double() * x.double() * rstd.double()).abs().reshape(-1, x.shape[-1]).sum(0).max().item()
    return {"dx": max(1.0, terms), "dgamma": max(1.0, sums)}


def _add_sample(draw, combo, generator):
    shape = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)) + [draw(st.sampled_from([1, 7, 128, 1000]))]
    return {"x": _tensor(shape, combo["x"], generator), "y": _tensor(shape, combo["y"], generator)}


def _add_rms_norm_sample(draw, combo, generator):
    forward = _rms_norm_sample(draw, {"x": combo["x1"], "gamma": combo["gamma"]}, generator)
    x1 = forward.pop("x")
    return {"x1": x1, "x2": _tensor(x1.shape, combo["x2"], generator, scale=draw(st.sampled_from(_SCALES))), **forward}


def _add_rms_norm_reference(x1, x2, gamma, epsilon):
    # The sum is rounded to x1's dtype once, and the norm reads that rounded sum.
    x = (x1.double() + x2.double()).to(x1.dtype)
    return (*rms_norm_reference(x, gamma, epsilon), x.double())


def _elementwise_shape(draw):
    return draw(st.lists(st.integers(1, 9), min_size=0, max_size=3)) + [draw(st.sampled_from([1, 7, 128, 1000]))]


def _silu_mul_sample(draw, combo, generator):
    shape = _elementwise_shape(draw)
    scale = draw(st.sampled_from(_SCALES))
    return {"a": _tensor(shape, combo["a"], generator, scale=scale), "b": _tensor(shape, combo["b"], generator)}


def _silu_mul_reference(a, b):
    return (torch.nn.functional.silu(a.double()) * b.double(),)


def _silu_mul_backward_sample(draw, combo, generator):
    forward = _silu_mul_sample(draw, combo, generator)
    return {"dy": _tensor(forward["a"].shape, combo["dy"], generator), **forward}


def _float64_grads(forward, dy, *inputs):
    """Gradients of the float64 ``forward`` at ``inputs`` for output gradient ``dy``."""
    leaves = [t.detach().double().requires_grad_() for t in inputs]
    return torch.autograd.grad(forward(*leaves), leaves, dy.double())


def _swiglu_sample(draw, combo, generator):
    shape = _elementwise_shape(draw)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    shape[dim] *= 2
    # Both halves carry the scale and multiply: keep their product inside float16's range.
    return {"x": _tensor(shape, combo["x"], generator, scale=draw(st.sampled_from(_PRODUCT_SCALES))), "dim": dim}


def _swiglu_reference(x, dim):
    return _silu_mul_reference(*x.chunk(2, dim))


def _swiglu_backward_sample(draw, combo, generator):
    forward = _swiglu_sample(draw, {"x": combo["x"]}, generator)
    x, dim = forward["x"], forward["dim"]
    return {"dy": _tensor(_swiglu_reference(x, dim)[0].shape, combo["dy"], generator), **forward}
def _rope_sample(draw, combo, generator, rotated="x"):
    leading = draw(st.lists(st.integers(1, 5), min_size=0, max_size=3))
    shape = [*leading, draw(st.sampled_from([2, 6, 64, 128]))]
    # Position tables broadcast: each leading dim is x's or 1.
    table_shape = [draw(st.sampled_from([d, 1])) for d in leading] + shape[-1:]
    return {
        rotated: _tensor(shape, combo[rotated], generator, scale=draw(st.sampled_from(_SCALES))),
        "cos": _tensor(table_shape, combo["cos"], generator),
        "sin": _tensor(table_shape, combo["sin"], generator),
        "mode": draw(st.sampled_from(MODES)),
    }


def _rope_backward_sample(draw, combo, generator):
    return _rope_sample(draw, combo, generator, rotated="dy")


def _rope_cancellation(output, rotated, cos, sin):
    # y = x·cos ± x_partner·sin (and dx likewise from dy): with |x| ~ 1e2 two terms of that size
    # can cancel to a small output, which float32 holds to ~7 digits of the terms (a 1,000-example
    # fuzz found |x| 240 giving an error of 1.9e-5 on an output of 0.64).
    terms = rotated.double().abs().max().item() * (cos.double().abs() + sin.double().abs()).max().item()
    return {output: max(1.0, terms)}


def _gelu_sample(draw, combo, generator):
    shape = draw(st.lists(st.integers(1, 9), min_size=0, max_size=3)) + [draw(st.sampled_from([1, 7, 128, 1000]))]
    # Scale 1e2 reaches the saturated tails, 1e-2 the linear core.
    scale = draw(st.sampled_from(_SCALES))
    return {"x": _tensor(shape, combo["x"], generator, scale=scale), "approximate": draw(st.sampled_from(APPROXIMATIONS))}


def _gelu_backward_sample(draw, combo, generator):
    forward = _gelu_sample(draw, combo, generator)
    return {"dy": _tensor(forward["x"].shape, combo["dy"], generator), **forward}


CASES = {
    "rms_norm": Case(_rms_norm_sample, rms_norm_reference),
    "rms_norm_backward": Case(_rms_norm_backward_sample, _rms_norm_backward_reference, _rms_norm_backward_cancellation),
    "add": Case(_add_sample, lambda x, y: (x.double() + y.double(),)),
    "add_rms_norm": Case(_add_rms_norm_sample, _add_rms_norm_reference),
    "silu_mul": Case(_silu_mul_sample, _silu_mul_reference),
    "silu_mul_backward": Case(_silu_mul_backward_sample, lambda dy, a, b: _float64_grads(lambda a, b: _silu_mul_reference(a, b)[0], dy, a, b)),
    "swiglu": Case(_swiglu_sample, _swiglu_reference),
    "swiglu_backward": Case(
        _swiglu_backward_sample, lambda dy, x, dim: _float64_grads(lambda x: _swiglu_reference(x, dim)[0], dy, x)
    ),
    "rope": Case(
        _rope_sample,
        lambda x, cos, sin, mode: (rope_reference(x, cos, sin, mode),),
        lambda x, cos, sin, mode: _rope_cancellation("y", x, cos, sin),
    ),
    "rope_backward": Case(
        _rope_backward_sample,
        lambda dy, cos, sin, mode: (rope_backward_reference(dy, cos, sin, mode),),
        lambda dy, cos, sin, mode: _rope_cancellation("dx", dy, cos, sin),
    ),
    "gelu": Case(_gelu_sample, lambda x, approximate: (torch.nn.functional.gelu(x.double(), approximate=approximate),)),
    "gelu_backward": Case(_gelu_backward_sample, lambda dy, x, approximate: (gelu_backward_reference(dy, x, approximate),)),
}
