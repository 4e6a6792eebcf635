"""The twin kernel launches run on in tests/kernels and tests/property (their conftest.py use the
fixtures below): the vendor-API twin where `make vendor-build` built it (CANN's open-source tree
found: twin/vendor_api/README.md), the home-made twin elsewhere; AIRFUSE_TWIN=home or
AIRFUSE_TWIN=vendor-api picks one by hand. Tests of the home-made twin's own machinery (its build
of the broken kernels, its messages) are marked `home_made_twin` and run on it whichever twin the
others run on; their vendor-built counterparts are in tests/vendor.
"""
import os

import pytest

from airfuse import twin

KERNEL_TWIN = os.environ.get("AIRFUSE_TWIN") or ("vendor-api" if twin.vendor_api_twin_built() else "home")


def _twin_for(node):
    return twin.home_made_twin() if KERNEL_TWIN != "vendor-api" or node.get_closest_marker("home_made_twin") else twin.vendor_api_twin()


@pytest.fixture(scope="module", autouse=True)
def kernel_twin_of_module(request):
    # Module scope, so module fixtures that launch (the mutation test's) run on it too.
    with _twin_for(request.node):
        yield


@pytest.fixture(autouse=True)
def kernel_twin_of_test(request):
    with _twin_for(request.node):
        yield
