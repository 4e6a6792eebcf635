"""The package's parts that run without building a wheel: what setup.py packages, where the native
libraries are found, the torch check of packaged libraries, the torch_npu release per torch minor,
and ``python -m airfuse.build_npu`` refusing on a host without CANN and torch_npu.

(`make wheel-smoke` builds, installs and uses the wheel itself: tests/package/smoke.py.)
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import airfuse
from airfuse import build_npu, cpu_kernels, libraries
from airfuse.offline import fetch

ROOT = Path(__file__).resolve().parents[2]


def test_every_python_package_of_the_tree_is_packaged(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import build_support

    expected = set()
    for folder, package in (("airfuse", "airfuse"), ("meta", "airfuse.meta"), ("converters", "airfuse.converters")):
        for init in (ROOT / folder).rglob("__init__.py"):
            expected.add(".".join([package, *init.parent.relative_to(ROOT / folder).parts]))
    assert sorted(build_support.packages()) == sorted(expected)
    assert {"airfuse.meta", "airfuse.converters", "airfuse.patching", "airfuse.fusion", "airfuse.offline", "airfuse.ops"} <= expected


def test_a_checkout_loads_its_libraries_from_the_build_directory(monkeypatch, tmp_path):
    assert not libraries.PACKAGE_LIB_DIR.exists()  # the editable install compiles nothing into the package
    assert libraries.library("airfuse_cpu") == ROOT / "build" / "libairfuse_cpu.so" or libraries.build_dir() != ROOT / "build"
    monkeypatch.setenv(libraries.BUILD_DIR_ENV, str(tmp_path))
    assert libraries.library("airfuse_npu") == tmp_path / "libairfuse_npu.so"


def test_a_packaged_library_built_for_another_torch_is_refused_naming_both(tmp_path):
    library = tmp_path / "libairfuse_cpu.so"
    (tmp_path / libraries.BUILD_INFO).write_text(json.dumps({"torch": "2.12.0", "cxx11_abi": True}))
    assert libraries.torch_mismatch(library, "2.12.0+cpu", True) is None
    message = libraries.torch_mismatch(library, "2.13.0+cpu", True)
    assert "compiled against torch 2.12.0" in message and "this is torch 2.13.0" in message and libraries.REINSTALL in message
    assert "C++11 ABI False" in libraries.torch_mismatch(library, "2.12.0", False)
    (tmp_path / libraries.BUILD_INFO).unlink()
    assert libraries.torch_mismatch(library, "2.13.0", True) is None  # a build directory's library


def test_cpu_kernels_of_another_torch_say_how_to_rebuild(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "_loaded", False)
    monkeypatch.setattr(cpu_kernels, "_mismatch", "lib.so was compiled against torch 2.12.0")
    with pytest.raises(RuntimeError, match=r"airfuse\.add: airfuse's CPU kernels cannot be loaded: lib\.so was compiled against torch 2\.12\.0"):
        torch.ops.airfuse.add(torch.ones(2), torch.ones(2))


@pytest.mark.parametrize("torch_version, torch_npu", [
    ("2.10.0", "2.10.0.post7"), ("2.11.0", "2.11.0.post3"), ("2.12.0+cpu", "2.12.0.post3"), ("2.13.0+cpu", "2.13.0"),
    ("2.14.1", "2.14.0"),
])
def test_each_supported_torch_gets_its_torch_npu_release(torch_version, torch_npu):
    version, sha256 = fetch.torch_npu_release(torch_version)
    assert version == torch_npu and len(sha256) == 64 and int(sha256, 16) >= 0


@pytest.mark.parametrize("torch_version", ["2.9.1", "2.15.0"])
def test_an_unsupported_torch_is_refused_naming_the_range(torch_version):
    with pytest.raises(fetch.CacheError, match=rf"torch {torch_version} is not supported.*torch>=2\.10,<2\.15"):
        fetch.torch_npu_release(torch_version)


def test_the_offline_cache_is_the_installed_torchs_release():
    assert fetch.install_root().name == f"torch_npu-{fetch.torch_npu_release(torch.__version__)[0]}"


@pytest.mark.skipif(not build_npu.missing_prerequisites() or len(build_npu.missing_prerequisites()) < 2,
                    reason="this host has CANN or torch_npu")
def test_build_npu_finds_the_sources_and_refuses_without_cann_and_torch_npu():
    result = subprocess.run([sys.executable, "-m", "airfuse.build_npu"], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert f"sources {ROOT}" in result.stdout  # a checkout builds from its own sources
    assert "no CANN toolkit" in result.stderr and "torch_npu is not installed" in result.stderr
    assert "airfuse runs on the CPU" in result.stderr


def test_build_npu_names_each_missing_prerequisite(tmp_path):
    missing = build_npu.missing_prerequisites({"ASCEND_HOME_PATH": str(tmp_path / "nowhere")})
    if build_npu.DEFAULT_TOOLKIT.is_dir():
        pytest.skip(f"{build_npu.DEFAULT_TOOLKIT} exists")
    assert any(f"ASCEND_HOME_PATH is {tmp_path / 'nowhere'}, not a directory" in m for m in missing), missing
    assert airfuse.build_npu.sources() in (build_npu.PACKAGE_SOURCES, build_npu.CHECKOUT_SOURCES)
