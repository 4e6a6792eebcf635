import importlib.util
from pathlib import Path

import pytest

import emulated_npu

# Where torch_npu is installed, "npu" is the real device and the emulated one must not shadow it:
# only the real binding's link check runs (the ops are then exercised on the device itself).
if importlib.util.find_spec("torch_npu") is not None:
    collect_ignore = [p.name for p in Path(__file__).parent.glob("test_*.py") if p.name != "test_real_flavour.py"]
else:
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
