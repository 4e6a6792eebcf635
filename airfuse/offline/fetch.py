"""Obtain TorchAir's Python package without installing torch_npu.

TorchAir ships inside the torch_npu wheel. Installing that wheel on a machine without CANN breaks
``import torch``, so instead the pinned wheel is downloaded (no dependencies), checked against its
sha256, and only ``torch_npu/dynamo/torchair/**.py`` is extracted into a cache outside the
repository. Nothing of TorchAir is committed to airfuse.

    python -m airfuse.offline        # once per machine; later runs download nothing
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TORCH_NPU_VERSION = "2.13.0"
# The wheel is platform-specific only for its native modules, which are not extracted; pinning
# one platform makes the download (and so the sha256) the same on every host.
WHEEL_NAME = f"torch_npu-{TORCH_NPU_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl"
WHEEL_SHA256 = "0deb809cf447d3fce636ccfdc9c9f874950f1fe76f18f4aaab31e2d345f7dac0"
_TORCHAIR_IN_WHEEL = "torch_npu/dynamo/torchair/"
_COMPLETE_MARKER = ".complete"

CACHE_ENV = "AIRFUSE_CACHE_DIR"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "airfuse")


def torchair_root() -> Path:
    """The directory to put on sys.path: it holds the package ``torchair``."""
    return cache_dir() / f"torchair-{TORCH_NPU_VERSION}"


def is_fetched() -> bool:
    return (torchair_root() / _COMPLETE_MARKER).is_file()


def fetch(*, quiet: bool = False) -> Path:
    """Download and extract TorchAir once; return the directory holding ``torchair``."""
    root = torchair_root()
    if is_fetched():
        return root
    with tempfile.TemporaryDirectory(prefix="airfuse-wheel-") as tmp:
        wheel = _download_wheel(Path(tmp), quiet=quiet)
        staging = Path(tmp) / "staging"
        _extract_torchair(wheel, staging)
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), str(root))
    (root / _COMPLETE_MARKER).write_text(f"{WHEEL_NAME} {WHEEL_SHA256}\n")
    return root


def _download_wheel(dest: Path, *, quiet: bool) -> Path:
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp",
        "--abi", "cp311", "-d", str(dest), f"torch-npu=={TORCH_NPU_VERSION}",
    ]
    if quiet:
        cmd.insert(4, "-q")
    result = subprocess.run(cmd, capture_output=quiet, text=True)
    wheel = dest / WHEEL_NAME
    if result.returncode != 0 or not wheel.is_file():
        detail = (result.stderr or "")[-2000:] if quiet else ""
        raise RuntimeError(f"airfuse: could not download {WHEEL_NAME} with pip (exit {result.returncode}). {detail}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise RuntimeError(f"airfuse: {WHEEL_NAME} has sha256 {digest}, expected {WHEEL_SHA256}; refusing to use it")
    return wheel


def _extract_torchair(wheel: Path, staging: Path):
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if n.startswith(_TORCHAIR_IN_WHEEL) and n.endswith(".py")]
        if not members:
            raise RuntimeError(f"airfuse: {WHEEL_NAME} holds no {_TORCHAIR_IN_WHEEL}")
        for name in members:
            target = staging / "torchair" / name[len(_TORCHAIR_IN_WHEEL):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
