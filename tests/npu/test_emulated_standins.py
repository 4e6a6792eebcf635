"""The emulated CANN libraries refuse what the real ones would, called directly through the aclnn
C ABI (the binding never sends these): a stand-in that accepts more than the device hides bugs."""

import ctypes

import pytest
import torch

ACL_FLOAT, ACL_FLOAT16, ND = 0, 1, 2
PARAM_NULL, PARAM_INVALID = 161001, 161002
I64P = ctypes.POINTER(ctypes.c_int64)


@pytest.fixture(scope="module")
def acl(npu):
    lib = npu.opapi
    lib.aclCreateTensor.restype = ctypes.c_void_p
    lib.aclCreateTensor.argtypes = [I64P, ctypes.c_uint64, ctypes.c_int32, I64P, ctypes.c_int64, ctypes.c_int32, I64P, ctypes.c_uint64,
                                    ctypes.c_void_p]
    lib.aclDestroyTensor.argtypes = [ctypes.c_void_p]
    lib.aclGetRecentErrMsg.restype = ctypes.c_char_p
    v = npu.vendor
    v.aclnnAirfuseAddGetWorkspaceSize.argtypes = [ctypes.c_void_p] * 3 + [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
    v.aclnnAirfuseAdd.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _ints(values):
    return (ctypes.c_int64 * len(values))(*values)


class Tensors:
    """aclTensors over CPU tensors (the emulated device memory is host memory), destroyed at exit."""

    def __init__(self, acl):
        self.acl, self.made, self.keep = acl, [], []

    def make(self, t: torch.Tensor, dtype=ACL_FLOAT, *, storage_elems=None):
        self.keep.append(t)
        storage = storage_elems or t.untyped_storage().nbytes() // t.element_size()
        p = self.acl.aclCreateTensor(_ints(t.shape), t.dim(), dtype, _ints(t.stride()), t.storage_offset(), ND, _ints([storage]), 1,
                                     t.untyped_storage().data_ptr())
        if p:
            self.made.append(p)
        return p

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.made:
            self.acl.aclDestroyTensor(p)


def _prepare(npu, x, y, z):
    size, executor = ctypes.c_uint64(), ctypes.c_void_p()
    status = npu.vendor.aclnnAirfuseAddGetWorkspaceSize(x, y, z, ctypes.byref(size), ctypes.byref(executor))
    return status, size.value, executor


def _message(acl):
    return acl.aclGetRecentErrMsg().decode()


def test_view_outside_its_storage_is_refused(acl, no_leaks):
    with Tensors(acl) as t:
        assert not t.make(torch.zeros(4, 4)[1:], storage_elems=8)
    assert "lies outside the storage of 8 elements" in _message(acl)


def test_non_contiguous_input_is_refused(npu, acl, no_leaks):
    with Tensors(acl) as t:
        x = torch.zeros(4, 6)
        status, _, _ = _prepare(npu, t.make(x.t()), t.make(torch.zeros(6, 4)), t.make(torch.zeros(6, 4)))
    assert status == PARAM_INVALID
    assert _message(acl) == "AirfuseAdd: x is not contiguous and the OpDef declares no AutoContiguous"


def test_output_that_does_not_match_inference_is_refused(npu, acl, no_leaks):
    with Tensors(acl) as t:
        x = torch.zeros(2, 8)
        status, _, _ = _prepare(npu, t.make(x), t.make(x), t.make(torch.zeros(2, 8, dtype=torch.half), ACL_FLOAT16))
    assert status == PARAM_INVALID
    assert _message(acl) == "AirfuseAdd: outputs 2,8:1 do not match op_host's inference 2,8:0 from inputs 2,8:0;2,8:0"


@pytest.mark.parametrize("fault", ["null stream", "small workspace", "executor reused"])
def test_phase2_refusals(fault, npu, acl, no_leaks):
    stream = ctypes.c_void_p(0x1000)
    with Tensors(acl) as t:
        x = torch.ones(3, 5)
        status, size, executor = _prepare(npu, t.make(x), t.make(x), t.make(torch.empty(3, 5)))
        assert status == 0 and size >= 16 << 20
        workspace = torch.empty(size, dtype=torch.uint8)
        ws = workspace.data_ptr()
        if fault == "null stream":
            assert npu.vendor.aclnnAirfuseAdd(ws, size, executor, None) == PARAM_NULL
            assert _message(acl) == "AirfuseAdd: stream is null"
        elif fault == "small workspace":
            assert npu.vendor.aclnnAirfuseAdd(ws, size - 32, executor, stream) == PARAM_INVALID
            assert _message(acl) == f"AirfuseAdd: workspace of {size - 32} bytes, phase 1 asked for {size}"
        else:
            assert npu.vendor.aclnnAirfuseAdd(ws, size, executor, stream) == 0
            assert torch.equal(t.keep[2], torch.full((3, 5), 2.0))
            assert npu.vendor.aclnnAirfuseAdd(ws, size, executor, stream) == PARAM_INVALID
            assert _message(acl) == "AirfuseAdd: the executor is not one of this op's live executors"
