"""Mutation test of the kernels' synchronisation: deleting any one SetFlag/WaitFlag pair or
PipeBarrier of a kernel must give a kernel the twin rejects, or the sync is listed in REDUNDANT
with the reason it is not needed.

The twin removes a call site at run time (twin.sync_site_removed) instead of recompiling the
kernels. The scenarios (sync_scenarios.py) cover every path of each kernel; each site is judged
by the launches that run it (a removal changes no other launch), recorded once.
"""

import collections
from pathlib import Path

import pytest

from airfuse import twin

from sync_scenarios import ALL, launches

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


@pytest.fixture(scope="module")
def reached_sites():
    """Every sync site the scenarios run (the twin's own negative tests aside), with the launches that run it."""
    broken = tuple(f.name + ":" for f in (Path(__file__).parent / "broken").glob("*.cpp"))
    reached = collections.defaultdict(list)
    twin.sync_sites()
    for kind, scenario in ALL:
        for _, launch in launches(kind, scenario):
            launch()
            for site in twin.sync_sites():
                if not site.startswith(broken):
                    reached[site].append(launch)
    assert reached, "the kernels ran no SetFlag or PipeBarrier"
    return reached


def _first_error(reaching):
    for launch in reaching:
        try:
            launch()
        except twin.TwinError as e:
            return str(e)
    return None


def test_redundant_syncs_still_run(reached_sites):
    marked = [redundant_key(site) for site in reached_sites]
    assert set(REDUNDANT) <= set(marked), "REDUNDANT names a sync the kernels no longer run"
    assert set(marked) - {None} <= set(REDUNDANT), "a kernel marks a sync redundant without a reason in REDUNDANT"


def test_every_sync_matters(reached_sites):
    """Each removal is caught with a message naming the missing ordering, or listed as redundant."""
    uncaught, wrongly_redundant = [], []
    for site, reaching in reached_sites.items():
        with twin.sync_site_removed(site):
            err = _first_error(reaching)
        if redundant_key(site) in REDUNDANT:
            if err is not None:
                wrongly_redundant.append(f"{site}: {err}")
        elif err is None:
            uncaught.append(site)
        else:
            assert "ordering" in err or "PipeBarrier" in err or "not set" in err or "never set" in err or "still set" in err, f"{site}: {err}"
    assert not uncaught, f"removing these syncs goes unnoticed; the twin misses a rule or they are redundant: {uncaught}"
    assert not wrongly_redundant, f"listed as redundant but needed: {wrongly_redundant}"
