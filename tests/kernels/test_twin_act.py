"""The activation kernels (kernels/act_kernel.h: silu_mul, swiglu, gelu and their backwards) on the
CPU twin, against airfuse's CPU kernels, on both chip families; and their float32 accuracy."""

import pytest
import torch

from airfuse import twin
from twin_helpers import SHAPES, close, generator, randn, tiling_field

CHIPS = ["Ascend910B2", "Ascend910B3", "Ascend310P3"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# The rms_norm shapes plus the LLaMA/Qwen MLP widths and odd ones.
FLAT_SHAPES = [*SHAPES, (2, 11008), (2, 13824), (1, 14336), (5, 3, 33), (7, 129)]
# swiglu inputs (x, dim): the same halves along the last dim, and other dims.
SWIGLU_CASES = [((1, 2), -1), ((3, 14), -1), ((2, 8194), -1), ((8, 8192), -1), ((1, 131072), -1), ((2, 22016), -1),
                ((2, 27648), -1), ((1, 28672), -1), ((4, 6, 10), 1), ((6, 5, 16), 0), ((3, 40, 2), -1), ((37, 6), -1)]


def _cases(shapes):
    return [pytest.param(chip, s, dt, id=f"{chip}-{s}-{str(dt)[6:]}") for chip in CHIPS for s in shapes for dt in DTYPES
            if not (chip == "Ascend310P3" and dt == torch.bfloat16)]


def _closes(run, expected):
    expected = expected if isinstance(expected, tuple) else (expected,)
    for got, want in zip(run.outputs, expected, strict=True):
        close(got, want)


@pytest.mark.parametrize("chip,shape,dtype", _cases(FLAT_SHAPES))
def test_silu_mul_and_backward(chip, shape, dtype):
    gen = generator()
    a, b, dy = (randn(shape, dtype, gen) * 4 for _ in range(3))
    _closes(twin.silu_mul(a, b, chip=chip), torch.ops.airfuse.silu_mul(a, b))
    _closes(twin.silu_mul_backward(dy, a, b, chip=chip), torch.ops.airfuse.silu_mul_backward(dy, a, b))


@pytest.mark.parametrize("chip,case,dtype", _cases(SWIGLU_CASES))
def test_swiglu_and_backward(chip, case, dtype):
    shape, dim = case
    gen = generator()
    x = randn(shape, dtype, gen) * 4
    y = torch.ops.airfuse.swiglu(x, dim)
    dy = randn(y.shape, dtype, gen)
    _closes(twin.swiglu(x, dim, chip=chip), y)
    _closes(twin.swiglu_backward(dy, x, dim, chip=chip), torch.ops.airfuse.swiglu_backward(dy, x, dim))


GELU_SHAPES = [(1, 1), (3, 7), (2, 4097), (8, 3072), (4, 14336), (1, 65536)]


@pytest.mark.parametrize("approximate", ["tanh", "none"])
@pytest.mark.parametrize("chip,shape,dtype", _cases(GELU_SHAPES))
def test_gelu_and_backward(chip, shape, dtype, approximate):
    gen = generator()
    x, dy = randn(shape, dtype, gen) * 4, randn(shape, dtype, gen)
    _closes(twin.gelu(x, approximate, chip=chip), torch.ops.airfuse.gelu(x, approximate))
    _closes(twin.gelu_backward(dy, x, approximate, chip=chip), torch.ops.airfuse.gelu_backward(dy, x, approximate))


@pytest.mark.parametrize("chip,cores", [("Ascend910B2", 48), ("Ascend910B3", 40), ("Ascend310P3", 8)])
def test_every_partition_over_cores(chip, cores):
    """Rows and column chunks over any block_dim: every core's units, idle cores, 310P windows."""
    gen = generator()
    x = randn((3, 2 * 1000 + 2), torch.float16, gen)
    dy = randn((3, 1001), torch.float16, gen)
    for bd in (1, 3, 7, cores):
        _closes(twin.swiglu(x, chip=chip, block_dim=bd), torch.ops.airfuse.swiglu(x))
        _closes(twin.swiglu_backward(dy, x, chip=chip, block_dim=bd), torch.ops.airfuse.swiglu_backward(dy, x))
        _closes(twin.gelu(dy, "none", chip=chip, block_dim=bd), torch.ops.airfuse.gelu(dy, "none"))


def test_cores_are_used_when_the_work_allows():
    x = torch.zeros(1, 2 * 48 * 8192, dtype=torch.bfloat16)  # one row, 16 KB of output per core: cut into 48 column chunks
    assert twin.swiglu(x, count_only=True).block_dim == 48
    assert twin.swiglu(torch.zeros(1, 2 * 14336, dtype=torch.bfloat16), count_only=True).block_dim == 2  # 28 KB: two cores
    assert twin.gelu(torch.zeros(4096, 4096), count_only=True, chip="Ascend910B3").block_dim == 40
    assert twin.silu_mul(torch.zeros(16), torch.zeros(16)).block_dim == 1


def _all_float32_magnitudes():
    """Every 2^-12 step of the float32 exponent range, both signs, zero and the infinities' neighbours."""
    bits = torch.arange(0, 0x7F800000, 1 << 11, dtype=torch.int64).to(torch.int32)
    pos = bits.view(torch.float32)
    return torch.cat([pos, -pos, torch.tensor([3.4028235e38, -3.4028235e38])])


# Worst error of the kernels' float32 math against float64, over the whole float32 range (kernels/README.md).
# The float64 reference uses the cancellation-free forms of airfuse/ops/gelu.py (0.5 * (1 + tanh(u)) in float64
# itself loses every digit once e^(2u) < 1e-16). Errors are relative to the size of what is summed: |x * Phi| for
# gelu, Phi + |x * Phi'| for its derivative (which crosses zero near x = -0.75), where that size is >= 1e-30.
ACCURACY = {("gelu", "tanh"): 1.5e-5, ("gelu", "none"): 8e-6, ("gelu_backward", "tanh"): 1.5e-5, ("gelu_backward", "none"): 4e-6}


def _reference(op, x, approximate):
    from airfuse.ops.gelu import _cdf, _x_times_density

    x = x.double()
    cdf = _cdf(x, approximate)
    if op == "gelu":
        return x * cdf, (x * cdf).abs()
    density = _x_times_density(x, approximate)
    return cdf + density, cdf + density.abs()


def gelu_errors(op, approximate, x):
    """(worst scaled error where the scale is >= 1e-30, worst absolute error below it) of the twin kernel."""
    if op == "gelu":
        got = twin.gelu(x, approximate).outputs[0]
    else:
        got = twin.gelu_backward(torch.ones_like(x), x, approximate).outputs[0]
    want, scale = _reference(op, x, approximate)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    finite = ~torch.isnan(want)
    err = (got.double() - want).abs()
    err[~finite] = 0
    big = scale >= 1e-30
    return (err / scale.clamp_min(1e-30))[big].max().item(), err[~big].max().item() if (~big).any() else 0.0


@pytest.mark.parametrize("op,approximate", list(ACCURACY))
def test_gelu_accuracy_over_the_float_range(op, approximate):
    scaled, absolute = gelu_errors(op, approximate, _all_float32_magnitudes())
    print(f"{op} {approximate}: worst relative error {scaled:.3g}, absolute where smaller than 1e-30 {absolute:.3g}")
    assert scaled <= ACCURACY[(op, approximate)] and absolute <= 1e-35


@pytest.mark.parametrize("chip", CHIPS)
def test_units_of_many_tiles(chip):
    """A core whose units take several tiles each (act_kernel.h): flat and row units, ends that are
    not whole 128-element steps, 310P windows."""
    gen = generator()
    x, dy = randn((1, 70001), torch.float16, gen) * 4, randn((1, 70001), torch.float16, gen)
    t = twin.act_tiling(twin.ALL_OPS["gelu_backward"], chip, 1, 70001, torch.float16, block_dim=1).data
    assert tiling_field(t, "act", "tileElems") < 70001
    _closes(twin.gelu(x, "tanh", chip=chip, block_dim=1), torch.ops.airfuse.gelu(x, "tanh"))
    _closes(twin.gelu_backward(dy, x, "tanh", chip=chip, block_dim=1), torch.ops.airfuse.gelu_backward(dy, x, "tanh"))
    g = randn((3, 2 * 30001), torch.float16, gen)
    dg = randn((3, 30001), torch.float16, gen)
    _closes(twin.swiglu(g, chip=chip, block_dim=2), torch.ops.airfuse.swiglu(g))
    _closes(twin.swiglu_backward(dg, g, chip=chip, block_dim=2), torch.ops.airfuse.swiglu_backward(dg, g))
