"""The sync-mutation test (tests/kernels/test_sync_mutations.py) on the vendor-API twin.

Each SetFlag (with its WaitFlag) or PipeBarrier call site the kernels run in its scenarios (the
910B ones on the dav_c220 builds, the 310P ones on the dav_m200 builds) is removed in turn (twin.sync_site_removed; on this twin the site comes from include/sync_site.h),
and the launches that reach it run on both twins. Both must judge every mutant alike: killed by
both or by neither, the syncs with the scalar unit included (their hazards are the scalar unit's
accesses, which this twin sees through src/scalar_access.cpp).

The one exception is a sync that orders work against a 310P `ReduceSum` only (a
`PipeBarrier<PIPE_V>` after it, an S_V before it over a buffer the scalar unit read): the
home-made twin models it as one vector instruction, but dav_m200's count form (asc-devkit
impl/basic_api/kernel_operator_vec_reduce_intf_impl.h, and dav_m200
kernel_operator_vec_reduce_impl.h) sums the full repeats, waits V_S and reads the sum on the
scalar unit, and only then sums a partial last repeat: everything after it, and the partial
repeat's read, are ordered by the vendor's own syncs. Such a sync is redundant on the vendor's
code for the launch at hand, and the home-made twin is the side that is wrong there
(twin/vendor_api/README.md, "Disagreements").

"""
import collections

import pytest

from airfuse import twin
from vendor_scenarios import ALL, SCENARIOS, launches


def _home_kills_only_at_a_310p_reduce_sum(site, reached):
    """Every launch that kills `site` on the home-made twin is a 310P one, stopped at a ReduceSum."""
    kills = []
    for kind, scenario, name in reached:
        try:
            with twin.sync_site_removed(site):
                dict(launches(kind, scenario))[name]()
        except twin.TwinError as e:
            kills.append((scenario[0], str(e)))
    return bool(kills) and all(chip == SCENARIOS.P3 and "ReduceSum" in message for chip, message in kills)


def _killed(site, reached, vendor):
    """The first TwinError of the launches reaching `site` with it removed, or None."""
    for kind, scenario, name in reached:
        launch = dict(launches(kind, scenario))[name]
        try:
            if vendor:
                with twin.vendor_api_twin(), twin.sync_site_removed(site):
                    launch()
            else:
                with twin.sync_site_removed(site):
                    launch()
        except twin.TwinError as e:
            return str(e)
    return None


@pytest.fixture(scope="module")
def reached_sites(vendor_api_twin):
    """Every sync site the vendor-API twin runs, with the launches that reach it."""
    reached = collections.defaultdict(list)
    with vendor_api_twin():
        twin.sync_sites()
        for kind, scenario in ALL:
            for name, launch in launches(kind, scenario):
                launch()
                for site in twin.sync_sites():
                    reached[site].append((kind, scenario, name))
    assert reached, "the kernels ran no SetFlag or PipeBarrier"
    return reached


def test_both_twins_kill_the_same_mutants(reached_sites):
    disagree, reduce_sum_only = [], []
    for site, reached in sorted(reached_sites.items()):
        vendor, home = _killed(site, reached, True), _killed(site, reached, False)
        if vendor is not None:
            assert "ordering" in vendor or "never set" in vendor or "still set" in vendor, f"{site}: {vendor}"
        if (vendor is None) == (home is None):
            continue
        if vendor is None and _home_kills_only_at_a_310p_reduce_sum(site, reached):
            reduce_sum_only.append(site)
            continue
        disagree.append(f"{site}: vendor-API twin {vendor or 'runs'}; home-made twin {home or 'runs'}")
    assert not disagree, "the twins judge these mutants differently:\n" + "\n".join(disagree)
    # The exception is used (else it goes).
    assert reduce_sum_only, "no sync at a 310P ReduceSum was killed by the home-made twin alone"
