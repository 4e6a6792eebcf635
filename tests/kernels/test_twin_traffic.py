"""GM traffic counted by the twin: the kernels move each byte once, and count-only runs (used by
benchmarks/kernel_traffic.py for big shapes) count exactly what a full run moves."""

import pytest
import torch

from airfuse import twin

from twin_helpers import generator, randn


def _inputs(rows, cols, dtype, gamma_dtype):
    gen = generator()
    x, dy, gamma = randn((rows, cols), dtype, gen), randn((rows, cols), dtype, gen), randn((cols,), gamma_dtype, gen)
    _, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
    return x, dy, gamma, rstd


SHAPES = [(1, 4096, torch.float16, torch.float16), (128, 4096, torch.bfloat16, torch.bfloat16),
          (200, 300, torch.float16, torch.float32), (64, 8192, torch.float16, torch.float16)]


@pytest.mark.parametrize("rows,cols,dtype,gamma_dtype", SHAPES)
def test_each_byte_moves_once(rows, cols, dtype, gamma_dtype):
    x, dy, gamma, rstd = _inputs(rows, cols, dtype, gamma_dtype)
    s, g, n = x.element_size(), gamma.element_size(), rows * cols

    run = twin.rms_norm(x, gamma)
    bd = run.block_dim
    assert (run.bytes_read, run.bytes_written) == (n * s + bd * cols * g, n * s + rows * 4)

    run = twin.rms_norm_backward(dy, x, rstd, gamma)
    bd, partials = run.block_dim, (run.block_dim - 1) * cols * 4  # written by cores 1.., read by core 0
    assert run.bytes_read == 2 * n * s + rows * 4 + bd * cols * g + partials
    assert run.bytes_written == n * s + cols * g + partials

    run = twin.add(x, dy)
    assert (run.bytes_read, run.bytes_written) == (2 * n * s, n * s)


@pytest.mark.parametrize("rows,cols,dtype,gamma_dtype", SHAPES + [(2, 65536, torch.float32, torch.float32)])
def test_count_only_counts_what_a_full_run_moves(rows, cols, dtype, gamma_dtype):
    x, dy, gamma, rstd = _inputs(rows, cols, dtype, gamma_dtype)
    for fn, args in ((twin.rms_norm, (x, gamma)), (twin.rms_norm_backward, (dy, x, rstd, gamma)), (twin.add, (x, dy))):
        full, counted = fn(*args), fn(*args, count_only=True)
        assert (counted.bytes_read, counted.bytes_written, counted.block_dim) == (full.bytes_read, full.bytes_written, full.block_dim)


def test_split_rows_reread_x():
    """A row larger than UB is read twice (sum, then scale): the price of not fitting."""
    x, _, gamma, _ = _inputs(1, 65536, torch.float32, torch.float32)
    run = twin.rms_norm(x, gamma)
    assert run.bytes_read == 2 * x.nbytes + gamma.nbytes
