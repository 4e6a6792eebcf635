"""The offline cache: manifest verification, repair, locking, unwritable directories.

A small wheel with the real member layout stands in for the 43 MB download; one test checks the
real cache that `make test` fetched, end to end through `import airfuse` in a subprocess.
"""

import multiprocessing
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from airfuse.offline import fetch

_MEMBERS = {
    "torch_npu/dynamo/torchair/__init__.py": b"VALUE = 1\n",
    "torch_npu/dynamo/torchair/core/compile.py": b"def f():\n    return 2\n",
    "torch_npu/dynamo/torchair/native.so": b"not extracted",
    "torch_npu/include/torch_npu/csrc/core/npu/NPUStream.h": b"#pragma once\n",
    "torch_npu/lib/libtorch_npu.so": b"\x7fELF fake library",
    "torch_npu/lib/libother.so": b"not extracted",
}


@pytest.fixture
def small_wheel(tmp_path, monkeypatch):
    """Point the cache at tmp_path/cache and make every download produce a small wheel."""
    source = tmp_path / fetch.wheel_name()
    with zipfile.ZipFile(source, "w") as archive:
        for name, data in _MEMBERS.items():
            archive.writestr(name, data)
    downloads = []

    def download(dest, *, quiet):
        downloads.append(dest)
        return Path(shutil.copy(source, dest / fetch.wheel_name()))

    monkeypatch.setenv(fetch.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(fetch, "_download_wheel", download)
    return downloads


def test_fetch_extracts_the_parts_and_writes_a_manifest(small_wheel):
    root = fetch.fetch()
    assert (fetch.torchair_root() / "torchair" / "core" / "compile.py").read_bytes() == _MEMBERS["torch_npu/dynamo/torchair/core/compile.py"]
    assert (fetch.torch_npu_sdk_root() / "include" / "torch_npu" / "csrc" / "core" / "npu" / "NPUStream.h").is_file()
    assert (fetch.torch_npu_sdk_root() / "lib" / "libtorch_npu.so").is_file()
    assert not (fetch.torchair_root() / "torchair" / "native.so").exists()
    assert not (fetch.torch_npu_sdk_root() / "lib" / "libother.so").exists()
    assert (root / fetch.MANIFEST).is_file()
    fetch.verify()
    fetch.fetch()
    assert len(small_wheel) == 1, "a valid cache is not downloaded again"


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda p: p.unlink(), "missing"),
        (lambda p: p.write_bytes(p.read_bytes()[:3]), "3 bytes, expected"),
        (lambda p: p.write_bytes(b"X" * p.stat().st_size), "content differs"),
    ],
    ids=["missing", "truncated", "corrupt"],
)
def test_a_damaged_cache_is_reported_with_its_path_and_the_repair_command(small_wheel, damage, expected):
    fetch.fetch()
    damage(fetch.torchair_root() / "torchair" / "core" / "compile.py")
    for check in (lambda: fetch.verify("python"), fetch.fetch):
        with pytest.raises(fetch.CacheError) as err:
            check()
        message = str(err.value)
        assert str(fetch.install_root()) in message
        assert "python/torchair/core/compile.py" in message and expected in message
        assert fetch.REPAIR_COMMAND in message
    fetch.verify("sdk")  # the other part is intact
    fetch.fetch(repair=True)
    fetch.verify()
    assert len(small_wheel) == 2


def test_a_missing_manifest_means_not_fetched(small_wheel):
    fetch.fetch()
    (fetch.install_root() / fetch.MANIFEST).unlink()
    assert not fetch.is_fetched()
    with pytest.raises(fetch.CacheError, match="missing or incomplete"):
        fetch.verify()
    fetch.fetch()
    fetch.verify()


def test_an_unwritable_cache_fails_before_downloading(small_wheel, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(fetch.CACHE_ENV, str(blocker / "cache"))
    with pytest.raises(fetch.CacheError, match=f"cannot write the offline cache directory .*{fetch.CACHE_ENV}"):
        fetch.fetch()
    assert small_wheel == []


def _fetch_repeatedly(rounds, errors):
    try:
        for _ in range(rounds):
            fetch.fetch(repair=True)
            fetch.verify()
    except Exception as err:  # reported to the parent, which fails the test
        errors.put(f"{type(err).__name__}: {err}")


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork to share the stand-in download")
def test_concurrent_fetches_wait_for_each_other(small_wheel):
    context = multiprocessing.get_context("fork")
    errors = context.Queue()
    workers = [context.Process(target=_fetch_repeatedly, args=(6, errors)) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    failures = [errors.get() for _ in range(errors.qsize())]
    assert failures == [] and all(w.exitcode == 0 for w in workers)
    fetch.verify()
    leftovers = [p.name for p in fetch.cache_dir().iterdir() if p.name.startswith(".fetch-")]
    assert leftovers == []


def test_import_with_a_corrupt_real_cache_names_the_cache(tmp_path):
    """`import airfuse` + get_npu_backend() on a copy of the real cache with one TorchAir module
    truncated: a CacheError naming the file and the repair command, not an ImportError."""
    real = fetch.install_root()
    copy = tmp_path / "cache" / real.name
    shutil.copytree(real / "python", copy / "python")
    shutil.copy(real / fetch.MANIFEST, copy / fetch.MANIFEST)
    module = copy / "python" / "torchair" / "_ge_concrete_graph" / "fx2ge_converter.py"
    module.write_text(module.read_text()[:100])
    env = {**os.environ, fetch.CACHE_ENV: str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-c", "import airfuse; airfuse.get_npu_backend()"], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0
    assert "CacheError" in result.stderr and "fx2ge_converter.py" in result.stderr
    assert fetch.REPAIR_COMMAND in result.stderr
