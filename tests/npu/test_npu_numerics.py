"""Every op of airfuse's CANN package, every IR dtype combination, on the emulated "npu": the binding
calls the op's aclnn entry points, whose stand-in runs op_host's tiling and the Ascend C kernel on
the twin; results equal the CPU kernel's."""

import math

import pytest
import torch

from npu_cases import LONG_ROWS, PACKAGED_OPS, SHAPES, WHOLE_ROW_OPS, assert_matches_cpu, sample_inputs

CASES = [(op, combo) for op in PACKAGED_OPS for combo in op.dtype_combos]


def _id(case):
    op, combo = case
    return f"{op.name}-" + "-".join(str(combo[p.name]).removeprefix("torch.") for p in op.inputs)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_npu_equals_cpu_kernel(case, shape, npu, no_leaks):
    op, combo = case
    inputs = sample_inputs(op, combo, shape)
    fn = getattr(torch.ops.airfuse, op.name)
    calls = npu.calls(op.ir_type)
    if op.name in WHOLE_ROW_OPS and shape == LONG_ROWS:
        with pytest.raises(RuntimeError, match=f"{op.ir_type}GetWorkspaceSize returned status 561002: .*op_host's tiling refused"):
            fn(*[t.to("npu") for t in inputs])
        assert npu.calls(op.ir_type) == calls
        return
    out = fn(*[t.to("npu") for t in inputs])
    assert npu.calls(op.ir_type) == calls + 1
    assert_matches_cpu(out, fn(*inputs), rows=math.prod(shape[:-1]))


def _strided_copy(t):
    """The same values in a non-contiguous view (every other element of a wider buffer)."""
    wide = torch.empty((*t.shape, 2), dtype=t.dtype, device="npu")
    view = wide.select(-1, 1)
    view.copy_(t)
    assert not view.is_contiguous()
    return view


def _offset_copy(t, offset=5):
    """The same values in a contiguous view that starts ``offset`` elements into its storage."""
    flat = torch.empty(t.numel() + offset, dtype=t.dtype, device="npu")
    view = flat[offset:].view(t.shape)
    view.copy_(t)
    return view


@pytest.mark.parametrize("op", PACKAGED_OPS, ids=lambda o: o.name)
def test_non_contiguous_views(op, npu, no_leaks):
    combo = op.dtype_combos[0]
    shape = (4, 33)
    inputs = sample_inputs(op, combo, shape)
    fn = getattr(torch.ops.airfuse, op.name)
    out = fn(*[_strided_copy(t.to("npu")) for t in inputs])
    assert_matches_cpu(out, fn(*inputs), rows=4)
    # The kernels read dense blocks, so the binding passed contiguous copies.
    call = npu.last_call()
    assert list(call.offsets[: len(op.inputs)]) == [0] * len(op.inputs)


@pytest.mark.parametrize("op", PACKAGED_OPS, ids=lambda o: o.name)
def test_storage_offset_views(op, npu, no_leaks):
    """A contiguous view into a larger storage reaches the aclnn call as the storage base pointer
    plus the view's offset in elements, as op-plugin builds aclTensors."""
    combo = op.dtype_combos[-1]
    shape = (3, 40)
    inputs = sample_inputs(op, combo, shape)
    views = [_offset_copy(t.to("npu"), offset=5 + i) for i, t in enumerate(inputs)]
    fn = getattr(torch.ops.airfuse, op.name)
    out = fn(*views)
    assert_matches_cpu(out, fn(*inputs), rows=3)
    call = npu.last_call()
    assert list(call.offsets[: len(views)]) == [5 + i for i in range(len(views))]
    assert list(call.storage[: len(views)]) == [v.untyped_storage().data_ptr() for v in views]
