"""The kernels in kernels/, run on the CPU twin, against airfuse's CPU kernels."""

import random

import pytest
import torch

from airfuse import twin

from twin_helpers import RMS_NORM_COMBOS, SHAPES, close, generator, randn


def check_rms_norm(x, gamma, **kw):
    run = twin.rms_norm(x, gamma, 1e-6, **kw)
    y, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    close(run.outputs[0], y)
    close(run.outputs[1], rstd)
    return run


def check_rms_norm_backward(dy, x, gamma, **kw):
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    run = twin.rms_norm_backward(dy, x, rstd, gamma, **kw)
    dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma)
    close(run.outputs[0], dx)
    # dgamma sums every row in float32, in a different order than torch.sum.
    close(run.outputs[1], dgamma, scale=dgamma.float().abs().max().item())
    return run


def check_add(x, y, **kw):
    run = twin.add(x, y, **kw)
    # Both add in float32 and round once: bit-identical.
    torch.testing.assert_close(run.outputs[0], torch.ops.airfuse.add(x, y), rtol=0, atol=0)
    return run


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtypes", RMS_NORM_COMBOS, ids=lambda d: f"{d[0]}-{d[1]}".replace("torch.", ""))
def test_rms_norm_and_grad(shape, dtypes):
    gen = generator()
    x_dt, g_dt = dtypes
    x, gamma, dy = randn(shape, x_dt, gen), randn(shape[-1:], g_dt, gen), randn(shape, x_dt, gen)
    check_rms_norm(x, gamma)
    check_rms_norm_backward(dy, x, gamma)


@pytest.mark.parametrize("shape", SHAPES + [(3, 5, 129)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_add(shape, dtype):
    gen = generator()
    check_add(randn(shape, dtype, gen), randn(shape, dtype, gen))


def _partition_cases():
    rng = random.Random(4)
    cases = [(1, 1), (1, 48), (200, 48), (48, 48), (49, 48), (200, 1), (97, 40)]
    cases += [(rng.randint(1, 200), rng.randint(1, 48)) for _ in range(17)]
    return cases


@pytest.mark.parametrize("rows,block_dim", _partition_cases())
def test_every_row_partition(rows, block_dim):
    gen = generator()
    """Rows 1..200 over block_dim 1..48 (also more cores than rows): every row is done once."""
    cols = random.Random(rows * 100 + block_dim).choice([1, 5, 16, 64, 127, 300])
    x_dt, g_dt = RMS_NORM_COMBOS[(rows + block_dim) % len(RMS_NORM_COMBOS)]
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), g_dt, gen), randn((rows, cols), x_dt, gen)
    assert check_rms_norm(x, gamma, block_dim=block_dim).block_dim == block_dim
    assert check_rms_norm_backward(dy, x, gamma, block_dim=block_dim).block_dim == block_dim
    assert check_add(x, dy, block_dim=block_dim).block_dim == block_dim


@pytest.mark.parametrize("chip,cores", [("Ascend910B2", 48), ("Ascend910B3", 40)])
def test_chip_core_counts(chip, cores):
    gen = generator()
    x, gamma, dy = randn((8192, 64), torch.float16, gen), randn((64,), torch.float16, gen), randn((8192, 64), torch.float16, gen)
    assert check_rms_norm(x, gamma, chip=chip).block_dim == cores
    assert check_rms_norm_backward(dy, x, gamma, chip=chip).block_dim == cores
    assert check_add(x, dy, chip=chip).block_dim == cores


def test_310p_is_refused_with_the_reason():
    gen = generator()
    x, gamma = randn((4, 64), torch.float16, gen), randn((64,), torch.float16, gen)
    with pytest.raises(twin.TwinError, match="Ascend310P3 has no DataCopyPad"):
        twin.rms_norm(x, gamma, chip="Ascend310P3")
    with pytest.raises(twin.TwinError, match="bfloat16 does not exist on Ascend310P3"):
        twin.add(x.bfloat16(), x.bfloat16(), chip="Ascend310P3")


def test_float64_is_not_an_npu_dtype():
    gen = generator()
    x = randn((2, 8), torch.float64, gen)
    with pytest.raises(TypeError, match="x has dtype float64"):
        twin.rms_norm(x, x[0])
