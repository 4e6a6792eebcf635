"""Run a GE graph (TorchAir's ``GraphDef``) on the CPU.

Nodes are evaluated in topological order: ``Data`` takes the run's input at its ``index`` attr,
``Const`` decodes its ``value`` tensor, ``NetOutput`` lists the results (data inputs, in order),
``Airfuse*`` nodes call airfuse's CPU kernels through the op definitions, and every other op type
runs its function in ``airfuse.offline.ge_ops.GE_OPS``. Control edges (``name:-1``) only order.

The executor is strict so a converter's mistake shows as an error, never as a wrong number: an
unknown op type is refused when the graph is built, an attribute an op does not read is refused
when it runs, and each output's dtype (and known shape) is checked against the node's descriptor.
"""

import collections
import math

import torch

from airfuse.ge_dtypes import TORCH_DTYPE_OF_GE_NAME, ge_dtype_to_torch
from airfuse.opdef import DYNAMIC, IR_PREFIX
from airfuse.ops import OPS_BY_IR_TYPE

from .ge_ops import GE_OPS

_WHERE_TO_ADD = "add each to GE_OPS in airfuse/offline/ge_ops.py (with a test in tests/offline/test_ge_ops.py)"
_STRUCTURAL = ("Data", "Const", "NetOutput")


class GeExecutionError(RuntimeError):
    """A GE graph that the offline executor cannot run, or an op that failed in it."""


class UnsupportedGeOpsError(GeExecutionError):
    """The op types of a graph the executor does not implement, all named in one message.

    TorchAir re-raises every error of load()/compile()/run() as ``type(e)(message + traceback +
    error code)`` from inside its handler; the traceback repeats the message. Rebuilt that way, this
    error keeps only its own message and hides the original it chains to, so users read it once."""

    def __init__(self, message):
        super().__init__(message.split("\nTraceback (most recent call last):", 1)[0])
        self.__suppress_context__ = True


def _proto():
    from torchair._ge_concrete_graph import ge_ir_pb2

    return ge_ir_pb2


def proto_dtype_to_torch(number: int, what: str) -> torch.dtype:
    """A tensor descriptor's dtype (the protobuf enum ``ge_ir_pb2.DataType``) as a torch dtype."""
    name = _proto().DataType.Name(number) if number in _proto().DataType.values() else str(number)
    if name not in TORCH_DTYPE_OF_GE_NAME:
        raise GeExecutionError(f"{what} has descriptor dtype {name}, which the offline GE executor does not support")
    return TORCH_DTYPE_OF_GE_NAME[name]


class Node:
    """One GE op as the op functions see it: typed, recorded access to its attributes."""

    def __init__(self, op):
        self.op = op
        self.name = op.name
        self.type = op.type
        self.read = set()
        self.edges = [edge for edge in op.input if not edge.endswith(":-1")]
        self.after = [edge.rsplit(":", 1)[0] for edge in op.input if edge.endswith(":-1")]

    def describe(self) -> str:
        return f"GE node {self.name!r} (type {self.type})"

    def _value(self, name, kind):
        self.read.add(name)
        if name not in self.op.attr:
            raise GeExecutionError(f"{self.describe()}: attr {name} is missing")
        attr = self.op.attr[name]
        if attr.WhichOneof("value") != kind:
            raise GeExecutionError(f"{self.describe()}: attr {name} is {attr.WhichOneof('value')}, expected {kind}")
        return getattr(attr, kind)

    def tensor(self, name):
        return self._value(name, "t")

    def int(self, name) -> int:
        return self._value(name, "i")

    def float(self, name) -> float:
        return self._value(name, "f")

    def bool(self, name) -> bool:
        return self._value(name, "b")

    def str(self, name) -> str:
        return self._value(name, "s").decode()

    def ints(self, name) -> list:
        values = self._value(name, "list")
        if any(len(getattr(values, other)) for other in ("s", "f", "b")):
            raise GeExecutionError(f"{self.describe()}: attr {name} must be a list of ints")
        return list(values.i)

    def expect(self, name, default):
        """Read an attr whose only implemented value is ``default``; refuse any other."""
        reader = {bool: self.bool, int: self.int, float: self.float}[type(default)]
        value = reader(name)
        if value != default:
            raise GeExecutionError(
                f"{self.describe()}: attr {name}={value} is not implemented by the offline GE executor "
                f"(only {default}); implement it in airfuse/offline/ge_ops.py"
            )

    def unread_attrs(self) -> list:
        # Attrs starting with "_" are TorchAir's bookkeeping (meta, fx names), not op semantics.
        return sorted(k for k in self.op.attr if not k.startswith("_") and k not in self.read)


def _airfuse_op(op_def):
    """An op function that runs ``torch.ops.airfuse.<name>`` with the IR's inputs and attrs."""
    readers = {"Float": Node.float, "Int": Node.int, "Bool": Node.bool, "Str": Node.str, "ListInt": Node.ints}

    def run(node, *inputs):
        attrs = [readers[a.ge_type](node, a.name) for a in op_def.attrs]
        outputs = getattr(torch.ops.airfuse, op_def.name)(*inputs, *attrs)
        return tuple(outputs) if isinstance(outputs, (tuple, list)) else outputs

    return run


def _op_function(node):
    """The function that runs ``node``, or None when its op type has none (see _refuse_missing)."""
    if node.type in GE_OPS:
        return GE_OPS[node.type]
    op_def = OPS_BY_IR_TYPE.get(node.type)
    if op_def is None:
        return None
    if any(p.kind == DYNAMIC for p in op_def.inputs):
        raise GeExecutionError(f"{node.describe()}: dynamic IR inputs of {op_def.ir_type} are not supported offline")
    names = [desc.name for desc in node.op.input_desc]
    expected = [p.name for p in op_def.inputs]
    if names != expected:
        raise GeExecutionError(f"{node.describe()}: inputs named {names}, but {op_def.ir_type}'s IR inputs are {expected}")
    return _airfuse_op(op_def)


def _origin(node) -> str:
    """The FX node (and its aten op) TorchAir converted into ``node``, where it recorded one: the
    ``_fx_tensor_name`` of an output, "<fx node>-<target>.OUTPUT.<i>"."""
    for desc in node.op.output_desc:
        if "_fx_tensor_name" in desc.attr:
            return desc.attr["_fx_tensor_name"].s.decode().rsplit(".OUTPUT", 1)[0]
    return ""


def _refuse_missing(nodes):
    """One error naming every op type the executor lacks, with the nodes (and their FX origin)
    that use it, so a user sees the whole gap at compile() instead of one op per attempt."""
    missing = collections.defaultdict(list)
    for node in nodes:
        missing[node.type].append(node)
    lines = []
    for op_type, users in sorted(missing.items()):
        hint = " (not an op airfuse defines)" if op_type.startswith(IR_PREFIX) else ""
        shown = ", ".join(f"{n.name!r}" + (f" from {_origin(n)}" if _origin(n) else "") for n in users[:3])
        more = f" and {len(users) - 3} more" if len(users) > 3 else ""
        lines.append(f"  {op_type}{hint}: {len(users)} node(s), e.g. {shown}{more}")
    return UnsupportedGeOpsError(
        f"airfuse's offline GE executor cannot run this graph: it does not implement {len(missing)} GE op "
        f"type(s) that TorchAir emitted:\n" + "\n".join(lines) + f"\nTo run it offline, {_WHERE_TO_ADD}."
    )


def _decode_const(node) -> torch.Tensor:
    tensor = node.tensor("value")
    dtype = proto_dtype_to_torch(tensor.desc.dtype, node.describe())
    shape = list(tensor.desc.shape.dim)
    numel = math.prod(shape)
    expected = numel * torch.empty((), dtype=dtype).element_size()
    if len(tensor.data) != expected:
        raise GeExecutionError(f"{node.describe()}: value holds {len(tensor.data)} bytes, shape {shape} needs {expected}")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(tensor.data), dtype=dtype).reshape(shape)


def _topological(nodes):
    """Kahn's order over data and control edges; ties keep the graph's op order."""
    by_name = {}
    for node in nodes:
        if node.name in by_name:
            raise GeExecutionError(f"GE graph has two nodes named {node.name!r}")
        by_name[node.name] = node
    waiting, consumers = {}, collections.defaultdict(list)
    for node in nodes:
        sources = {edge.rsplit(":", 1)[0] for edge in node.edges if edge} | set(node.after)
        for source in sources:
            if source not in by_name:
                raise GeExecutionError(f"{node.describe()}: input from unknown node {source!r}")
            consumers[source].append(node)
        waiting[node.name] = len(sources)
    ready = collections.deque(node for node in nodes if waiting[node.name] == 0)
    order = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for consumer in consumers[node.name]:
            waiting[consumer.name] -= 1
            if waiting[consumer.name] == 0:
                ready.append(consumer)
    if len(order) != len(nodes):
        stuck = [node.name for node in nodes if waiting[node.name] > 0]
        raise GeExecutionError(f"GE graph has a cycle through {stuck[:5]}")
    return order


class GeExecutor:
    """A loaded GE graph, ready to run. Building it refuses op types it cannot run."""

    def __init__(self, graph):
        self.name = graph.name
        self.nodes = _topological([Node(op) for op in graph.op])
        outputs = [node for node in self.nodes if node.type == "NetOutput"]
        if len(outputs) != 1:
            raise GeExecutionError(f"GE graph {self.name!r} has {len(outputs)} NetOutput nodes, expected 1")
        self.functions = {node.name: _op_function(node) for node in self.nodes if node.type not in _STRUCTURAL}
        missing = [node for node in self.nodes if node.name in self.functions and self.functions[node.name] is None]
        if missing:
            raise _refuse_missing(missing)
        self.consts = {node.name: _decode_const(node) for node in self.nodes if node.type == "Const"}

    def run(self, inputs, assigned_outputs=(), output_dtypes=None, observe=None):
        """Evaluate the graph on ``inputs``; results are written into the non-None tensors of
        ``assigned_outputs`` (by output index) and those tensors returned in their place.
        ``observe(node, inputs, outputs)``, if given, sees every op node after it ran."""
        values = {}
        for node in self.nodes:
            if node.type == "Data":
                values[node.name] = (self._data(node, inputs),)
            elif node.type == "Const":
                values[node.name] = (self.consts[node.name],)
            elif node.type == "NetOutput":
                results = [self._input(node, values, edge) for edge in node.edges]
            else:
                args = [self._input(node, values, edge) for edge in node.edges]
                values[node.name] = self._call(node, args)
                if observe is not None:
                    observe(node, args, values[node.name])
        return self._finish(results, inputs, assigned_outputs, output_dtypes)

    @staticmethod
    def _input(node, values, edge):
        if not edge:
            return None  # an optional input left unfed
        source, index = edge.rsplit(":", 1)
        outputs = values[source]
        if int(index) >= len(outputs):
            raise GeExecutionError(f"{node.describe()}: input {edge} names output {index}, {source} has {len(outputs)}")
        return outputs[int(index)]

    @staticmethod
    def _data(node, inputs):
        index = node.int("index")
        if not 0 <= index < len(inputs):
            raise GeExecutionError(f"{node.describe()}: index {index}, but the graph was run with {len(inputs)} inputs")
        tensor = inputs[index]
        if not isinstance(tensor, torch.Tensor):
            raise GeExecutionError(f"{node.describe()}: input {index} is {type(tensor).__name__}, expected a tensor")
        desc = node.op.output_desc[0]
        dims = list(desc.shape.dim)
        if dims == [] and tensor.shape == (1,):
            tensor = tensor.reshape(())  # TorchAir passes a symbolic size as a 1-element host tensor
        _check_output(node, 0, tensor, desc)
        return tensor

    def _call(self, node, args):
        node.read.clear()
        try:
            out = self.functions[node.name](node, *args)
        except GeExecutionError:
            raise
        except Exception as error:
            raise GeExecutionError(f"{node.describe()}: {error}") from error
        unread = node.unread_attrs()
        if unread:
            raise GeExecutionError(
                f"{node.describe()}: attrs {unread} are not honoured by the offline GE executor; "
                "read (and implement) them in its function in airfuse/offline/ge_ops.py"
            )
        outputs = out if isinstance(out, tuple) else (out,)
        if len(outputs) != len(node.op.output_desc):
            raise GeExecutionError(f"{node.describe()}: computed {len(outputs)} outputs, the node declares {len(node.op.output_desc)}")
        for i, (tensor, desc) in enumerate(zip(outputs, node.op.output_desc, strict=True)):
            _check_output(node, i, tensor, desc)
        return outputs

    def _finish(self, results, inputs, assigned_outputs, output_dtypes):
        if output_dtypes is not None:
            if len(output_dtypes) != len(results):
                raise GeExecutionError(f"GE graph {self.name!r}: {len(results)} outputs, but {len(output_dtypes)} output dtypes")
            for i, (tensor, number) in enumerate(zip(results, output_dtypes, strict=True)):
                dtype = ge_dtype_to_torch(number, f"GE graph {self.name!r} output {i}")
                if tensor.dtype != dtype:
                    raise GeExecutionError(f"GE graph {self.name!r}: output {i} is {tensor.dtype}, GE declares {dtype}")
        # Outputs own their memory, as GE's do: copy those that alias an input, a Const or each other.
        owned = {t.untyped_storage().data_ptr() for t in [*inputs, *self.consts.values()] if isinstance(t, torch.Tensor)}
        final = []
        for i, tensor in enumerate(results):
            target = assigned_outputs[i] if i < len(assigned_outputs) else None
            if target is not None:
                if target.shape != tensor.shape or target.dtype != tensor.dtype:
                    raise GeExecutionError(
                        f"GE graph {self.name!r}: output {i} is {tensor.dtype}{list(tensor.shape)}, its assigned "
                        f"tensor is {target.dtype}{list(target.shape)}"
                    )
                target.copy_(tensor)
                tensor = target
            elif tensor.untyped_storage().data_ptr() in owned:
                tensor = tensor.clone()
            owned.add(tensor.untyped_storage().data_ptr())
            final.append(tensor)
        return final


def _check_output(node, index, tensor, desc):
    """Compare a computed output with what the node's descriptor declares. Only Data/Const
    descriptors and those TorchAir filled from the FX node's fake tensor (``_meta``) declare
    anything: before loading, TorchAir sets every other unknown dtype to DT_FLOAT."""
    if node.type not in ("Data", "Const") and "_meta" not in desc.attr:
        return
    if desc.dtype != _proto().DataType.Value("DT_UNDEFINED"):
        dtype = proto_dtype_to_torch(desc.dtype, f"{node.describe()} output {index}")
        if tensor.dtype != dtype:
            raise GeExecutionError(f"{node.describe()}: output {index} is {tensor.dtype}, the graph declares {dtype}")
    if desc.HasField("shape"):
        dims = list(desc.shape.dim)
        if -2 not in dims and (
            len(dims) != tensor.dim() or any(d >= 0 and d != s for d, s in zip(dims, tensor.shape, strict=True))
        ):
            raise GeExecutionError(f"{node.describe()}: output {index} has shape {list(tensor.shape)}, the graph declares {dims}")

