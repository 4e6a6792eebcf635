"""The emulated NPU (tests/npu/emulated, built by `make test`): load it and read its records.

``load()`` makes "npu" a PrivateUse1 device on host memory, registers airfuse's binding in its
emulated flavour (the same source as the real one) and points ASCEND_CUSTOM_OPP_PATH at the
stand-in vendor package, whose aclnn functions run op_host's tiling and the Ascend C kernels on
the CPU twin.
"""

from __future__ import annotations

import ctypes
import functools
import os
import types

import torch

from airfuse import npu_binding

EMULATED = npu_binding.BUILD_DIR / "emulated_npu"
BACKEND = EMULATED / "libemulated_npu_backend.so"
OPAPI = EMULATED / "lib64" / "libopapi.so"
VENDOR = EMULATED / "vendors" / "customize"
CUST_OPAPI = VENDOR / "op_api" / "lib" / "libcust_opapi.so"


class AclnnCall(ctypes.Structure):
    """The stand-in vendor library's record of its last phase 2 (cust_opapi.cpp, ``Call``)."""

    _fields_ = [("op", ctypes.c_char * 64), ("stream", ctypes.c_void_p), ("workspace", ctypes.c_void_p),
                ("workspace_size", ctypes.c_uint64), ("required_workspace", ctypes.c_uint64), ("block_dim", ctypes.c_uint32),
                ("ntensors", ctypes.c_int32), ("offsets", ctypes.c_int64 * 8), ("storage", ctypes.c_void_p * 8)]


def _device_module():
    # What torch and Dynamo ask of torch.npu.
    mod = types.ModuleType("torch.npu")
    mod.is_available = lambda: True
    mod.device_count = lambda: 1
    mod.current_device = lambda: 0
    mod._is_in_bad_fork = lambda: False
    mod.get_rng_state = lambda device="npu": torch.get_rng_state()
    mod.set_rng_state = lambda state, device="npu": torch.set_rng_state(state)
    # Random ops on "npu" run through the CPU fallback on the CPU generator: nothing else to seed.
    mod.manual_seed = mod.manual_seed_all = lambda seed: None
    mod.synchronize = lambda device=None: None
    return mod


class Emulated:
    def __init__(self, binding: ctypes.CDLL):
        self.binding = binding
        self.backend = ctypes.CDLL(str(BACKEND))
        self.backend.emulated_npu_allocation_size.restype = ctypes.c_size_t
        self.backend.emulated_npu_allocation_size.argtypes = [ctypes.c_void_p]

    # Opened on first use, so that only the binding's own lookup decides which libraries load
    # (tests/npu/test_npu_lookup.py).
    @functools.cached_property
    def opapi(self) -> ctypes.CDLL:
        lib = ctypes.CDLL(str(OPAPI))
        lib.emulated_acl_live_tensors.restype = ctypes.c_int64
        return lib

    @functools.cached_property
    def vendor(self) -> ctypes.CDLL:
        lib = ctypes.CDLL(str(CUST_OPAPI))
        lib.emulated_aclnn_last_call.restype = ctypes.POINTER(AclnnCall)
        lib.emulated_aclnn_calls.restype = ctypes.c_uint64
        lib.emulated_aclnn_calls.argtypes = [ctypes.c_char_p]
        lib.emulated_aclnn_live_executors.restype = ctypes.c_int64
        lib.emulated_aclnn_fail_next.argtypes = [ctypes.c_int32, ctypes.c_char_p]
        return lib

    def last_call(self) -> AclnnCall:
        return self.vendor.emulated_aclnn_last_call().contents

    def calls(self, ir_type: str) -> int:
        return self.vendor.emulated_aclnn_calls(ir_type.encode())

    def live_tensors(self) -> int:
        return self.opapi.emulated_acl_live_tensors()

    def live_executors(self) -> int:
        return self.vendor.emulated_aclnn_live_executors()

    def allocation_size(self, ptr: int) -> int:
        return self.backend.emulated_npu_allocation_size(ptr)

    def fail_next(self, status: int, message: str):
        self.vendor.emulated_aclnn_fail_next(status, message.encode())


_emulated: Emulated | None = None


def register_device() -> bool:
    """Register the PrivateUse1 device (C++ only: no rename, no torch.npu), if it is built.

    Autograd sizes its per-device queues when the first backward of the process runs, from the
    device guards registered then; so this must happen before any test runs a backward.
    """
    if BACKEND.is_file():
        torch.ops.load_library(str(BACKEND))
    return BACKEND.is_file()


def load() -> Emulated:
    global _emulated
    if _emulated is None:
        missing = [p for p in (BACKEND, OPAPI, CUST_OPAPI, npu_binding.EMULATED_BINDING) if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"emulated NPU not built ({', '.join(map(str, missing))}); run `make twin`")
        os.environ.setdefault("ASCEND_CUSTOM_OPP_PATH", str(VENDOR))
        register_device()
        torch.utils.rename_privateuse1_backend("npu")
        torch._register_device_module("npu", _device_module())
        torch.utils.generate_methods_for_privateuse1_backend()
        _emulated = Emulated(npu_binding.load(npu_binding.EMULATED_BINDING))
    return _emulated
