"""tests/vendor read what `make vendor-check` built against the vendor's code (build/vendor_check).

Where the vendor sources are absent the tests skip with the reason the build recorded; with
AIRFUSE_REQUIRE_CANN_OPEN=1 (CI) they fail instead.
"""
import json
import os
from pathlib import Path

import pytest

from airfuse import libraries

VENDOR_BUILD = libraries.vendor_build_dir()


def _refuse(reason: str):
    if os.environ.get("AIRFUSE_REQUIRE_CANN_OPEN", "") not in ("", "0"):
        pytest.fail(f"vendor check required (AIRFUSE_REQUIRE_CANN_OPEN=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vendor_build() -> Path:
    """The vendor check's build directory, once `make vendor-check` has built it."""
    state_file = VENDOR_BUILD / "state.json"
    if not state_file.is_file():
        _refuse(f"{VENDOR_BUILD} has no vendor check; run `make vendor-check`")
    state = json.loads(state_file.read_text())
    if state["status"] == "skipped":
        _refuse(f"vendor check skipped: {state['reason']}")
    if state["status"] != "built":
        pytest.fail(f"vendor check did not build ({state['status']}): {state.get('reason', 'see make vendor-check')}")
    return VENDOR_BUILD


@pytest.fixture(scope="session")
def vendor_sources(vendor_build) -> dict:
    """Where the vendor's code was found: {"layout": "open"|"toolkit", "root": path, "chosen_by": rule}."""
    return json.loads((vendor_build / "state.json").read_text())["sources"]


@pytest.fixture(scope="session")
def vendor_part_unchecked():
    """Call with the reason a part of the check could not be made (an installed toolkit's layout,
    vendor_check/README.md): the test skips, or with AIRFUSE_REQUIRE_CANN_OPEN=1 fails."""
    return _refuse


@pytest.fixture(scope="session")
def vendor_api_twin(vendor_build, vendor_part_unchecked):
    """airfuse.twin.vendor_api_twin, once `make vendor-build` has built the vendor-API twin (and its
    broken and hand-timed cost kernels) from CANN's open-source tree (twin/vendor_api/README.md)."""
    from airfuse import twin

    state = vendor_build / "vendor_api_twin" / "state.txt"
    if state.is_file():
        vendor_part_unchecked(state.read_text().strip())
    for lib in (twin.VENDOR_API_LIB, *(twin.VENDOR_API_LIB.with_name(f"libairfuse_vendor_twin_{k}.so") for k in ("broken", "cost_kernels"))):
        if not lib.is_file():
            pytest.fail(f"{lib} was not built; run `make vendor-build`")
    return twin.vendor_api_twin
