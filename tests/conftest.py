import pytest
import torch

import airfuse  # noqa: F401  (registers torch.ops.airfuse.*)


@pytest.fixture(autouse=True)
def _fresh_state():
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


@pytest.fixture(scope="session")
def torchair():
    """TorchAir: native on an NPU host, offline here (``make test`` fetched it)."""
    return airfuse.import_torchair()
