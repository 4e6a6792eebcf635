"""The sync-mutation test (tests/kernels/test_sync_mutations.py) on the vendor-API twin.

Each SetFlag (with its WaitFlag) or PipeBarrier call site the kernels run in its scenarios (the
910B ones on the dav_c220 builds, the 310P ones on the dav_m200 builds) is removed in turn
(twin.sync_site_removed; on this twin the site comes from include/sync_site.h), and the launches
that reach it run on both twins. Both must judge every mutant alike: killed by both or by
neither, the syncs with the scalar unit included (their hazards are the scalar unit's accesses,
which this twin sees through src/scalar_access.cpp).
"""
import collections

import pytest

from airfuse import twin
from vendor_scenarios import ALL, launches


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
    disagree = []
    for site, reached in sorted(reached_sites.items()):
        vendor, home = _killed(site, reached, True), _killed(site, reached, False)
        if vendor is not None:
            assert "ordering" in vendor or "never set" in vendor or "still set" in vendor, f"{site}: {vendor}"
        if (vendor is None) != (home is None):
            disagree.append(f"{site}: vendor-API twin {vendor or 'runs'}; home-made twin {home or 'runs'}")
    assert not disagree, "the twins judge these mutants differently:\n" + "\n".join(disagree)
