"""GM traffic counted by the twin: the kernels move each byte once, and count-only runs (used by
benchmarks/kernel_traffic.py for big shapes) count exactly what a full run moves."""

import pytest
import torch

from airfuse import twin

from twin_helpers import GRAD_SLICES_KEY, generator, randn, slices_field, tiling_field


def _inputs(rows, cols, dtype, gamma_dtype):
    gen = generator()
    x, dy, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), gamma_dtype, gen)
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    return x, dy, gamma, rstd


def _batches(chip, rows, cols, dtype, gamma_dtype):
    """Copy-in steps of AirfuseRmsNormGrad over all cores: rows per core / rowsPerLoop, rounded up."""
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[gamma_dtype], 0)
    per_core, remainder, per_loop, cores = (tiling_field(tile.data, "rms_norm_grad", f) for f in ("rowsPerCore", "rowsRemainder", "rowsPerLoop", "usedCores"))
    return sum(-(-(per_core + (c < remainder)) // per_loop) for c in range(cores))


def _piece_cols(chip, rows, cols, dtype, gamma_dtype):
    """rms_norm/grad_rows.h PieceCols: the float buffer of a step (resident) or chunk, per core, in 8s."""
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[gamma_dtype], 0)
    chunk, cores, float_cols, work_cols = (tiling_field(tile.data, "rms_norm_grad", f) for f in ("colsPerChunk", "usedCores", "floatCols", "workCols"))
    return (work_cols if chunk == cols else float_cols) // cores // 8 * 8


def _chunk(chip, rows, cols, dtype, gamma_dtype):
    """(colsPerChunk, rowResident) of AirfuseRmsNormGrad: colsPerChunk is cols when a row's float work fits whole."""
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[gamma_dtype], 0)
    return tuple(tiling_field(tile.data, "rms_norm_grad", f) for f in ("colsPerChunk", "rowResident"))


def _column_split(chip, rows, cols, dtype, gamma_dtype):
    """(colCores, colRows) of AirfuseRmsNormGrad: dgamma split by columns (310P), else (0, 0)."""
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[gamma_dtype], 0)
    if tile.tiling_key == GRAD_SLICES_KEY:
        return 0, 0
    return tuple(tiling_field(tile.data, "rms_norm_grad", f) for f in ("colCores", "colRows"))


SHAPES = [(1, 4096, torch.float16, torch.float16), (128, 4096, torch.bfloat16, torch.bfloat16),
          (200, 300, torch.float16, torch.float32), (64, 8192, torch.float16, torch.float16)]


# 310P moves like 910B where every core's rows and rstd values are whole 32 B blocks (else the
# overlapping windows add bytes: test_310p_windows_cost_at_most_a_block_per_core_and_row).
ALIGNED_310P = [(1, 4096, torch.float16, torch.float16), (128, 4096, torch.float32, torch.float32),
                (256, 1024, torch.float16, torch.float32)]
CASES = [pytest.param("Ascend910B2", *c, id=f"910B-{c[0]}x{c[1]}") for c in SHAPES]
CASES += [pytest.param("Ascend310P3", *c, id=f"310P-{c[0]}x{c[1]}") for c in ALIGNED_310P]


@pytest.mark.parametrize("chip,rows,cols,dtype,gamma_dtype", CASES)
def test_each_byte_moves_once(chip, rows, cols, dtype, gamma_dtype):
    x, dy, gamma, rstd = _inputs(rows, cols, dtype, gamma_dtype)
    s, g, n = x.element_size(), gamma.element_size(), rows * cols

    run = twin.rms_norm(x, gamma, chip=chip)
    bd = run.block_dim
    assert (run.bytes_read, run.bytes_written) == (n * s + bd * cols * g, n * s + rows * 4)

    run = twin.rms_norm_backward(dy, x, rstd, gamma, chip=chip)
    bd = run.block_dim
    col_cores, col_rows = _column_split(chip, rows, cols, dtype, gamma_dtype)
    tile = twin.tiling("rms_norm_grad", chip, rows, cols, twin.GE_DTYPE[dtype], twin.GE_DTYPE[gamma_dtype], 0)
    slice_cols, step, held = (slices_field(tile, f) for f in ("sliceCols", "rowsPerLoop", "sliceHeld"))
    if slice_cols:
        # Slices of columns (910B, few rows a core): x and dy once, and again (from L2 in the cost
        # model) but for the held steps' rows, the last sliceHeld steps of `step` rows (rms_norm/grad_slices.h
        # SliceStep); every core reads every rstd and every core's partial row sums, and stores its own
        # (a row of whole 32 B blocks); gamma and dgamma once.
        steps = -(-rows // step)
        streamed = steps - held
        again = rows - min(streamed * step, rows)
        rows8 = -(-rows // 8) * 8
        assert 1 <= held <= steps
        assert run.bytes_read == 4 * n * s - 2 * again * cols * s + bd * rows * 4 + cols * g + bd * bd * rows * 4
        assert run.bytes_written == n * s + cols * g + bd * rows8 * 4
    elif col_cores:
        # 310P: the row cores read x, dy, rstd and gamma once; the column cores each read their
        # slice of x and dy and every rstd again; no partial rows.
        row_cores = min(rows, bd)
        exact = 4 * n * s + (1 + col_cores) * rows * 4 + row_cores * cols * g
        blocks = _batches(chip, rows, cols, dtype, gamma_dtype) + col_cores * -(-rows // col_rows)
        assert exact <= run.bytes_read < exact + 32 * blocks  # rstd read as whole 32 B blocks
        assert run.bytes_written == n * s + cols * g
    else:
        # Partial dgamma rows: every core's when the cores sum a slice of columns each (pieces of
        # 8 float columns per core fit the float buffer: rms_norm/grad_rows.h Spread; 910B only, 310P
        # has one core here), else those of cores 1.. for core 0.
        assert chip != "Ascend310P3" or bd == 1
        spread = bd > 1 and _piece_cols(chip, rows, cols, dtype, gamma_dtype) > 0
        partials = (bd if spread else bd - 1) * cols * 4
        # Rows split in chunks read x and dy a second time (from L2 in the cost model), unless each
        # row's x and dy stay whole in UB (rowResident: only the float work goes by chunks).
        chunk, row_resident = _chunk(chip, rows, cols, dtype, gamma_dtype)
        reads = 4 if chunk < cols and not row_resident else 2
        exact = reads * n * s + rows * 4 + bd * cols * g + partials
        slack = 32 * _batches(chip, rows, cols, dtype, gamma_dtype) if chip == "Ascend310P3" else 0  # 310P: rstd as whole 32 B blocks
        assert exact <= run.bytes_read <= exact + slack
        assert run.bytes_written == n * s + cols * g + partials

    run = twin.add(x, dy, chip=chip)
    assert (run.bytes_read, run.bytes_written) == (2 * n * s, n * s)

    run = twin.add_rms_norm(x, dy, gamma, chip=chip)
    assert (run.bytes_read, run.bytes_written) == (2 * n * s + run.block_dim * cols * g, 2 * n * s + rows * 4)


COUNT_CASES = [pytest.param("Ascend910B2", *c, id=f"910B-{c[0]}x{c[1]}") for c in SHAPES + [(2, 65536, torch.float32, torch.float32)]]
COUNT_CASES += [pytest.param("Ascend310P3", *c, id=f"310P-{c[0]}x{c[1]}")
                for c in ALIGNED_310P + [(200, 300, torch.float16, torch.float32), (3, 7, torch.float32, torch.float32),
                                         (2, 70001, torch.float16, torch.float16)]]


@pytest.mark.parametrize("chip,rows,cols,dtype,gamma_dtype", COUNT_CASES)
def test_count_only_counts_what_a_full_run_moves(chip, rows, cols, dtype, gamma_dtype):
    x, dy, gamma, rstd = _inputs(rows, cols, dtype, gamma_dtype)
    for fn, args in ((twin.rms_norm, (x, gamma)), (twin.rms_norm_backward, (dy, x, rstd, gamma)), (twin.add, (x, dy)),
                     (twin.add_rms_norm, (x, dy, gamma))):
        full, counted = fn(*args, chip=chip), fn(*args, chip=chip, count_only=True)
        assert (counted.bytes_read, counted.bytes_written, counted.block_dim) == (full.bytes_read, full.bytes_written, full.block_dim)


ROPE_COUNT_CASES = [("Ascend910B2", (2, 4, 5, 64), (1, 1, 5, 64), torch.float16, torch.float32, "half"),
                    ("Ascend910B2", (3, 6), (3, 6), torch.bfloat16, torch.bfloat16, "interleave"),
                    ("Ascend310P3", (2, 5, 4, 32), (2, 5, 1, 32), torch.float16, torch.float16, "interleave")]


@pytest.mark.parametrize("chip,x_shape,table_shape,dtype,table_dtype,mode", ROPE_COUNT_CASES, ids=str)
def test_rope_count_only_counts_what_a_full_run_moves(chip, x_shape, table_shape, dtype, table_dtype, mode):
    gen = generator()
    x, cos = randn(x_shape, dtype, gen), randn(table_shape, table_dtype, gen)
    for fn in (twin.rope, twin.rope_backward):
        full, counted = fn(x, cos, cos, mode, chip=chip), fn(x, cos, cos, mode, chip=chip, count_only=True)
        assert (counted.bytes_read, counted.bytes_written, counted.block_dim) == (full.bytes_read, full.bytes_written, full.block_dim)
        # x in and out once; each core reads the slices of its rows, at most one slice more than its share
        slice_bytes = 2 * cos.shape[-1] * cos.element_size()
        assert full.bytes_written == x.nbytes
        assert 2 * cos.nbytes + x.nbytes <= full.bytes_read <= 2 * cos.nbytes + x.nbytes + full.block_dim * slice_bytes


def test_310p_windows_cost_at_most_a_block_per_core_and_row():
    """Unaligned rows on 310P: beyond 910B's traffic, each row reads and writes at most one more
    32 B block per tensor, and each core at most one more for rstd and gamma."""
    rows, cols = 200, 300
    x, _, gamma, _ = _inputs(rows, cols, torch.float16, torch.float16)
    pad, aligned = twin.rms_norm(x, gamma), twin.rms_norm(x, gamma, chip="Ascend310P3")
    gamma_reads = (aligned.block_dim - pad.block_dim) * gamma.nbytes
    extra_read = aligned.bytes_read - pad.bytes_read - gamma_reads
    extra_written = aligned.bytes_written - pad.bytes_written
    assert 0 < extra_read <= rows * 32 + aligned.block_dim * 32
    assert 0 < extra_written <= rows * 32 + aligned.block_dim * 32


def test_split_rows_reread_x():
    """A row larger than UB is read twice (sum, then scale): the price of not fitting. The residual
    form stores x in pass 1 and reads it back in pass 2."""
    x, dy, gamma, _ = _inputs(1, 65536, torch.float32, torch.float32)
    run = twin.rms_norm(x, gamma)
    assert run.bytes_read == 2 * x.nbytes + gamma.nbytes
    run = twin.add_rms_norm(x, dy, gamma)
    assert (run.bytes_read, run.bytes_written) == (3 * x.nbytes + gamma.nbytes, 2 * x.nbytes + 4)


def _activation_runs(chip, shape, dtype, **kw):
    """(launch, bytes of inputs, bytes of outputs) of each activation kernel on a, b, dy of `shape`."""
    gen = generator()
    a, b, dy = (randn(shape, dtype, gen) for _ in range(3))
    x = torch.cat([a, b], -1)
    n = a.nbytes
    return [(twin.silu_mul(a, b, chip=chip, **kw), 2 * n, n), (twin.silu_mul_backward(dy, a, b, chip=chip, **kw), 3 * n, 2 * n),
            (twin.swiglu(x, chip=chip, **kw), 2 * n, n), (twin.swiglu_backward(dy, x, chip=chip, **kw), 3 * n, 2 * n),
            (twin.gelu(a, "none", chip=chip, **kw), n, n), (twin.gelu_backward(dy, a, chip=chip, **kw), 2 * n, n)]


# Aligned on 310P: every unit is whole 32 B blocks; (3, 1001) float16 is not: at most one window per unit.
ACT_CASES = [("Ascend910B2", (4, 11008), torch.bfloat16), ("Ascend910B2", (3, 1001), torch.float16), ("Ascend910B3", (1, 4097), torch.float32),
             ("Ascend310P3", (4, 11008), torch.float16), ("Ascend310P3", (3, 1001), torch.float16)]


@pytest.mark.parametrize("chip,shape,dtype", ACT_CASES, ids=str)
def test_activations_move_each_byte_once(chip, shape, dtype):
    counted = _activation_runs(chip, shape, dtype, count_only=True)
    for (run, read, written), (count, _, _) in zip(_activation_runs(chip, shape, dtype), counted, strict=True):
        assert (count.bytes_read, count.bytes_written, count.block_dim) == (run.bytes_read, run.bytes_written, run.block_dim)
        if chip == "Ascend310P3" and shape[-1] % 16:
            # each unit (a row, or a core's part of the flat tensor) ends in one window: at most one more 32 B block
            # per operand (<= 3 in, 2 out) and unit
            units = shape[0] + run.block_dim
            assert read <= run.bytes_read <= read + 3 * 32 * units and written <= run.bytes_written <= written + 2 * 32 * units
        else:
            assert (run.bytes_read, run.bytes_written) == (read, written)
