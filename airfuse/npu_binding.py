"""The NPU eager binding: PrivateUse1 kernels calling the aclnn entry points (csrc/npu).

``import airfuse`` loads it where torch_npu imports: then ``torch.ops.airfuse.*`` on "npu" tensors
call ``aclnnAirfuse<Op>GetWorkspaceSize`` / ``aclnnAirfuse<Op>`` of the installed custom-op package on
the current stream. Elsewhere nothing is loaded and nothing fails. ``python -m airfuse.build_npu``
builds it into the installed package (``airfuse/lib/libairfuse_npu.so``), CMake into a checkout's
``build/libairfuse_npu.so`` (docs/eager_npu.md); ``AIRFUSE_NPU_BINDING`` names another path.
The aclnn symbols are looked up when the first op runs, so ``ASCEND_CUSTOM_OPP_PATH`` (set by the
package's ``set_env.bash``) may be set any time before that.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import warnings
from pathlib import Path

import torch

from . import libraries

BUILD_DIR = libraries.build_dir()
BINDING = libraries.library("airfuse_npu")
EMULATED_BINDING = BUILD_DIR / "libairfuse_npu_emulated.so"
BUILD_COMMAND = "`python -m airfuse.build_npu` (in a checkout: `cmake -S . -B build && cmake --build build -j`)"

_loaded: dict[Path, ctypes.CDLL] = {}


def load(path: Path) -> ctypes.CDLL:
    """Register the PrivateUse1 kernels of the binding at ``path`` (once); return its C handle."""
    path = Path(path).resolve()
    if path not in _loaded:
        if not path.is_file():
            raise FileNotFoundError(f"airfuse: NPU binding {path} not found; build it with {BUILD_COMMAND} "
                                    "(docs/eager_npu.md)")
        torch.ops.load_library(str(path))
        lib = ctypes.CDLL(str(path))
        lib.airfuse_npu_op_table_json.restype = ctypes.c_char_p
        lib.airfuse_npu_symbol_origin.restype = ctypes.c_char_p
        lib.airfuse_npu_symbol_origin.argtypes = [ctypes.c_char_p]
        _loaded[path] = lib
    return _loaded[path]


def op_table(lib: ctypes.CDLL) -> list[dict]:
    """The binding's rows: op, aclnn entry, phase 1's parameter kinds, the dtypes it maps."""
    return json.loads(lib.airfuse_npu_op_table_json())


def symbol_origin(lib: ctypes.CDLL, symbol: str) -> str | None:
    """The library ``symbol`` was resolved from by the binding, or None before it was."""
    origin = lib.airfuse_npu_symbol_origin(symbol.encode())
    return origin.decode() if origin else None


def load_where_torch_npu_imports() -> ctypes.CDLL | None:
    """Load the real binding if torch_npu is installed and imports; otherwise do nothing."""
    if importlib.util.find_spec("torch_npu") is None:
        return None
    try:
        import torch_npu  # noqa: F401  (registers the "npu" device the binding's kernels are for)
    except Exception as exc:  # torch_npu without a working CANN: there is no device to bind to
        warnings.warn(f"airfuse: torch_npu is installed but does not import ({exc}); NPU eager kernels are not loaded")
        return None
    path = Path(os.environ.get("AIRFUSE_NPU_BINDING") or BINDING)
    if not path.is_file():
        warnings.warn(f"airfuse: torch_npu imports but the NPU binding {path} is not built, so airfuse ops have no "
                      f"'npu' kernels; build it with {BUILD_COMMAND} (docs/eager_npu.md)")
        return None
    try:
        return load(path)
    except OSError as exc:  # e.g. built against another torch or torch_npu
        warnings.warn(f"airfuse: the NPU binding {path} does not load ({exc}); airfuse ops have no 'npu' kernels. Rebuild it "
                      f"against this torch_npu: {BUILD_COMMAND} (docs/eager_npu.md)")
        return None
