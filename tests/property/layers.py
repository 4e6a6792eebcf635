"""The layers an airfuse op runs on, each called the way its users call it.

Every runner takes (op definition, inputs by IR name) and returns the outputs in IR order, or
None where the layer does not take the combination (float64 exists only on the CPU).
"""

import functools

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import airfuse
from airfuse import twin
from airfuse.opdef import IR_FLOAT_DTYPES


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
    with torch._dynamo.config.patch(recompile_limit=10_000, fail_on_recompile_limit_hit=True):
        return _compiled(op.name)(*args)


def twin_runs(op) -> bool:
    """Whether the twin has a launcher for ``op`` (test_cross_layer checks this against kernels/)."""
    return hasattr(twin, op.name)


def on_twin(op, inputs):
    """The Ascend C kernel on the CPU twin, with op_host's tiling."""
    if not _ir_dtypes_only(inputs) or not twin_runs(op):
        return None
    return getattr(twin, op.name)(*(inputs[p.name] for p in op.inputs), *(inputs[a.name] for a in op.attrs)).outputs


LAYERS = {"eager": eager, "compiled": compiled, "twin": on_twin}
