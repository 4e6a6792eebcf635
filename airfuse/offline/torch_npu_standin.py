"""A stand-in for the part of ``torch_npu`` that TorchAir's npugraph_ex (aclgraph) mode uses.

In that mode TorchAir imports torch_npu and calls ``torch.npu``: streams and events (its stream
and event passes, the capture stream), the graph memory pool, ``NPUGraph`` and ``graph`` to
capture and replay, checkpoints of the pool, and tensors rebuilt over captured memory. This module
provides exactly those, with CPU tensors standing for NPU memory: one in-order "device" (streams
and events order nothing more), core limits that are remembered but limit nothing, a pool that
never hands a block out twice (so resetting it to a checkpoint frees nothing and outputs need no
deleters), and ``NPUGraph`` from ``airfuse.offline.npu_graph``. Anything else TorchAir asks of it
is refused, naming the attribute.

``installed()`` puts it in place only while an aclgraph-mode graph compiles or runs: TorchAir's GE
mode behaves differently when ``torch_npu`` is in ``sys.modules`` (it passes
``ge_run_with_torch_npu`` to GE, reads NPU formats), so the stand-in must not outlive the call.
It never loads where torch_npu imports.
"""

import contextlib
import importlib.util
import itertools
import sys
import types

import torch

from . import npu_graph

MODULE_NAME = "torch_npu"
_NO_NPU = "needs an Ascend NPU with torch_npu; airfuse is running TorchAir's npugraph_ex mode offline"
# The stand-in's device is the CPU: its tensors are CPU tensors, whose device index is None.
_DEVICE = torch.device("cpu")
# Offline there are no AI cores to limit; the numbers only have to stay the same, so that TorchAir
# decides to recapture (limits changed since capture) as it would on an NPU with no limit set.
_NO_CORE_LIMIT = {"cube_core_num": 0, "vector_core_num": 0}

_stream_ids = itertools.count(1)
_pool_ids = itertools.count(1)


class Stream:
    def __init__(self, device=None, priority=0, stream_id=None, device_index=None, device_type=None):
        self.stream_id = next(_stream_ids) if stream_id is None else stream_id
        self.device_index = _DEVICE.index if device_index is None else device_index
        self.device_type = _DEVICE.type if device_type is None else device_type
        self.priority = priority
        self.core_limit = dict(_NO_CORE_LIMIT)

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        pass  # one in-order device: earlier work on any stream is done

    def record_event(self, event=None):
        event = event if event is not None else Event()
        event.record(self)
        return event

    def query(self):
        return True

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self):
        return hash(self.stream_id)

    def __repr__(self):
        return f"<offline torch_npu Stream {self.stream_id}>"


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.recorded_on = None

    def record(self, stream=None):
        self.recorded_on = stream if stream is not None else current_stream()

    def wait(self, stream=None):
        pass  # in-order: what the event marks has run

    def reset(self, stream=None):
        self.recorded_on = None

    def query(self):
        return True

    def synchronize(self):
        pass


_DEFAULT_STREAM = Stream(stream_id=0)
_current = [_DEFAULT_STREAM]


def current_device():
    return _DEVICE.index


def current_stream(device=None):
    return _current[-1]


def set_stream(stream):
    _current[-1] = stream


@contextlib.contextmanager
def stream_scope(target):
    """``torch.npu.stream(s)``: ``s`` is the current stream inside the block."""
    if target is None:
        yield
        return
    _current.append(target)
    try:
        yield
    finally:
        _current.pop()


def synchronize(device=None):
    pass  # the CPU has run everything by the time the call returns


def empty_cache():
    pass


def graph_pool_handle():
    # torch_npu's handle is a pair of ints, one of them 0 (TorchAir checks that shape).
    return (0, next(_pool_ids))


def get_stream_limit(target):
    return dict(target.core_limit)


def set_stream_limit(target, cube_core_num, vector_core_num):
    target.core_limit = {"cube_core_num": int(cube_core_num), "vector_core_num": int(vector_core_num)}


def fake_record_stream(tensor, target):
    pass  # an allocator hint; the stand-in never reuses a block


@contextlib.contextmanager
def graph(npu_graph_, pool=None, stream=None, capture_error_mode="global"):
    with stream_scope(stream), npu_graph.capturing(npu_graph_, pool, capture_error_mode):
        yield npu_graph_


class _PoolCheckpoint:
    def __init__(self, pool):
        self.pool = pool


def _npu_get_checkpoint_state(device, pool):
    return _PoolCheckpoint(pool)


def _npu_set_checkpoint_pool_state(device, state, stale_storages, storages_to_add_deleters):
    if not isinstance(state, _PoolCheckpoint):
        raise TypeError(f"torch_npu._C._npu_setCheckpointPoolState: state must come from _npu_getCheckpointState, "
                        f"got {type(state).__name__}")


def _construct_storage_from_data_pointer(data_ptr, device, nbytes):
    return npu_graph.storage_at(data_ptr, nbytes)


def _construct_tensor_from_storage_and_metadata(metadata, storage):
    tensor = torch.empty(0, dtype=metadata["dtype"], device=_DEVICE)
    tensor.set_(storage, metadata["storage_offset"], metadata["size"], metadata["stride"])
    return tensor.requires_grad_(bool(metadata.get("requires_grad", False)))


def get_npu_format(tensor):
    from torchair.ge._ge_graph import Format

    return Format.FORMAT_ND.value  # CPU memory has no private NPU formats


def _refusing_getattr(module_name):
    def refuse(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{module_name}.{name} is not part of airfuse's offline torch_npu stand-in: it {_NO_NPU}")

    return refuse


def _namespace(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    module.__getattr__ = _refusing_getattr(name)
    return module


def _build():
    npu = _namespace(
        f"{MODULE_NAME}.npu", Stream=Stream, Event=Event, NPUGraph=npu_graph.NPUGraph, graph=graph,
        current_device=current_device, current_stream=current_stream, set_stream=set_stream, stream=stream_scope,
        synchronize=synchronize, empty_cache=empty_cache, graph_pool_handle=graph_pool_handle,
        get_stream_limit=get_stream_limit, set_stream_limit=set_stream_limit, fake_record_stream=fake_record_stream,
    )
    native = _namespace(
        f"{MODULE_NAME}._C", _npu_getCheckpointState=_npu_get_checkpoint_state,
        _npu_setCheckpointPoolState=_npu_set_checkpoint_pool_state,
        _construct_storage_from_data_pointer=_construct_storage_from_data_pointer,
        _construct_NPU_Tensor_From_Storage_And_Metadata=_construct_tensor_from_storage_and_metadata,
    )
    module = _namespace(MODULE_NAME, npu=npu, _C=native, get_npu_format=get_npu_format)
    module.__airfuse_offline__ = True
    return module


_MODULE = _build()
_installs = [0]


def torch_npu_importable() -> bool:
    installed_here = sys.modules.get(MODULE_NAME) is _MODULE
    return not installed_here and (MODULE_NAME in sys.modules or importlib.util.find_spec(MODULE_NAME) is not None)


_ABSENT = object()
_replaced = {}


@contextlib.contextmanager
def installed():
    """``torch_npu`` (the stand-in), ``torch.npu`` and ``Tensor.is_npu`` (true for CPU tensors,
    the stand-in's memory) for the duration of the block; nested blocks share one install. A
    ``torch.npu`` or ``Tensor.is_npu`` already there (a PrivateUse1 device renamed "npu", as the
    emulated NPU of airfuse's tests is) is put back afterwards."""
    if _installs[0] == 0:
        if torch_npu_importable():
            raise RuntimeError("airfuse: torch_npu is installed here; its npugraph_ex mode runs natively and the "
                               "offline stand-in must not replace it")
        _replaced["npu"] = torch.__dict__.get("npu", _ABSENT)
        _replaced["is_npu"] = torch.Tensor.__dict__.get("is_npu", _ABSENT)
        sys.modules[MODULE_NAME] = _MODULE
        torch.npu = _MODULE.npu
        torch.Tensor.is_npu = property(lambda tensor: tensor.device.type == _DEVICE.type)
    _installs[0] += 1
    try:
        yield _MODULE
    finally:
        _installs[0] -= 1
        if _installs[0] == 0:
            del sys.modules[MODULE_NAME]
            for owner, name in ((torch.Tensor, "is_npu"), (torch, "npu")):
                if _replaced[name] is _ABSENT:
                    delattr(owner, name)
                else:
                    setattr(owner, name, _replaced[name])
