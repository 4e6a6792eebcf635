"""The kernels in kernels/, run on the CPU twin, against airfuse's CPU kernels."""

import random

import pytest
import torch

from airfuse import twin

from twin_helpers import (NORM_RESIDENT_CHUNKS_KEY, NORM_RESIDENT_KEY, RMS_NORM_COMBOS, SHAPES, close, generator, norm_field, randn, slices_field,
                          tiling_field)


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


def check_add_rms_norm(x1, x2, gamma, **kw):
    run = twin.add_rms_norm(x1, x2, gamma, 1e-6, **kw)
    y, rstd, x = torch.ops.airfuse.add_rms_norm(x1, x2, gamma, 1e-6)
    # x: both add in float32 and round once, bit-identical; y and rstd come from that x.
    torch.testing.assert_close(run.outputs[2], x, rtol=0, atol=0)
    close(run.outputs[0], y)
    close(run.outputs[1], rstd)
    return run


def check_add(x, y, **kw):
    run = twin.add(x, y, **kw)
    # Both add in float32 and round once: bit-identical.
    torch.testing.assert_close(run.outputs[0], torch.ops.airfuse.add(x, y), rtol=0, atol=0)
    return run


# (chip, vector cores): 910B (48 and 40 cores) moves unaligned tails with DataCopyPad, 310P with whole 32 B blocks
# and overlapping windows (kernels/gm_copy.h); 310P has no bfloat16.
CHIPS = [("Ascend910B2", 48), ("Ascend910B3", 40), ("Ascend310P3", 8)]
# RmsNormGrad hands dgamma rows across cores with a hardware SyncAll; 310P has none: one core.
HARD_SYNC_ALL = {"Ascend910B2": True, "Ascend910B3": True, "Ascend310P3": False}


def _chip_has(chip, *dtypes):
    return chip != "Ascend310P3" or torch.bfloat16 not in dtypes


def _dt_id(dtypes):
    return "-".join(str(d).removeprefix("torch.") for d in dtypes)


RMS_CASES = [pytest.param(chip, shape, d, id=f"{chip}-{shape}-{_dt_id(d)}")
             for chip, _ in CHIPS for shape in SHAPES for d in RMS_NORM_COMBOS if _chip_has(chip, *d)]


@pytest.mark.parametrize("chip,shape,dtypes", RMS_CASES)
def test_rms_norm_and_grad(chip, shape, dtypes):
    gen = generator()
    x_dt, g_dt = dtypes
    x, gamma, dy = randn(shape, x_dt, gen), randn(shape[-1:], g_dt, gen), randn(shape, x_dt, gen)
    check_rms_norm(x, gamma, chip=chip)
    check_rms_norm_backward(dy, x, gamma, chip=chip)
    if HARD_SYNC_ALL[chip] and shape[0] <= 8:  # a row or more a core as well: by default these take slices of columns
        check_rms_norm_backward(dy, x, gamma, chip=chip, block_dim=shape[0])
    check_add_rms_norm(x, dy, gamma, chip=chip)


# LLaMA/Qwen MLP widths: add_rms_norm keeps four row tiles and up to three float32 rows in UB, so
# these rows are split in column chunks (on 310P float16 11008 still fits); (2, 3, 5): 3-d, rows under 32 B.
@pytest.mark.parametrize("chip", [c for c, _ in CHIPS])
@pytest.mark.parametrize("shape", [(3, 11008), (2, 13824), (3, 14336), (2, 3, 5)], ids=str)
def test_add_rms_norm_llm_widths(chip, shape):
    gen = generator()
    for x_dt, g_dt in RMS_NORM_COMBOS:
        if _chip_has(chip, x_dt, g_dt):
            check_add_rms_norm(randn(shape, x_dt, gen), randn(shape, x_dt, gen), randn(shape[-1:], g_dt, gen), chip=chip)


ADD_CASES = [pytest.param(chip, shape, d, id=f"{chip}-{shape}-{_dt_id([d])}")
             for chip, _ in CHIPS for shape in SHAPES + [(3, 5, 129), (3, 1)]
             for d in (torch.float32, torch.float16, torch.bfloat16) if _chip_has(chip, d)]


@pytest.mark.parametrize("chip,shape,dtype", ADD_CASES)
def test_add(chip, shape, dtype):
    gen = generator()
    check_add(randn(shape, dtype, gen), randn(shape, dtype, gen), chip=chip)


def _partition_cases():
    cases = []
    for chip, cores in CHIPS:
        rng = random.Random(4)
        fixed = [(1, 1), (1, cores), (200, cores), (cores, cores), (cores + 1, cores), (200, 1), (97, cores - 1)]
        for rows, block_dim in fixed + [(rng.randint(1, 200), rng.randint(1, cores)) for _ in range(17)]:
            cases.append(pytest.param(chip, rows, block_dim, id=f"{chip}-{rows}x{block_dim}"))
    return cases


@pytest.mark.parametrize("chip,rows,block_dim", _partition_cases())
def test_every_row_partition(chip, rows, block_dim):
    """Rows 1..200 over every block_dim of the chip (also more cores than rows): every row is done once."""
    gen = generator()
    cols = random.Random(rows * 100 + block_dim).choice([1, 5, 16, 64, 127, 300])
    combos = [c for c in RMS_NORM_COMBOS if _chip_has(chip, *c)]
    x_dt, g_dt = combos[(rows + block_dim) % len(combos)]
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), g_dt, gen), randn((rows, cols), x_dt, gen)
    assert check_rms_norm(x, gamma, block_dim=block_dim, chip=chip).block_dim == block_dim
    grad_block_dim = block_dim if HARD_SYNC_ALL[chip] else 1
    assert check_rms_norm_backward(dy, x, gamma, block_dim=grad_block_dim, chip=chip).block_dim == grad_block_dim
    assert check_add(x, dy, block_dim=block_dim, chip=chip).block_dim == block_dim
    assert check_add_rms_norm(x, dy, gamma, block_dim=block_dim, chip=chip).block_dim == block_dim


@pytest.mark.parametrize("chip,cores", [("Ascend910B2", 48), ("Ascend910B3", 40), ("Ascend310P3", 8)])
def test_chip_core_counts(chip, cores):
    gen = generator()
    x, gamma, dy = randn((8192, 64), torch.float16, gen), randn((64,), torch.float16, gen), randn((8192, 64), torch.float16, gen)
    assert check_rms_norm(x, gamma, chip=chip).block_dim == cores
    assert check_rms_norm_backward(dy, x, gamma, chip=chip).block_dim == cores  # 310P: 64 float16 columns in 8 slices
    assert check_add(x, dy, chip=chip).block_dim == cores
    assert check_add_rms_norm(x, dy, gamma, chip=chip).block_dim == cores


# rstd on the vector unit (steps of >= 10 resident rows of <= 255 float blocks). A2: steps of
# more than one 248-row call (16 columns, one core), rows with padding, float32 rows. 310P (steps of
# whole blocks of rows): a last step of 3 rows (35 = 16 + 16 + 3 on one core), rstd's stage flushed
# between steps (4099 rows on one core: more than UB leaves for a stage of all of them), float32
# rows with a window head, 75 rows per core in steps of 72.
@pytest.mark.parametrize("chip,rows,cols,dtype,block_dim", [("Ascend910B2", 3000, 16, torch.bfloat16, 1), ("Ascend910B2", 900, 100, torch.float16, 2),
                                                            ("Ascend910B2", 400, 600, torch.float32, 1), ("Ascend310P3", 35, 512, torch.float16, 1), ("Ascend310P3", 4099, 16, torch.float16, 1),
                                                            ("Ascend310P3", 35, 260, torch.float32, 1), ("Ascend310P3", 600, 40, torch.float16, 0)],
                         ids=str)
def test_vector_rstd_steps(chip, rows, cols, dtype, block_dim):
    tile = twin.tiling("rms_norm", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[dtype], 1e-6, block_dim)
    rows_per_loop, rstd_vec_bytes = (tiling_field(tile.data, "rms_norm", f) for f in ("rowsPerLoop", "rstdVecBytes"))
    assert rstd_vec_bytes > 0 and rows_per_loop >= 10
    gen = generator()
    x, x2, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), dtype, gen)
    check_rms_norm(x, gamma, chip=chip, block_dim=block_dim)
    check_add_rms_norm(x, x2, gamma, chip=chip, block_dim=block_dim)


# 310P resident steps (rms_norm/fwd_resident.h): cores of several steps and a shorter last one,
# rows of 32 B and more: 1024 x 128 half, 8192 x 64 half, 128 x 1024 half, 128 x 128 float32.
@pytest.mark.parametrize("rows,cols,dtype", [(1024, 128, torch.float16), (8192, 64, torch.float16), (128, 1024, torch.float16),
                                             (128, 128, torch.float32)], ids=str)
def test_310p_step_shapes(rows, cols, dtype):
    tile = twin.tiling("rms_norm", "Ascend310P3", rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[dtype], 1e-6, 0)
    assert tile.tiling_key == NORM_RESIDENT_KEY
    gen = generator()
    x, x2, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), dtype, gen)
    check_rms_norm(x, gamma, chip="Ascend310P3")
    check_add_rms_norm(x, x2, gamma, chip="Ascend310P3")


# A2 cores of one resident step of two or more rows (rms_norm/fwd_resident.h): the step's rows go
# through each vector op together, rows with padding (455 x 100, 423 x 120) included.
@pytest.mark.parametrize("chip,rows,cols,dtype", [("Ascend910B2", 1024, 128, torch.bfloat16), ("Ascend910B3", 1024, 128, torch.bfloat16),
                                                  ("Ascend910B2", 128, 1024, torch.bfloat16), ("Ascend910B3", 128, 1024, torch.float16),
                                                  ("Ascend910B2", 455, 100, torch.float16), ("Ascend910B2", 96, 1024, torch.bfloat16),
                                                  ("Ascend910B2", 423, 120, torch.float16)], ids=str)
def test_910b_one_step_a_core(chip, rows, cols, dtype):
    gen = generator()
    x, x2, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), dtype, gen)
    run = check_rms_norm(x, gamma, chip=chip)
    per_core = -(-rows // run.block_dim)
    tile = twin.tiling("rms_norm", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[dtype], 1e-6, 0)
    assert tiling_field(tile.data, "rms_norm", "rowsPerLoop") >= per_core > 1  # one step of two or more rows a core
    check_add_rms_norm(x, x2, gamma, chip=chip)


# Rows whose tiles fit in UB (rms_norm: twice; add_rms_norm: once) but whose float work does not
# (rms_norm/fwd_resident_chunks.h): resident, float work in column chunks (the last one shorter:
# 16384 = 4 x 3328 + 3072 on 910B), each chunk's squares summed into its own block; add_rms_norm at
# 8192 too (its four tiles fit once, so it takes this strategy where rms_norm keeps resident steps).
@pytest.mark.parametrize("chip,rows,dtype", [("Ascend910B2", 5, torch.bfloat16), ("Ascend910B2", 3, torch.float16), ("Ascend310P3", 7, torch.float16)],
                         ids=str)
@pytest.mark.parametrize("op", ["rms_norm", "add_rms_norm"])
def test_resident_rows_in_float_chunks(op, chip, rows, dtype):
    check_resident_rows_in_float_chunks(op, 16384, chip, rows, dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_add_rms_norm_resident_rows_in_float_chunks_at_8192(dtype):
    check_resident_rows_in_float_chunks("add_rms_norm", 8192, "Ascend910B2", 5, dtype)


def check_resident_rows_in_float_chunks(op, cols, chip, rows, dtype):
    tile = twin.tiling(op, chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[dtype], 1e-6, 2)
    assert tile.tiling_key == NORM_RESIDENT_CHUNKS_KEY and norm_field(tile, "colsPerChunk") < cols
    gen = generator()
    x, x2, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), dtype, gen)
    if op == "rms_norm":
        check_rms_norm(x, gamma, chip=chip, block_dim=2)
    else:
        check_add_rms_norm(x, x2, gamma, chip=chip, block_dim=2)


@pytest.mark.parametrize("x_dt,g_dt", [(torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32)], ids=["bf16-bf16", "bf16-f32"])
def test_310p_refuses_bfloat16(x_dt, g_dt):
    """310P has no bfloat16: the tiling refuses it, naming the op, the chip and the dtype."""
    gen = generator()
    x, gamma = randn((4, 64), x_dt, gen), randn((64,), g_dt, gen)
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    with pytest.raises(twin.TwinError, match="^AirfuseRmsNorm: bfloat16 does not exist on Ascend310P3$"):
        twin.rms_norm(x, gamma, chip="Ascend310P3")
    with pytest.raises(twin.TwinError, match="^AirfuseRmsNormGrad: bfloat16 does not exist on Ascend310P3$"):
        twin.rms_norm_backward(x, x, rstd, gamma, chip="Ascend310P3")
    with pytest.raises(twin.TwinError, match="^AirfuseAddRmsNorm: bfloat16 does not exist on Ascend310P3$"):
        twin.add_rms_norm(x, x, gamma, chip="Ascend310P3")
    with pytest.raises(twin.TwinError, match="^AirfuseAdd: bfloat16 does not exist on Ascend310P3$"):
        twin.add(x, x, chip="Ascend310P3")


def test_310p_gives_each_core_a_whole_block():
    """Rows under 32 B: a forced block_dim keeps its cores, but only as many get rows as can each
    write >= one 32 B block of y and of rstd (9 rows of 1 float: one core)."""
    tile = twin.tiling("rms_norm", "Ascend310P3", 9, 1, 0, 0, 1e-6, 8)
    rows_per_core, remainder = (tiling_field(tile.data, "rms_norm", f) for f in ("rowsPerCore", "rowsRemainder"))
    assert tile.block_dim == 8 and (rows_per_core, remainder) == (9, 0)
    gen = generator()
    x, gamma = randn((9, 1), torch.float32, gen), randn((1,), torch.float32, gen)
    check_rms_norm(x, gamma, chip="Ascend310P3", block_dim=8)


@pytest.mark.parametrize("rows,cols,dtype", [(600, 4096, torch.float16), (40000, 3, torch.float32)], ids=str)
def test_310p_streams_flush_across_batches(rows, cols, dtype):
    """More rows per core than one batch holds: rstd (and y, dx of rows under 32 B) leave the
    staging buffer in several flushes, each keeping the block the final window may need."""
    tile = twin.tiling("rms_norm", "Ascend310P3", rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[dtype], 1e-6, 0)
    rows_per_core, rows_per_loop = (tiling_field(tile.data, "rms_norm", f) for f in ("rowsPerCore", "rowsPerLoop"))
    assert rows_per_core > rows_per_loop
    gen = generator()
    x, gamma, dy = randn((rows, cols), dtype, gen), randn((cols,), dtype, gen), randn((rows, cols), dtype, gen)
    check_rms_norm(x, gamma, chip="Ascend310P3")
    check_rms_norm_backward(dy, x, gamma, chip="Ascend310P3")
    check_add_rms_norm(x, dy, gamma, chip="Ascend310P3")


def test_310p_grad_refuses_several_cores_without_a_column_split():
    """310P has no hardware SyncAll for the cores to sum each other's dgamma rows; rows of 100
    float16 (not whole 32 B blocks) cannot be split by columns either."""
    gen = generator()
    x, gamma = randn((16, 100), torch.float16, gen), randn((100,), torch.float16, gen)
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    with pytest.raises(twin.TwinError, match="^AirfuseRmsNormGrad: block_dim 2 needs a hardware SyncAll or dgamma split by columns"):
        twin.rms_norm_backward(x, x, rstd, gamma, chip="Ascend310P3", block_dim=2)
    assert check_rms_norm_backward(x, x, gamma, chip="Ascend310P3").block_dim == 1


# (rows, cols, x dtype, gamma dtype, block_dim): resident rows of float and float16 (float and half
# dgamma), a last slice narrower than the others (20000 = 7 x 2512 + 2416), split rows, forced cores.
COLUMN_CASES = [(37, 256, torch.float32, torch.float32, 0), (100, 1024, torch.float16, torch.float32, 0), (45, 4096, torch.float16, torch.float16, 0),
                (3, 20000, torch.float16, torch.float16, 0), (2, 32768, torch.float32, torch.float32, 0), (50, 96, torch.float16, torch.float16, 3)]


@pytest.mark.parametrize("rows,cols,x_dt,g_dt,block_dim", COLUMN_CASES, ids=str)
def test_310p_grad_splits_dgamma_by_columns(rows, cols, x_dt, g_dt, block_dim):
    """310P: each core sums dgamma over every row for a slice of columns (no SyncAll needed)."""
    check_column_split("Ascend310P3", rows, cols, x_dt, g_dt, block_dim, min(rows, 8))


# (rows, cols, x dtype, gamma dtype): resident rows of many a core; split rows (16384, 12288) and
# rows that fit once on one buffer (float32 8192), >= 3 a core.
P310_MANY_ROWS = [(300, 1024, torch.float16, torch.float32), (1376, 128, torch.float16, torch.float16), (203, 2056, torch.float32, torch.float32),
                  (24, 16384, torch.float16, torch.float16), (24, 12288, torch.float16, torch.float16), (27, 8192, torch.float32, torch.float32)]


@pytest.mark.parametrize("rows,cols,x_dt,g_dt", P310_MANY_ROWS, ids=str)
def test_310p_grad_with_many_rows_a_core_splits_dgamma_by_columns(rows, cols, x_dt, g_dt):
    """310P with many rows a core still splits dgamma by columns: no partial rows meet across cores
    (no hardware SyncAll; the software one needs counters zeroed before the launch, which op_host
    cannot give), no dgamma terms summed in UB across chunks (splitAcc is 910B's)."""
    chip = "Ascend310P3"
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[x_dt], twin.GE_DTYPE[g_dt], 0)
    assert tiling_field(tile.data, "rms_norm_grad", "splitAcc") == 0
    check_column_split(chip, rows, cols, x_dt, g_dt, 0, min(rows, 8))


@pytest.mark.parametrize("rows,cols,x_dt,g_dt", [(5, 20000, torch.bfloat16, torch.float32), (60, 16384, torch.float16, torch.float16)], ids=str)
def test_910b_split_rows_sum_dgamma_in_ub(rows, cols, x_dt, g_dt):
    """910B: rows split in chunks sum their dgamma terms in a float32 row of UB (splitAcc), one
    partial row per core in the workspace, no column split; at the block_dim the tiling gives such
    rows when a core has more than a few (test below; fewer take slices of columns by default)."""
    chip = "Ascend910B2"
    cores = -(-rows // -(-rows // 48))
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[x_dt], twin.GE_DTYPE[g_dt], cores)
    col_cores, split_acc = (tiling_field(tile.data, "rms_norm_grad", f) for f in ("colCores", "splitAcc"))
    assert (col_cores, split_acc) == (0, 1) and tile.workspace_bytes == (16 << 20) + cores * cols * 4
    gen = generator()
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), g_dt, gen), randn((rows, cols), x_dt, gen)
    assert check_rms_norm_backward(dy, x, gamma, chip=chip, block_dim=cores).block_dim == cores


@pytest.mark.parametrize("rows", [250, 1000])
def test_910b_split_rows_take_the_fewest_cores_that_keep_the_busiest_cores_rows(rows):
    """Tiling only: split rows, more than a few a core, on the fewest cores that keep the busiest
    core's rows (250 rows: 42 of 6), summing dgamma in UB (splitAcc), not slices of columns."""
    tile = twin.tiling("rms_norm_grad", "Ascend910B2", rows, 16384, twin.GE_DTYPE[torch.bfloat16], twin.GE_DTYPE[torch.bfloat16], 0)
    assert slices_field(tile, "sliceCols") == 0
    assert (tiling_field(tile.data, "rms_norm_grad", "splitAcc"), tile.block_dim) == (1, -(-rows // -(-rows // 48)))


# (chip, rows, cols, x dtype, gamma dtype): several steps (the last one short) and one; a last core
# with a shorter slice; float32 rows and gamma; a single row; steps read again in pass 2 before the
# held ones (160 x 2600: 4 of 11; 72 x 8000 float32: 4 of 5, rows of 4 repeats, a shorter last slice).
SLICE_CASES = [("Ascend910B2", 128, 4096, torch.bfloat16, torch.bfloat16), ("Ascend910B3", 20, 5000, torch.float16, torch.float32),
               ("Ascend910B2", 77, 3000, torch.float32, torch.float32), ("Ascend910B2", 1, 16384, torch.bfloat16, torch.bfloat16),
               ("Ascend910B3", 40, 2000, torch.bfloat16, torch.float32), ("Ascend910B3", 160, 2600, torch.bfloat16, torch.bfloat16),
               ("Ascend910B3", 72, 8000, torch.float32, torch.float32)]


@pytest.mark.parametrize("chip,rows,cols,x_dt,g_dt", SLICE_CASES, ids=str)
def test_910b_few_rows_a_core_take_slices_of_columns(chip, rows, cols, x_dt, g_dt):
    """910B, few rows a core: each core a slice of columns of every row; the rows' sums meet in the
    workspace across SyncAll (a block-aligned float row per core), dgamma whole on each core."""
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[x_dt], twin.GE_DTYPE[g_dt], 0)
    slice_cols, cores = (slices_field(tile, f) for f in ("sliceCols", "usedCores"))
    assert slice_cols > 0 and slice_cols * x_dt.itemsize % 128 == 0 and cores == -(-cols // slice_cols) == tile.block_dim
    assert tile.workspace_bytes == (16 << 20) + cores * -(-rows // 8) * 8 * 4
    gen = generator()
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), g_dt, gen), randn((rows, cols), x_dt, gen)
    check_rms_norm_backward(dy, x, gamma, chip=chip)


# Rows too long for slice steps of 8 rows in UB (the tiling once gave steps of 2 and 3 rows: the
# packed sums of the second step started off a 32 B block, ascendc_facts.md 1.3, and the parts of
# the last step and of the others overran their UB buffer, which the twin refused).
@pytest.mark.parametrize("rows,cols,x_dt", [(3, 79909, torch.float32), (4, 89122, torch.bfloat16)], ids=str)
def test_910b_slice_steps_past_the_first_start_at_whole_blocks_of_rows(rows, cols, x_dt):
    chip, dt = "Ascend910B2", twin.GE_DTYPE[x_dt]
    for r in range(2, 13):
        for c in range(60000, 100000, 4999):
            tile = twin.tiling("rms_norm_grad", chip, r, c, dt, dt, 0)
            slice_cols, step = (slices_field(tile, f) for f in ("sliceCols", "rowsPerLoop"))
            assert slice_cols == 0 or step % 8 == 0 or step >= r, (r, c, step)
    gen = generator()
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), x_dt, gen), randn((rows, cols), x_dt, gen)
    check_rms_norm_backward(dy, x, gamma, chip=chip)


def test_910b_split_rows_too_long_for_ub_sums_split_dgamma_by_columns():
    """910B: a float32 dgamma row that does not fit beside 1024-column chunks: the column split."""
    check_column_split("Ascend910B2", 3, 40000, torch.float32, torch.float32, 48, 3)  # by default 3 rows take slices of columns


def check_column_split(chip, rows, cols, x_dt, g_dt, block_dim, row_cores):
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[x_dt], twin.GE_DTYPE[g_dt], block_dim)
    col_cores = tiling_field(tile.data, "rms_norm_grad", "colCores")
    system = {"Ascend310P3": 2 << 20, "Ascend910B2": 16 << 20}[chip]
    assert col_cores >= 2 and tile.workspace_bytes == system  # no partial rows
    gen = generator()
    x, gamma, dy = randn((rows, cols), x_dt, gen), randn((cols,), g_dt, gen), randn((rows, cols), x_dt, gen)
    assert check_rms_norm_backward(dy, x, gamma, chip=chip, block_dim=block_dim).block_dim == (block_dim or max(col_cores, row_cores))
