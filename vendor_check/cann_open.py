"""Find the vendor's code that judges airfuse, then build the vendor check against it.

The vendor check compiles airfuse's kernels and op_host against CANN's own headers and runs CANN's
opbuild on op_host (vendor_check/README.md). Its sources, first found wins:

1. ``AIRFUSE_CANN_OPEN``: a tree laid out as CANN's open-source repositories
   (``asc-devkit/``, ``asc-tools/``, ``metadef/``, ``ge/``, ``libboundscheck/``);
2. ``../shared/vendor/cann-open`` beside the project, when it exists;
3. ``ASCEND_HOME_PATH``: an installed CANN toolkit (an NPU host). Its folders differ from the
   open-source layout and no toolkit was at hand to learn them, so this layout records which
   checks it could not make (vendor_check/README.md); an open-source tree, where there is one,
   is preferred for that reason.

With none, the check is skipped with one line saying why, unless ``AIRFUSE_REQUIRE_CANN_OPEN=1``
(CI sets it): then a missing tree is an error.

    python vendor_check/cann_open.py [--build BUILD_DIR]

prints where the sources are (or why the check is skipped) and, with ``--build``, configures and
builds ``vendor_check/CMakeLists.txt`` into BUILD_DIR, reusing it across runs. The outcome is
recorded in BUILD_DIR/state.json for tests/vendor.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
DEFAULT_TREE = PROJECT.parent / "shared" / "vendor" / "cann-open"
# The open-source repositories the check reads, and one file each that says the tree is whole.
OPEN_TREE_MARKERS = {
    "asc-devkit": "include/kernel_operator.h",
    "asc-tools": "cpudebug/include/stub_def.h",
    "metadef": "inc/external/asc/register/op_def_registry.h",
    "ge": "inc/graph_metadef/external/graph/operator_reg.h",
    "libboundscheck": "include/securec.h",
}


class VendorTreeError(RuntimeError):
    pass


@dataclass
class VendorSources:
    layout: str  # "open" (CANN's open-source repositories) or "toolkit" (an installed CANN)
    root: str
    chosen_by: str  # which rule found it


def _required() -> bool:
    return os.environ.get("AIRFUSE_REQUIRE_CANN_OPEN", "") not in ("", "0")


def _check_open_tree(root: Path, chosen_by: str) -> VendorSources:
    missing = [f"{repo}/{marker}" for repo, marker in OPEN_TREE_MARKERS.items() if not (root / repo / marker).is_file()]
    if missing:
        raise VendorTreeError(f"vendor check: {chosen_by} names {root}, which is not a CANN open-source tree "
                              f"(missing {', '.join(missing)}); see vendor_check/README.md")
    return VendorSources("open", str(root), chosen_by)


def find_sources() -> tuple[VendorSources | None, str]:
    """The vendor sources, or None and the reason the check is skipped. Raises VendorTreeError
    when a named tree is broken, or when none is found and AIRFUSE_REQUIRE_CANN_OPEN is set."""
    named = os.environ.get("AIRFUSE_CANN_OPEN")
    if named:
        return _check_open_tree(Path(named).resolve(), "AIRFUSE_CANN_OPEN"), ""
    if DEFAULT_TREE.is_dir():
        return _check_open_tree(DEFAULT_TREE, "the default location"), ""
    toolkit = os.environ.get("ASCEND_HOME_PATH")
    if toolkit and Path(toolkit).is_dir():
        return VendorSources("toolkit", str(Path(toolkit).resolve()), "ASCEND_HOME_PATH"), ""
    reason = (f"no vendor sources: AIRFUSE_CANN_OPEN and ASCEND_HOME_PATH are unset and {DEFAULT_TREE} "
              "does not exist")
    if _required():
        raise VendorTreeError(f"vendor check: AIRFUSE_REQUIRE_CANN_OPEN=1 but {reason}")
    return None, reason


def _write_state(build_dir: Path, state: dict) -> None:
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "state.json").write_text(json.dumps(state, indent=1) + "\n")


def build(build_dir: Path, sources: VendorSources, python: str) -> None:
    cache = build_dir / "CMakeCache.txt"
    configure = ["cmake", "-S", str(PROJECT / "vendor_check"), "-B", str(build_dir), "-G", "Unix Makefiles",
                 f"-DCANN_LAYOUT={sources.layout}", f"-DCANN_ROOT={sources.root}", f"-DAIRFUSE_PYTHON={python}"]
    state_file = build_dir / "state.json"
    previous = json.loads(state_file.read_text()) if state_file.is_file() else {}
    if not cache.is_file() or previous.get("sources") != asdict(sources):
        subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    # The vendor's headers print pages of deprecation notes (#pragma message) that -w does not
    # silence: the build's output goes to a log, and only its errors are shown when it fails.
    log = build_dir / "build.log"
    with log.open("w") as out:
        done = subprocess.run(["cmake", "--build", str(build_dir), "-j", str(min(2, os.cpu_count() or 1))],
                              stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        errors = [line for line in log.read_text(errors="replace").splitlines() if "error" in line.lower()]
        print("\n".join(errors[:60]), file=sys.stderr)
        raise subprocess.CalledProcessError(done.returncode, done.args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="configure and build the vendor check into this directory")
    args = parser.parse_args(argv)
    try:
        sources, reason = find_sources()
    except VendorTreeError as error:
        print(error, file=sys.stderr)
        if args.build:
            _write_state(args.build, {"status": "error", "reason": str(error)})
        return 1
    if sources is None:
        print(f"vendor check SKIPPED: {reason} (set AIRFUSE_CANN_OPEN to CANN's open-source tree)")
        if args.build:
            _write_state(args.build, {"status": "skipped", "reason": reason})
        return 0
    print(f"vendor check: {sources.layout} sources at {sources.root} ({sources.chosen_by})")
    if args.build:
        if shutil.which("cmake") is None:
            raise SystemExit("vendor check: cmake is not on PATH")
        _write_state(args.build, {"status": "building", "sources": asdict(sources)})
        try:
            build(args.build, sources, sys.executable)
        except subprocess.CalledProcessError as error:
            reason = (f"`{' '.join(error.cmd)}` failed (exit {error.returncode}); its errors are above, "
                      f"the whole output in {args.build / 'build.log'}")
            _write_state(args.build, {"status": "failed", "sources": asdict(sources), "reason": reason})
            print(f"vendor check FAILED: {reason}", file=sys.stderr)
            return 1
        _write_state(args.build, {"status": "built", "sources": asdict(sources)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
