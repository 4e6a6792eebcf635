"""``python -m airfuse.build_npu``: build the NPU eager binding and the CANN custom-op package on an
NPU host, from the C++ sources the installed airfuse carries (``airfuse/native``; in a source
checkout, the checkout's own).

It needs a CANN toolkit (``source /usr/local/Ascend/ascend-toolkit/set_env.sh`` sets
``ASCEND_HOME_PATH``) and torch_npu installed for this torch, and refuses, naming what is missing,
without them. CMake builds the binding against the installed torch and torch_npu and the CANN
package for ``--soc`` (``AIRFUSE_CHECKS=OFF``: no twin, no tests' libraries) in ``--build-dir``. An
installed airfuse gets the binding copied into ``airfuse/lib``, where ``import airfuse`` loads it (a
checkout loads it from its build directory). ``--install-path`` runs the package's installer there;
its ``set_env.bash`` then puts the package on ``ASCEND_CUSTOM_OPP_PATH``.
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import libraries
from .offline.fetch import cache_dir

PACKAGE_SOURCES = Path(__file__).resolve().parent / "native"
CHECKOUT_SOURCES = Path(__file__).resolve().parent.parent
# What the build reads; a directory without them is not airfuse's sources.
REQUIRED = ("CMakeLists.txt", "csrc/npu/binding.cmake", "csrc/cpu/kernels.cmake", "op_host/cann/package.cmake", "kernels")
DEFAULT_TOOLKIT = Path("/usr/local/Ascend/ascend-toolkit/latest")


def sources() -> Path:
    """The installed package's C++ sources, else the checkout's; an error if neither is complete."""
    for root in (PACKAGE_SOURCES, CHECKOUT_SOURCES):
        if all((root / rel).exists() for rel in REQUIRED):
            return root
    raise SystemExit(f"airfuse.build_npu: no airfuse C++ sources at {PACKAGE_SOURCES} (an installed airfuse) "
                     f"nor {CHECKOUT_SOURCES} (a checkout); reinstall airfuse: `{libraries.REINSTALL}`")


def missing_prerequisites(environ=os.environ) -> list[str]:
    """What this host lacks to build for the NPU, each with how to get it."""
    missing = []
    toolkit = environ.get("ASCEND_HOME_PATH")
    if not (toolkit and Path(toolkit).is_dir()) and not DEFAULT_TOOLKIT.is_dir():
        missing.append(f"no CANN toolkit (ASCEND_HOME_PATH is {'unset' if not toolkit else toolkit + ', not a directory'} "
                       f"and {DEFAULT_TOOLKIT} does not exist): install CANN and `source <toolkit>/set_env.sh`")
    if importlib.util.find_spec("torch_npu") is None:
        missing.append("torch_npu is not installed: install the torch_npu release made for this torch "
                       "(README.md, 'Supported torch releases')")
    return missing


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m airfuse.build_npu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", default="Ascend910B2", help="SoC the CANN package is compiled for (default Ascend910B2)")
    parser.add_argument("--build-dir", type=Path, help="CMake build directory (default: under airfuse's cache)")
    parser.add_argument("--install-path", type=Path, help="run the CANN package's installer into this directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="parallel compile jobs")
    args = parser.parse_args(argv)
    root = sources()
    print(f"airfuse.build_npu: sources {root}", flush=True)
    missing = missing_prerequisites()
    if missing:
        sys.exit("airfuse.build_npu: cannot build the NPU binding and the CANN package on this host: " + "; ".join(missing)
                 + ". (Without an NPU nothing needs building: airfuse runs on the CPU, and TorchAir offline.)")
    installed = root == PACKAGE_SOURCES
    build = args.build_dir or (cache_dir() / "npu-build" if installed else libraries.build_dir())
    _run(["cmake", "-S", str(root), "-B", str(build), "-DAIRFUSE_CHECKS=OFF", f"-DAIRFUSE_SOC_VERSION={args.soc}",
          f"-DAIRFUSE_PYTHON={sys.executable}", f"-DPython3_EXECUTABLE={sys.executable}"])
    _run(["cmake", "--build", str(build), "--target", "airfuse_npu", "cann_package", "-j", str(args.jobs)])
    binding = build / "libairfuse_npu.so"
    if installed:
        libraries.PACKAGE_LIB_DIR.mkdir(exist_ok=True)
        binding = Path(shutil.copy2(binding, libraries.PACKAGE_LIB_DIR))
    print(f"airfuse.build_npu: NPU binding {binding}")
    built = sorted((build / "cann_project" / "build_out").glob("custom_opp_*.run"), key=lambda p: p.stat().st_mtime)
    if not built:
        sys.exit(f"airfuse.build_npu: CMake built no CANN package in {build / 'cann_project' / 'build_out'}; see its output above")
    package = built[-1]
    if args.install_path:
        _run([str(package), f"--install-path={args.install_path}"])
        print(f"airfuse.build_npu: now `source {args.install_path}/vendors/customize/bin/set_env.bash`")
    else:
        print(f"airfuse.build_npu: CANN package {package}; install it with `{package} --install-path=<dir>`")


def _run(cmd: list[str]):
    print("airfuse.build_npu:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
