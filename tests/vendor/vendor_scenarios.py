"""The sync-mutation test's kernel scenarios (tests/kernels/test_sync_mutations.py), as launches
the vendor-API twin runs (the 910B ones on its dav_c220 builds, the 310P ones on its dav_m200
builds), made the same way.
"""
import importlib.util
import sys
from pathlib import Path

import torch

from airfuse import twin


def _mutation_scenarios():
    """tests/kernels/test_sync_mutations.py's scenarios: every path of each kernel, chosen there."""
    kernels_tests = Path(__file__).resolve().parents[1] / "kernels"
    sys.path.insert(0, str(kernels_tests))
    try:
        spec = importlib.util.spec_from_file_location("sync_mutation_scenarios", kernels_tests / "test_sync_mutations.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(kernels_tests))
    return module


SCENARIOS = _mutation_scenarios()
# Every scenario, by kernel kind.
ALL = [
    *(("rms_norm", s) for s in SCENARIOS.NORM_SCENARIOS),
    *(("add_rms_norm", s) for s in SCENARIOS.ADD_NORM_SCENARIOS),
    *(("rope", s) for s in SCENARIOS.ROPE_SCENARIOS),
    *(("add", s) for s in SCENARIOS.ADD_SCENARIOS),
    *(("act", s) for s in SCENARIOS.ACT_SCENARIOS),
]


def launches(kind, scenario):
    """The launches of one scenario, as test_sync_mutations makes them, as (name, thunk) pairs."""
    gen = torch.Generator().manual_seed(4)
    rand = lambda shape, dtype: torch.randn(shape, generator=gen).to(dtype)  # noqa: E731
    if kind in ("rms_norm", "add_rms_norm"):
        chip, shape, x_dt, g_dt, bd = scenario
        x, gamma, other = rand(shape, x_dt), rand(shape[-1:], g_dt), rand(shape, x_dt)
        if kind == "add_rms_norm":
            return [("add_rms_norm", lambda: twin.add_rms_norm(x, other, gamma, chip=chip, block_dim=bd))]
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        return [("rms_norm", lambda: twin.rms_norm(x, gamma, 1e-6, chip=chip, block_dim=bd)),
                # as test_sync_mutations: on one core but on 910B (the 310P has no hardware SyncAll)
                ("rms_norm_backward", lambda: twin.rms_norm_backward(other, x, rstd, gamma, chip=chip,
                                                                     block_dim=bd if chip == SCENARIOS.B2 else 0))]
    if kind == "rope":
        chip, x_shape, t_shape, x_dt, t_dt, mode, bd = scenario
        x, cos, sin = rand(x_shape, x_dt), rand(t_shape, t_dt), rand(t_shape, t_dt)
        return [(name, lambda run=run: run(x, cos, sin, mode, chip=chip, block_dim=bd))
                for name, run in (("rope", twin.rope), ("rope_backward", twin.rope_backward))]
    if kind == "add":
        chip, shape, dt, bd = scenario
        x, y = rand(shape, dt), rand(shape, dt)
        return [("add", lambda: twin.add(x, y, chip=chip, block_dim=bd))]
    chip, shape, dt, bd = scenario
    a, b, dy = rand(shape, dt), rand(shape, dt), rand(shape, dt)
    x = torch.cat([a, b], -1)
    return [("swiglu", lambda: twin.swiglu(x, chip=chip, block_dim=bd)),
            ("swiglu_backward", lambda: twin.swiglu_backward(dy, x, chip=chip, block_dim=bd)),
            ("silu_mul_backward", lambda: twin.silu_mul_backward(dy, a, b, chip=chip, block_dim=bd)),
            *((f"gelu_{ap}", lambda ap=ap: twin.gelu(a, ap, chip=chip, block_dim=bd)) for ap in ("tanh", "none")),
            *((f"gelu_backward_{ap}", lambda ap=ap: twin.gelu_backward(dy, a, ap, chip=chip, block_dim=bd)) for ap in ("tanh", "none"))]
