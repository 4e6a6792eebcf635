"""``import airfuse`` loads the NPU binding only where torch_npu imports, and never fails elsewhere."""

import importlib
import sys

import pytest

from airfuse import npu_binding


@pytest.fixture
def fake_torch_npu(tmp_path, monkeypatch):
    """A package named torch_npu on sys.path whose import runs ``body``."""

    def make(body: str):
        (tmp_path / "torch_npu").mkdir()
        (tmp_path / "torch_npu" / "__init__.py").write_text(body)
        monkeypatch.syspath_prepend(str(tmp_path))

    yield make
    # Later tests (and TorchAir) must not see a torch_npu.
    sys.modules.pop("torch_npu", None)
    importlib.invalidate_caches()


def test_nothing_without_torch_npu():
    assert npu_binding.load_where_torch_npu_imports() is None


def test_torch_npu_that_does_not_import(fake_torch_npu):
    fake_torch_npu("raise ImportError('libhccl.so: cannot open shared object file')\n")
    with pytest.warns(UserWarning, match=r"torch_npu is installed but does not import \(libhccl\.so"):
        assert npu_binding.load_where_torch_npu_imports() is None


def test_torch_npu_without_a_built_binding(fake_torch_npu, monkeypatch, tmp_path):
    fake_torch_npu("")
    monkeypatch.setenv("AIRFUSE_NPU_BINDING", str(tmp_path / "libairfuse_npu.so"))
    with pytest.warns(UserWarning, match=r"the NPU binding .*libairfuse_npu\.so is not built.*cmake --build build"):
        assert npu_binding.load_where_torch_npu_imports() is None


def test_binding_that_does_not_load(fake_torch_npu, monkeypatch):
    """The real binding here: libtorch_npu.so needs CANN's libraries, which are absent."""
    fake_torch_npu("")
    monkeypatch.setenv("AIRFUSE_NPU_BINDING", str(npu_binding.BINDING))
    with pytest.warns(UserWarning, match=r"the NPU binding .*libairfuse_npu\.so does not load \(.*lib"):
        assert npu_binding.load_where_torch_npu_imports() is None


def test_torch_npu_with_the_binding(fake_torch_npu, monkeypatch, npu):
    fake_torch_npu("")
    monkeypatch.setenv("AIRFUSE_NPU_BINDING", str(npu_binding.EMULATED_BINDING))
    assert npu_binding.load_where_torch_npu_imports() is npu.binding
