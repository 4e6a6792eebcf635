"""The sync-mutation test's scenarios (test_sync_mutations.py; tests/vendor runs them on both twins):
every path of each kernel (910B and 310P copies, resident and split rows, rows under 32 B,
several cores, float and half/bf16 math), as launches.
"""
import torch

from airfuse import twin

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
B2, B3, P3 = "Ascend910B2", "Ascend910B3", "Ascend310P3"

# (chip, shape, x dtype, gamma dtype, block_dim or 0 for the tiling's). (24, 512) on two 910B cores:
# the gradient's vector per-row scalars (no MTE2 -> S wait) with float gamma loaded after the rows. (35, 512) and (94, 512) on
# one 310P core: a 3-row last step of the vector rstd, its stage into the next slot's block; (4099, 16):
# more rows than UB leaves for a stage of all of them, so it is flushed between steps; (1376, 128) on
# 310P: dgamma by columns after Gathered row scalars with a short last step; (24, 8192) float32 on
# 310P: rows that fit once on one buffer, dgamma by columns. (6, 12288)
# float16 with float32 gamma on one 910B core: resident chunks whose y has two buffers, so a row's
# rstd buffer may still be storing when the scalar unit writes it. (512, 128) bfloat16 on 32 910B
# cores and (48, 1024) on 16: one resident step a core.
# (136, 1600) on 910B: the gradient's slices of columns (25 cores), three steps, all held in UB
# across the SyncAll; (160, 2600) on 910B3: 4 steps read again in pass 2, then 7 held, rows of two
# repeats; the rows of a few a core before it (2 x 4097, 4 x 8192, ...) keep the rows' paths by
# their block_dim.
NORM_SCENARIOS = [
    (B2, (3, 7), F16, F16, 0), (B2, (2, 4097), F32, F32, 2), (B2, (4, 8192), BF16, F32, 4), (B2, (16, 64), F16, F32, 4),
    (B2, (16, 24), F16, F16, 4), (B2, (200, 100), BF16, BF16, 1), (B2, (136, 1600), BF16, BF16, 0),
    (B2, (1, 65536), F32, F32, 1), (B2, (2, 12288), BF16, BF16, 2), (B2, (1, 20000), F16, F16, 1), (B2, (6, 16384), BF16, BF16, 1),
    (B2, (2, 20000), F16, F32, 1), (B2, (3, 8192), F16, F16, 1), (B2, (24, 512), BF16, F32, 2), (B2, (6, 12288), F16, F32, 1),
    (B2, (512, 128), BF16, BF16, 32), (B2, (48, 1024), BF16, BF16, 16), (B3, (160, 2600), BF16, BF16, 0),
    (P3, (3, 7), F16, F16, 0), (P3, (2, 4097), F32, F32, 0), (P3, (9, 1), F32, F32, 8), (P3, (40, 100), F16, F32, 4),
    (P3, (1, 65536), F32, F32, 0), (P3, (1, 20000), F16, F16, 0), (P3, (600, 40), F16, F16, 0), (P3, (8, 4096), F16, F16, 1),
    (P3, (24, 256), F16, F32, 0), (P3, (2, 20000), F32, F32, 0), (P3, (16, 16384), F16, F16, 0), (P3, (35, 512), F16, F16, 1),
    (P3, (94, 512), F16, F16, 1), (P3, (4099, 16), F16, F16, 1), (P3, (1376, 128), F16, F32, 0),
    (P3, (24, 8192), F32, F32, 0),
]
# (chip, shape, x dtype, gamma dtype, block_dim): the residual add's own paths (float and half sums,
# split rows reading x back, rows under 32 B streaming x on 310P, resident chunks: 3 x 8192
# bfloat16; one resident step a core as above).
ADD_NORM_SCENARIOS = [(B2, (3, 7), F16, F16, 0), (B2, (2, 4097), F32, F32, 0), (B2, (1, 20000), BF16, F32, 0), (B2, (16, 64), F32, F32, 4),
                      (B2, (200, 100), F16, F16, 1), (B2, (3, 16384), BF16, BF16, 1), (B2, (3, 8192), BF16, BF16, 1),
                      (B2, (512, 128), BF16, BF16, 32), (B2, (48, 1024), BF16, BF16, 16),
                      (P3, (3, 7), F16, F16, 0), (P3, (9, 1), F32, F32, 8), (P3, (1, 20000), F16, F16, 0), (P3, (600, 40), F16, F32, 0)]
# (chip, x shape, cos/sin shape, x dtype, table dtype, mode, block_dim): shared and per-row tables,
# float and half/bf16 rows and tables, strided runs, both chips' copies.
ROPE_SCENARIOS = [(B2, (2, 4, 3, 64), (1, 1, 3, 64), F16, F32, "half", 0), (B2, (3, 6), (3, 6), F32, F32, "interleave", 0),
                  (B2, (2, 3, 4, 5, 10), (2, 1, 4, 1, 10), BF16, BF16, "half", 3), (P3, (2, 4, 3, 64), (1, 1, 3, 64), F16, F16, "interleave", 0),
                  (P3, (3, 16), (3, 16), F32, F32, "half", 2)]
# (chip, shape, dtype, block_dim): cores of one tile (3 x 5 x 129: 128 a core, the last 15; 128 x
# 128), several tiles a core, both chips' copies.
ADD_SCENARIOS = [(B2, (3, 5, 129), F16, 0), (B2, (128, 128), BF16, 0), (B2, (4097,), F32, 0), (B2, (70000,), BF16, 3),
                 (P3, (3, 5, 129), F16, 0), (P3, (3, 1), F32, 0), (P3, (4097,), F32, 2)]

# The activation kernels (kernels/act_kernel.h): (chip, shape of a and b, or of the flat gelu input, dtype, block_dim).
# block_dim 1 gives one core several tiles; swiglu takes x with the halves of shape[-1].
ACT_SCENARIOS = [(B2, (1, 7000), F16, 1), (B2, (5, 129), BF16, 3), (B2, (7000,), F32, 1), (P3, (37, 3), F32, 0), (P3, (3, 1), F32, 0),
                 (P3, (3, 4097), F16, 2), (P3, (7001,), F32, 1)]

# Every scenario, by kernel kind.
ALL = [
    *(("rms_norm", s) for s in NORM_SCENARIOS),
    *(("add_rms_norm", s) for s in ADD_NORM_SCENARIOS),
    *(("rope", s) for s in ROPE_SCENARIOS),
    *(("add", s) for s in ADD_SCENARIOS),
    *(("act", s) for s in ACT_SCENARIOS),
]


def launches(kind, scenario):
    """The launches of one scenario, as (name, thunk) pairs; a thunk launches on the twin selected when it is called."""
    gen = torch.Generator().manual_seed(4)
    rand = lambda shape, dtype: torch.randn(shape, generator=gen).to(dtype)  # noqa: E731
    if kind in ("rms_norm", "add_rms_norm"):
        chip, shape, x_dt, g_dt, bd = scenario
        x, gamma, other = rand(shape, x_dt), rand(shape[-1:], g_dt), rand(shape, x_dt)
        if kind == "add_rms_norm":
            return [("add_rms_norm", lambda: twin.add_rms_norm(x, other, gamma, chip=chip, block_dim=bd))]
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        return [("rms_norm", lambda: twin.rms_norm(x, gamma, 1e-6, chip=chip, block_dim=bd)),
                # on one core but on 910B (the 310P has no hardware SyncAll)
                ("rms_norm_backward", lambda: twin.rms_norm_backward(other, x, rstd, gamma, chip=chip,
                                                                     block_dim=bd if chip == B2 else 0))]
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
