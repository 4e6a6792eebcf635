"""The twin's launcher never takes Python down and never narrows a value silently: huge block_dim,
values beyond their C type, tensors it cannot address, and thread start failures become TwinError."""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from airfuse import twin


def test_a_block_dim_above_the_core_count_runs_in_waves():
    """The low-level launcher takes any block_dim the hardware takes; blocks past the tiling's cores
    have no elements, as on the NPU when block_dim exceeds what the tiling used."""
    x, y = torch.randn(3, 5000), torch.randn(3, 5000)
    tile = twin.tiling("add", twin.DEFAULT_CHIP, x.numel(), twin.GE_DTYPE[x.dtype], 0)
    tile.block_dim = 5000
    z = torch.empty_like(x)
    twin.launch("airfuse_add__float32", [("x", x), ("y", y), ("z", z), ("workspace", None)], tile)
    torch.testing.assert_close(z, torch.ops.airfuse.add(x, y))


@pytest.mark.parametrize("block_dim", [2**32 + 5, -1, 2**64])
def test_values_beyond_their_c_type_are_refused_not_wrapped(block_dim):
    x = torch.randn(2, 8)
    with pytest.raises(twin.TwinError, match=rf"^twin tiling add: block_dim is {block_dim}, outside the c_uint range 0\.\.4294967295$"):
        twin.add(x, x, block_dim=block_dim)
    with pytest.raises(twin.TwinError, match=rf"^twin tiling rms_norm: block_dim is {block_dim}, outside the c_uint"):
        twin.rms_norm(x, x[0], block_dim=block_dim)
    with pytest.raises(twin.TwinError, match=rf"^twin tiling silu_mul: block_dim is {block_dim}, outside the c_uint"):
        twin.silu_mul(x, x, block_dim=block_dim)


def test_the_launcher_refuses_block_dim_beyond_the_limit():
    x = torch.randn(2, 8)
    tile = twin.tiling("add", twin.DEFAULT_CHIP, x.numel(), twin.GE_DTYPE[x.dtype], 0)
    tile.block_dim = 70000
    with pytest.raises(twin.TwinError, match=r"block_dim 70000 outside 1\.\.65535"):
        twin.launch("airfuse_add__float32", [("x", x), ("y", x), ("z", torch.empty_like(x)), ("workspace", None)], tile)


@pytest.mark.parametrize(
    "make", [lambda: torch.randn(8, 2).t(), lambda: torch.randn(1, 8).expand(2, 8)], ids=["transposed", "expanded"]
)
def test_the_low_level_launcher_refuses_tensors_it_cannot_address(make):
    x = make()
    tile = twin.tiling("add", twin.DEFAULT_CHIP, x.numel(), twin.GE_DTYPE[x.dtype], 0)
    out = torch.empty(2, 8)
    with pytest.raises(twin.TwinError, match=r"GM argument x must be contiguous \(shape \[2, 8\]"):
        twin.launch("airfuse_add__float32", [("x", x), ("y", out), ("z", out), ("workspace", None)], tile)


@pytest.mark.parametrize(
    "rows, message",
    [(48 * 4, r"could not start a thread for block \d+ of 48"), (64 * 256, r"the twin could not run the launch: std::bad_alloc")],
    ids=["thread-stacks", "memory"],
)
def test_thread_and_memory_failures_are_twin_errors_not_aborts(rows, message):
    """With the address space capped 64 MB above what the process uses, a small launch runs out
    at its threads' stacks and a larger one at the twin's own memory: both are reported and the
    process goes on."""
    script = textwrap.dedent(
        f"""
        import resource, torch
        from airfuse import twin
        x = torch.randn({rows}, 64)
        twin.add(x, x)  # warm: library loaded, one launch done
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (64 << 20), resource.RLIM_INFINITY))
        try:
            twin.add(x, x, block_dim=48)
        except twin.TwinError as error:
            print("TwinError:", error)
        print("alive")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search("TwinError: " + message, result.stdout), result.stdout
    assert result.stdout.rstrip().endswith("alive")


@pytest.mark.parametrize("epsilon", [np.float64(1e-5), np.float32(1e-5), 1e-5], ids=["np.float64", "np.float32", "float"])
def test_numpy_epsilons_are_taken_as_the_numbers_they_are(epsilon):
    x, gamma = torch.randn(4, 64), torch.rand(64) + 0.5
    y, _ = twin.rms_norm(x, gamma, epsilon).outputs
    torch.testing.assert_close(y, torch.ops.airfuse.rms_norm(x, gamma, float(epsilon))[0], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(
    "epsilon, error, message",
    [(True, TypeError, r"epsilon must be a float, got bool"), (torch.tensor(1e-6), TypeError, r"epsilon must be a float, got Tensor"),
     (1e300, ValueError, r"epsilon must be a finite float32 number")],
    ids=["bool", "tensor", "beyond-float32"],
)
def test_epsilons_the_ir_cannot_hold_are_refused(epsilon, error, message):
    x = torch.randn(4, 64)
    with pytest.raises(error, match=r"airfuse\.rms_norm: " + message):
        twin.rms_norm(x, torch.ones(64), epsilon)
