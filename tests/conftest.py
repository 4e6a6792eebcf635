import pytest
import torch

import airfuse  # noqa: F401  (registers torch.ops.airfuse.*)
from kernel_twin import KERNEL_TWIN


def pytest_configure(config):
    config.addinivalue_line("markers", "home_made_twin: runs on the home-made twin whichever twin kernel tests run on (tests/kernel_twin.py)")


def pytest_report_header(config):
    return f"tests/kernels and tests/property launch kernels on the {KERNEL_TWIN} twin"


@pytest.fixture(autouse=True)
def _fresh_state():
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


@pytest.fixture(scope="session")
def torchair():
    """TorchAir: native on an NPU host, offline here (``make test`` fetched it)."""
    return airfuse.import_torchair()
