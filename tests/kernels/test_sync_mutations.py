"""Mutation test of the kernels' synchronisation: deleting any one SetFlag/WaitFlag pair or
PipeBarrier of a kernel must give a kernel the twin rejects, or the sync is listed in REDUNDANT
with the reason it is not needed.

The twin removes a call site at run time (twin.sync_site_removed) instead of recompiling the
kernels; the scenarios below cover every path of each kernel (910B and 310P copies, resident and
split rows, rows under 32 B, several cores, float and half/bf16 math).
"""

from pathlib import Path

import pytest
import torch

from airfuse import twin

from twin_helpers import generator, randn

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

# Syncs that removing does not break, and why. Keyed by the marker `// redundant-sync: <key>` on
# the sync's own source line, so the entry follows the code when lines move, and a sync that loses
# its marker (or a marker put on another line) is named by the test again.
REDUNDANT = {
    "stream-finish-mte3-s": "GmStream::Finish's closing MTE3_S: no scalar write to the stage follows the final window store "
                            "(rms_norm's streams end the kernel; rms_norm_grad's dgamma stream reuses the stage for under one "
                            "block, which the earlier Flush's MTE3_S ordered)",
    "chunk-sums-then-next-chunk": "the PipeBarrier<PIPE_V> after a chunk's RowSums (rms_norm's resident chunks, rms_norm_grad's "
                                  "split rows): the next chunk's writes are ordered already, on A2 by WholeRowSums' own barriers "
                                  "between its levels (a chunk is many repeats long), on 310P by ReduceSum ending on the scalar "
                                  "unit (dav_m200: V_S, the sum moved by S, S_V), and the next RowSums by the barrier before it",
    "grad-workspace-row-store": "MTE3_MTE2 after storing a workspace row: the MTE3_V just before it, then LoadWorkspace's V_S, "
                                "hold back the next load's issue until the store is done",
}
REDUNDANT_MARKER = "// redundant-sync: "
KERNELS = Path(__file__).resolve().parents[2] / "kernels"


def redundant_key(site):
    """The REDUNDANT key marked on the source line of a "file:line" sync site, or None."""
    name, line = site.rsplit(":", 1)
    paths = list(KERNELS.rglob(name))  # the twin names a site by its file's base name (kernels/ or an op's folder, kernels/rms_norm/)
    assert len(paths) == 1, f"{name}: {paths}"
    text = paths[0].read_text().splitlines()[int(line) - 1]
    return text.split(REDUNDANT_MARKER, 1)[1].strip() if REDUNDANT_MARKER in text else None


def _launch_acts(gen):
    for chip, shape, dt, bd in ACT_SCENARIOS:
        a, b, dy = randn(shape, dt, gen), randn(shape, dt, gen), randn(shape, dt, gen)
        x = torch.cat([a, b], -1)
        twin.swiglu(x, chip=chip, block_dim=bd)
        twin.swiglu_backward(dy, x, chip=chip, block_dim=bd)
        twin.silu_mul_backward(dy, a, b, chip=chip, block_dim=bd)
        for approximate in ("tanh", "none"):
            twin.gelu(a, approximate, chip=chip, block_dim=bd)
            twin.gelu_backward(dy, a, approximate, chip=chip, block_dim=bd)


def _launch_all(site=""):
    """Every scenario once (the activations' first for a sync in their files); returns the first TwinError message, or None."""
    gen = generator()
    try:
        if site.startswith("act_"):
            _launch_acts(gen)
        for chip, shape, x_dt, g_dt, bd in NORM_SCENARIOS:
            x, gamma, dy = randn(shape, x_dt, gen), randn(shape[-1:], g_dt, gen), randn(shape, x_dt, gen)
            _, rstd = twin.rms_norm(x, gamma, 1e-6, chip=chip, block_dim=bd).outputs
            twin.rms_norm_backward(dy, x, rstd, gamma, chip=chip, block_dim=bd if chip == B2 else 0)
        for chip, shape, x_dt, g_dt, bd in ADD_NORM_SCENARIOS:
            twin.add_rms_norm(randn(shape, x_dt, gen), randn(shape, x_dt, gen), randn(shape[-1:], g_dt, gen), chip=chip, block_dim=bd)
        for chip, x_shape, t_shape, x_dt, t_dt, mode, bd in ROPE_SCENARIOS:
            x, cos, sin = randn(x_shape, x_dt, gen), randn(t_shape, t_dt, gen), randn(t_shape, t_dt, gen)
            twin.rope(x, cos, sin, mode, chip=chip, block_dim=bd)
            twin.rope_backward(x, cos, sin, mode, chip=chip, block_dim=bd)
        for chip, shape, dt, bd in ADD_SCENARIOS:
            twin.add(randn(shape, dt, gen), randn(shape, dt, gen), chip=chip, block_dim=bd)
        if not site.startswith("act_"):
            _launch_acts(gen)
    except twin.TwinError as e:
        return str(e)
    return None


@pytest.fixture(scope="module")
def kernel_sites():
    twin.sync_sites()
    assert _launch_all() is None
    broken = tuple(f.name + ":" for f in (Path(__file__).parent / "broken").glob("*.cpp"))  # the twin's own negative tests
    sites = [s for s in twin.sync_sites() if not s.startswith(broken)]
    assert sites, "the kernels ran no SetFlag or PipeBarrier"
    return sites


def test_redundant_syncs_still_run(kernel_sites):
    marked = [redundant_key(site) for site in kernel_sites]
    assert set(REDUNDANT) <= set(marked), "REDUNDANT names a sync the kernels no longer run"
    assert set(marked) - {None} <= set(REDUNDANT), "a kernel marks a sync redundant without a reason in REDUNDANT"


def test_every_sync_matters(kernel_sites):
    """Each removal is caught with a message naming the missing ordering, or listed as redundant."""
    uncaught, wrongly_redundant = [], []
    for site in kernel_sites:
        with twin.sync_site_removed(site):
            err = _launch_all(site)
        if redundant_key(site) in REDUNDANT:
            if err is not None:
                wrongly_redundant.append(f"{site}: {err}")
        elif err is None:
            uncaught.append(site)
        else:
            assert "ordering" in err or "PipeBarrier" in err or "not set" in err or "never set" in err or "still set" in err, f"{site}: {err}"
    assert not uncaught, f"removing these syncs goes unnoticed; the twin misses a rule or they are redundant: {uncaught}"
    assert not wrongly_redundant, f"listed as redundant but needed: {wrongly_redundant}"
