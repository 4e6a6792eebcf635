"""tests/kernels run on the vendor-API twin where `make vendor-build` built it (CANN's open-source
tree found: twin/vendor_api/README.md), and on the home-made twin elsewhere; AIRFUSE_TWIN=home or
AIRFUSE_TWIN=vendor-api picks one by hand. Tests of the home-made twin's own machinery (its build
of the broken kernels, its messages, its API called outside a launch) are marked `home_made_twin`
and run on it whichever twin the others run on; their vendor-built counterparts are in tests/vendor.
"""
import os

import pytest

from airfuse import twin

KERNEL_TWIN = os.environ.get("AIRFUSE_TWIN") or ("vendor-api" if twin.vendor_api_twin_built() else "home")


def pytest_configure(config):
    config.addinivalue_line("markers", "home_made_twin(reason): runs on the home-made twin whichever twin tests/kernels run on")


def pytest_report_header(config):
    return f"tests/kernels run on the {KERNEL_TWIN} twin"


def _twin_for(node):
    return twin.home_made_twin() if KERNEL_TWIN != "vendor-api" or node.get_closest_marker("home_made_twin") else twin.vendor_api_twin()


@pytest.fixture(scope="module", autouse=True)
def _module_twin(request):
    # Module scope, so module fixtures that launch (the mutation test's) run on it too.
    with _twin_for(request.node):
        yield


@pytest.fixture(autouse=True)
def _test_twin(request):
    with _twin_for(request.node):
        yield
