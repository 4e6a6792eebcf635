import pytest

import emulated_npu

# At collection, before any test of the session runs a backward (see register_device).
emulated_npu.register_device()


@pytest.fixture(scope="session")
def npu():
    """The emulated NPU, loaded once per session (``emulated_npu.load``)."""
    return emulated_npu.load()


@pytest.fixture
def no_leaks(npu):
    """Every aclTensor and aclOpExecutor created during the test is gone at its end."""
    yield
    assert npu.live_tensors() == 0
    assert npu.live_executors() == 0
