"""setup.py's parts (not part of the package): the Python packages, found in the tree; airfuse's
fused CPU kernels compiled by CMake against the torch this Python imports, and the C++ sources
``python -m airfuse.build_npu`` compiles on an NPU host, both put into the package.

CMake's build directory, so that a wheel built again compiles only what changed:
``AIRFUSE_BUILD_DIR`` if set; else the checkout's ``build/`` if CMake was configured there with this
very interpreter (``make twin`` did, for ``.venv``: the wheel then takes the library it built);
else ``build/package-torch<version>-abi<0|1>``, configured for the package alone (no twin, no
tests' libraries, no CANN package). ``CMAKE_BUILD_PARALLEL_LEVEL`` sets the compile jobs (default 1).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent
# Top-level folders of the repository layout that are packages of airfuse.
FOLDERS_MAPPED = {"airfuse.meta": "meta", "airfuse.converters": "converters"}
# What CMakeLists.txt needs with AIRFUSE_CHECKS=OFF: the CPU kernels, the NPU binding, the CANN package.
NATIVE_SOURCES = ("CMakeLists.txt", "csrc", "kernels", "op_host")
_TORCH_QUERY = "import torch; print(torch.__version__.split('+')[0], int(torch._C._GLIBCXX_USE_CXX11_ABI))"


def packages() -> list[str]:
    """Every Python package of ``airfuse/`` and of the folders mapped into it."""
    found = find_packages(str(ROOT), include=["airfuse", "airfuse.*"])
    for package, folder in FOLDERS_MAPPED.items():
        found += [package] + [f"{package}.{sub}" for sub in find_packages(str(ROOT / folder))]
    return found


def installed_torch() -> tuple[str, bool]:
    """(torch release, C++11 ABI) of the torch this interpreter imports; exit saying what to do without one."""
    result = subprocess.run([sys.executable, "-c", _TORCH_QUERY], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            "airfuse: building the package compiles its CPU kernels against the installed torch, and this build "
            f"cannot import torch ({result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'no output'}). "
            "Install torch (>=2.10,<2.15) first, then build without pip's isolated environment, which has no "
            "torch: `pip install --no-build-isolation .` (or `pip wheel --no-build-isolation .`)"
        )
    version, abi = result.stdout.split()
    return version, abi == "1"


def configured_python(build: Path) -> str | None:
    """The interpreter CMake found torch with in ``build`` (its AIRFUSE_PYTHON), or None if unconfigured."""
    cache = build / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text().splitlines():
        if line.startswith("AIRFUSE_PYTHON:"):
            return line.split("=", 1)[1]
    return None


def cmake_build_dir(torch_version: str, cxx11_abi: bool) -> Path:
    explicit = os.environ.get("AIRFUSE_BUILD_DIR")
    if explicit:
        return Path(explicit).resolve()
    if configured_python(ROOT / "build") == sys.executable:
        return ROOT / "build"
    return ROOT / "build" / f"package-torch{torch_version}-abi{int(cxx11_abi)}"


def build_cpu_kernels(dest: Path) -> Path:
    """Build ``libairfuse_cpu.so`` against the installed torch into ``dest`` with its build info."""
    version, abi = installed_torch()
    build = cmake_build_dir(version, abi)
    python = configured_python(build)
    if python is None:
        _run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DAIRFUSE_CHECKS=OFF",
              "-DAIRFUSE_WITH_CANN=OFF", f"-DAIRFUSE_PYTHON={sys.executable}"])
    elif python != sys.executable:
        _run(["cmake", "-S", str(ROOT), "-B", str(build), f"-DAIRFUSE_PYTHON={sys.executable}"])
    _run(["cmake", "--build", str(build), "--target", "airfuse_cpu"])
    dest.mkdir(parents=True, exist_ok=True)
    library = shutil.copy2(build / "libairfuse_cpu.so", dest)
    (dest / "build_info.json").write_text(json.dumps({"torch": version, "cxx11_abi": abi}) + "\n")
    print(f"airfuse: CPU kernels for torch {version} from {build}", file=sys.stderr)
    return Path(library)


def copy_native_sources(dest: Path):
    """Copy what CMake needs to build the NPU binding and the CANN package into ``dest``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in NATIVE_SOURCES:
        source, target = ROOT / name, dest / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=ignore, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _run(cmd: list[str]):
    print("airfuse:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
