"""The layers an airfuse op runs on, each called the way its users call it.

Every runner takes (op definition, inputs by IR name) and returns the outputs in IR order, or
None where the layer does not take the combination (float64 exists only on the CPU).
"""

import functools
import importlib.util
import sys
from pathlib import Path

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import airfuse
from airfuse import twin
from airfuse.opdef import IR_FLOAT_DTYPES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "npu"))
import emulated_npu  # noqa: E402  (tests/npu: the emulated NPU)

REAL_NPU = importlib.util.find_spec("torch_npu") is not None
if not REAL_NPU:
    # Before any backward of the session (tests/npu/conftest.py says why); a no-op if not built.
    emulated_npu.register_device()


def _call(op, inputs):
    outputs = getattr(torch.ops.airfuse, op.name)(*(inputs[p.name] for p in op.inputs), *(inputs[a.name] for a in op.attrs))
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def _ir_dtypes_only(inputs):
    return all(v.dtype in IR_FLOAT_DTYPES for v in inputs.values() if isinstance(v, torch.Tensor))


def eager(op, inputs):
    return _call(op, inputs)


def fake(op, inputs):
    """(shape, dtype) of each output of the fake impl, traced with symbolic sizes."""
    with FakeTensorMode(shape_env=ShapeEnv(), static_shapes=False) as mode:
        fakes = {k: mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        return tuple((tuple(int(s) for s in o.shape), o.dtype) for o in _call(op, fakes))


@functools.cache
def _compiled(op_name):
    op = airfuse.ops.ALL_OPS[op_name]
    return torch.compile(lambda *args: _call(op, dict(zip([p.name for p in op.inputs] + [a.name for a in op.attrs], args))),
                         backend=airfuse.get_npu_backend(), dynamic=True, fullgraph=True)


def compiled(op, inputs):
    """Through TorchAir's GE graph, run by the offline executor here (natively on an NPU host)."""
    if not _ir_dtypes_only(inputs):
        return None
    args = [inputs[p.name] for p in op.inputs] + [inputs[a.name] for a in op.attrs]
    # A silent fall back to eager after too many recompiles would make this layer test nothing.
    # Each new rank, dtype, attr or size-1 pattern recompiles: a 1,000-example fuzz run passed the
    # default limit of 256 recompiles in all (rope's broadcast tables).
    with torch._dynamo.config.patch(recompile_limit=10_000, accumulated_recompile_limit=10_000, fail_on_recompile_limit_hit=True):
        return _compiled(op.name)(*args)


def on_twin(op, inputs):
    """The Ascend C kernel on the CPU twin, with op_host's tiling."""
    if not _ir_dtypes_only(inputs):
        return None
    return getattr(twin, op.name)(*(inputs[p.name] for p in op.inputs), *(inputs[a.name] for a in op.attrs)).outputs


def on_npu(op, inputs):
    """The "npu" eager kernel: the real device where torch_npu is installed, else the emulated NPU
    of tests/npu (binding -> aclnn ABI -> op_host tiling -> the kernel on the twin)."""
    if not _ir_dtypes_only(inputs):
        return None
    if not REAL_NPU:
        emulated_npu.load()
    on_device = {k: v.to("npu") if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    return tuple(o.cpu() for o in _call(op, on_device))


LAYERS = {"eager": eager, "compiled": compiled, "twin": on_twin, "npu": on_npu}
