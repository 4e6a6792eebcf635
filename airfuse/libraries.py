"""Where airfuse's native libraries are.

An installed airfuse (``pip install .``, a wheel) carries them inside the package, in
``airfuse/lib/``: the fused CPU kernels, compiled when the package was built against the torch
installed then (``build_info.json`` beside them says which torch), and the NPU binding once
``python -m airfuse.build_npu`` has built it on an NPU host. A source checkout (the editable
install of ``make setup``) has no ``airfuse/lib/`` and loads them, the twin and the tests'
libraries from CMake's build directory: ``build/``, or the directory ``AIRFUSE_BUILD_DIR`` names
(``make compat`` builds one per torch version), which then wins over the package's.
"""

import json
import os
from pathlib import Path

BUILD_DIR_ENV = "AIRFUSE_BUILD_DIR"
VENDOR_BUILD_ENV = "AIRFUSE_VENDOR_BUILD"
PACKAGE_LIB_DIR = Path(__file__).resolve().parent / "lib"
BUILD_INFO = "build_info.json"
REINSTALL = "pip install --no-build-isolation --no-cache-dir --force-reinstall airfuse"


def build_dir() -> Path:
    """CMake's build directory of a source checkout (``AIRFUSE_BUILD_DIR``, else ``build/``)."""
    explicit = os.environ.get(BUILD_DIR_ENV)
    return Path(explicit).resolve() if explicit else Path(__file__).resolve().parent.parent / "build"


def vendor_build_dir() -> Path:
    """The vendor check's build directory (``make vendor-build``, ``vendor_check/README.md``):
    ``AIRFUSE_VENDOR_BUILD``, else the checkout's ``build/vendor_check``. Nothing in it links torch,
    so it does not follow ``AIRFUSE_BUILD_DIR``: every torch version's run reads the same one."""
    explicit = os.environ.get(VENDOR_BUILD_ENV)
    return Path(explicit).resolve() if explicit else Path(__file__).resolve().parent.parent / "build" / "vendor_check"


def library(name: str) -> Path:
    """The path ``lib<name>.so`` is loaded from: the package's copy unless ``AIRFUSE_BUILD_DIR`` is
    set or the package has none (a source checkout), else the build directory's."""
    packaged = PACKAGE_LIB_DIR / f"lib{name}.so"
    if packaged.is_file() and not os.environ.get(BUILD_DIR_ENV):
        return packaged
    return build_dir() / f"lib{name}.so"


def torch_mismatch(path: Path, torch_version: str, cxx11_abi: bool) -> str | None:
    """Why the library at ``path`` cannot be loaded into this torch, or None.

    A packaged library was compiled against one torch release and C++ ABI, which its
    ``build_info.json`` records; another torch does not export the same C++ symbols, so loading it
    would fail with an unresolved symbol, or worse. A build directory has no build info: CMake
    compiled it against the interpreter it was configured with."""
    info_path = path.parent / BUILD_INFO
    if not info_path.is_file():
        return None
    info = json.loads(info_path.read_text())
    release = torch_version.split("+", 1)[0]
    if info["torch"] == release and info["cxx11_abi"] == cxx11_abi:
        return None
    return (f"{path} was compiled against torch {info['torch']} (C++11 ABI {info['cxx11_abi']}), and this is "
            f"torch {release} (C++11 ABI {cxx11_abi}); rebuild airfuse against it: `{REINSTALL}`")
