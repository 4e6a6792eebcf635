"""The rope kernels (kernels/rope.cpp, rope_grad.cpp) on the CPU twin against airfuse's CPU kernels.

Both compute in float32 with the same products and one rounding to x's dtype, so the outputs
are bit-identical. cos/sin broadcast over batch and/or heads in the layouts LLMs use.
"""

import random

import pytest
import torch

from airfuse import twin

from twin_helpers import generator, randn

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
COMBOS = [(F32, F32), (F16, F16), (F16, F32), (BF16, BF16), (BF16, F32)]
CHIPS = [("Ascend910B2", 48), ("Ascend910B3", 40), ("Ascend310P3", 8)]

# (x shape, cos/sin shape)
LLM_SHAPES = [
    ((2, 8, 16, 128), (1, 1, 16, 128)),   # [B, H, S, D], tables per position
    ((2, 4, 16, 64), (2, 1, 16, 64)),     # Hugging Face: [B, 1, S, D]
    ((2, 16, 8, 64), (2, 16, 1, 64)),     # [B, S, H, D] (torch_npu's BSND), tables per batch and position
    ((2, 16, 8, 128), (1, 16, 1, 128)),   # two broadcast groups: batch outside, heads inside
    ((1, 32, 1, 128), (1, 1, 1, 128)),    # decode: one position, every head
]
# Odd shapes (910B: any even D moves with DataCopyPad).
ODD_SHAPES = [((3, 6), (3, 6)), ((5, 2), (1, 2)), ((2, 3, 4, 5, 10), (2, 1, 4, 1, 10)), ((7, 1, 3, 34), (1, 1, 3, 34)), ((1, 1, 1, 256), (1, 1, 1, 256))]


def _chip_has(chip, combo):
    return chip != "Ascend310P3" or BF16 not in combo


def check(x_shape, table_shape, combo, mode, **kw):
    gen = generator()
    x_dt, t_dt = combo
    x, cos, sin = randn(x_shape, x_dt, gen), randn(table_shape, t_dt, gen), randn(table_shape, t_dt, gen)
    run = twin.rope(x, cos, sin, mode, **kw)
    torch.testing.assert_close(run.outputs[0], torch.ops.airfuse.rope(x, cos, sin, mode), rtol=0, atol=0)
    back = twin.rope_backward(x, cos, sin, mode, **kw)
    torch.testing.assert_close(back.outputs[0], torch.ops.airfuse.rope_backward(x, cos, sin, mode), rtol=0, atol=0)
    assert back.block_dim == run.block_dim
    return run


CASES = [pytest.param(chip, xs, ts, combo, id=f"{chip}-{list(xs)}-{list(ts)}-{combo[0]}-{combo[1]}".replace("torch.", ""))
         for chip, _ in CHIPS for xs, ts in LLM_SHAPES for combo in COMBOS if _chip_has(chip, combo)]
CASES += [pytest.param("Ascend910B2", xs, ts, combo, id=f"odd-{list(xs)}-{list(ts)}-{combo[0]}-{combo[1]}".replace("torch.", ""))
          for xs, ts in ODD_SHAPES for combo in COMBOS]


@pytest.mark.parametrize("chip,x_shape,table_shape,combo", CASES)
@pytest.mark.parametrize("mode", ["half", "interleave"])
def test_rope_and_grad(chip, x_shape, table_shape, combo, mode):
    check(x_shape, table_shape, combo, mode, chip=chip)


def _partition_cases():
    cases = []
    for chip, cores in CHIPS:
        rng = random.Random(10)
        for block_dim in [1, cores, cores - 1] + [rng.randint(2, cores) for _ in range(5)]:
            cases.append(pytest.param(chip, block_dim, id=f"{chip}-{block_dim}"))
    return cases


@pytest.mark.parametrize("chip,block_dim", _partition_cases())
def test_every_partition_of_groups(chip, block_dim):
    """Forced block_dim: cores start and end inside broadcast groups and inside runs of rows."""
    assert check((3, 5, 7, 32), (1, 5, 1, 32), (F16, F32), "interleave", chip=chip, block_dim=block_dim).block_dim == block_dim
    assert check((3, 7, 32), (3, 7, 32), (F32, F32), "half", chip=chip, block_dim=block_dim).block_dim == block_dim


@pytest.mark.parametrize("chip,cores", CHIPS)
def test_every_core_is_used(chip, cores):
    assert check((4, 64, 32, 128), (1, 1, 32, 128), (F16, F16), "half", chip=chip).block_dim == cores


def test_310p_refuses_rows_that_are_not_whole_blocks():
    gen = generator()
    x, cos = randn((4, 10), F16, gen), randn((4, 10), F16, gen)
    with pytest.raises(twin.TwinError, match=r"^AirfuseRope: on Ascend310P3 \(no DataCopyPad\) the last dim times each dtype's size must be "
                                             r"a multiple of 32 bytes, got 10$"):
        twin.rope(x, cos, cos, chip="Ascend310P3")
    with pytest.raises(twin.TwinError, match="^AirfuseRopeGrad: bfloat16 does not exist on Ascend310P3$"):
        twin.rope_backward(x.bfloat16(), cos.bfloat16(), cos.bfloat16(), chip="Ascend310P3")


def test_tables_load_once_per_slice():
    """cos/sin are read once per slice a core needs, not once per x row."""
    gen = generator()
    x, cos = randn((2, 32, 64, 128), F16, gen), randn((1, 1, 64, 128), F16, gen)
    run = twin.rope(x, cos, cos, block_dim=1)
    assert run.bytes_read == x.nbytes + 2 * cos.nbytes and run.bytes_written == x.nbytes
