"""Run a GE graph (TorchAir's ``GraphDef``) on the CPU.

Nodes are evaluated in topological order: ``Data`` takes the run's input at its ``index`` attr,
``Const`` decodes its ``value`` tensor, ``NetOutput`` lists the results (data inputs, in order),
``Airfuse*`` nodes call airfuse's CPU kernels through the op definitions, and every other op type
runs its function in ``airfuse.offline.ge_ops.GE_OPS``. Control edges (``name:-1``) only order.

Building a ``GeExecutor`` (TorchAir's ``compile()``) resolves everything that does not depend on
the inputs' values into a plan: the order, each value's slot, decoded Consts and attrs, the
function of each node (for ops written with ``ge_ops.planned``, one that has already read its
attrs and Const inputs), and the dtype/shape each output is checked against. The plan is then
written out as one generated Python function (``_Program``), so a run only does the tensor work
and those checks, without an interpreter loop over the steps. Airfuse nodes call the op's
CPU kernel (its input checks, then the C++ kernel) without going through the dispatcher. Groups of
nodes that eager PyTorch runs as one call (a linear's Transpose/Reshape/MatMul/Reshape, chains of
views) are planned as one step, a fold (``ge_folds``), with the unfolded plan's results bit for bit
and its checks and errors; ``GeExecutor(graph, fold=False)`` plans node by node, and a run with
``observe`` runs the node-by-node plan so that it sees every node.

The executor is strict so a converter's mistake shows as an error, never as a wrong number: an
unknown op type is refused when the graph is built, an attribute an op does not read is refused
(an Airfuse node's when the graph is built; a GE op's when it runs, on every run since which attrs
a GE op function reads may depend on its inputs, unless its plan read them all at compile), and
each output's dtype (and known shape) is checked against the node's descriptor.
"""

import collections
import functools
import math

import torch

from airfuse import cpu_kernels
from airfuse.ge_dtypes import TORCH_DTYPE_OF_GE_NAME, ge_dtype_to_torch
from airfuse.opdef import DYNAMIC, IR_PREFIX
from airfuse.ops import OPS_BY_IR_TYPE

from . import ge_folds
from .ge_op_base import remember_const_ints
from .ge_ops import GE_OPS

_WHERE_TO_ADD = "add each to GE_OPS in airfuse/offline/ge_ops.py (with a test in tests/offline/test_ge_ops.py)"
_STRUCTURAL = ("Data", "Const", "NetOutput")
_UNFED = 0  # the value slot of an optional input left unfed: always None


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


_proto_dtypes = {}


def proto_dtype_to_torch(number: int, what: str) -> torch.dtype:
    """A tensor descriptor's dtype (the protobuf enum ``ge_ir_pb2.DataType``) as a torch dtype."""
    if not _proto_dtypes:
        # The enum's own lookups build lists on every call: read it once into a dict.
        from torchair._ge_concrete_graph import ge_ir_pb2

        _proto_dtypes.update((value, name) for name, value in ge_ir_pb2.DataType.items())
    name = _proto_dtypes.get(number, str(number))
    if name not in TORCH_DTYPE_OF_GE_NAME:
        raise GeExecutionError(f"{what} has descriptor dtype {name}, which the offline GE executor does not support")
    return TORCH_DTYPE_OF_GE_NAME[name]


_NOT_INTS = object()  # a list attr holding other than ints


def _decode_attr(attr):
    """(kind, value) of an AttrDef, as the readers return it: ``s`` decoded, ``list`` as ints."""
    kind = attr.WhichOneof("value")
    value = getattr(attr, kind) if kind is not None else None
    if kind == "s":
        try:
            value = value.decode()
        except UnicodeDecodeError:
            pass  # str() refuses it when read
    elif kind == "list":
        value = tuple(value.i) if not any(len(getattr(value, other)) for other in ("s", "f", "b")) else _NOT_INTS
    return kind, value


class Node:
    """One GE op as the op functions see it: typed, recorded access to its attributes, decoded
    once when the node is built (a run only looks them up)."""

    def __init__(self, op):
        self.op = op
        self.name = op.name
        self.type = op.type
        self.read = set()
        self.edges = [edge for edge in op.input if not edge.endswith(":-1")]
        self.after = [edge.rsplit(":", 1)[0] for edge in op.input if edge.endswith(":-1")]
        self.attrs = {name: _decode_attr(attr) for name, attr in op.attr.items()}
        # Attrs starting with "_" are TorchAir's bookkeeping (meta, fx names), not op semantics.
        self.semantic = frozenset(k for k in self.attrs if not k.startswith("_"))

    def describe(self) -> str:
        return f"GE node {self.name!r} (type {self.type})"

    def _value(self, name, kind):
        self.read.add(name)
        entry = self.attrs.get(name)
        if entry is None:
            raise GeExecutionError(f"{self.describe()}: attr {name} is missing")
        if entry[0] != kind:
            raise GeExecutionError(f"{self.describe()}: attr {name} is {entry[0]}, expected {kind}")
        return entry[1]

    def tensor(self, name):
        return self._value(name, "t")

    def int(self, name) -> int:
        return self._value(name, "i")

    def float(self, name) -> float:
        return self._value(name, "f")

    def bool(self, name) -> bool:
        return self._value(name, "b")

    def str(self, name) -> str:
        value = self._value(name, "s")
        if not isinstance(value, str):
            raise GeExecutionError(f"{self.describe()}: attr {name} is not UTF-8 text: {value!r}")
        return value

    def ints(self, name) -> list:
        values = self._value(name, "list")
        if values is _NOT_INTS:
            raise GeExecutionError(f"{self.describe()}: attr {name} must be a list of ints")
        return list(values)

    def expect(self, name, default):
        """Read an attr whose only implemented value is ``default``; refuse any other."""
        value = self._value(name, _KIND_OF_TYPE[type(default)])
        if value != default:
            raise GeExecutionError(
                f"{self.describe()}: attr {name}={value} is not implemented by the offline GE executor "
                f"(only {default}); implement it in airfuse/offline/ge_ops.py"
            )

    def unread_attrs(self) -> list:
        return sorted(self.semantic - self.read)

    def refuse_unread(self):
        unread = self.unread_attrs()
        if unread:
            raise GeExecutionError(
                f"{self.describe()}: attrs {unread} are not honoured by the offline GE executor; "
                "read (and implement) them in its function in airfuse/offline/ge_ops.py"
            )


_KIND_OF_TYPE = {bool: "b", int: "i", float: "f"}


def _airfuse_op(node, op_def):
    """An op function that runs ``torch.ops.airfuse.<name>``'s CPU kernel with the node's attrs,
    read (and checked against the IR) once, here."""
    readers = {"Float": Node.float, "Int": Node.int, "Bool": Node.bool, "Str": Node.str, "ListInt": Node.ints}
    attrs = tuple(readers[a.ge_type](node, a.name) for a in op_def.attrs)
    node.refuse_unread()
    # The executor runs below Autograd on CPU tensors, where torch.ops.airfuse.<name> dispatches
    # to this kernel: calling it directly saves the dispatch into Python.
    kernel = cpu_kernels.cpu_kernel(op_def)

    def run(node, *inputs):
        outputs = kernel(*inputs, *attrs)
        return tuple(outputs) if type(outputs) is list else outputs  # several outputs come as a list

    return run


def _op_function(node):
    """(function, whether a run must check the attrs it read), or None when the node's op type
    has no function (see _refuse_missing)."""
    if node.type in GE_OPS:
        return GE_OPS[node.type], bool(node.semantic)
    op_def = OPS_BY_IR_TYPE.get(node.type)
    if op_def is None:
        return None
    if any(p.kind == DYNAMIC for p in op_def.inputs):
        raise GeExecutionError(f"{node.describe()}: dynamic IR inputs of {op_def.ir_type} are not supported offline")
    names = [desc.name for desc in node.op.input_desc]
    expected = [p.name for p in op_def.inputs]
    if names != expected:
        raise GeExecutionError(f"{node.describe()}: inputs named {names}, but {op_def.ir_type}'s IR inputs are {expected}")
    return _airfuse_op(node, op_def), False


def _attr_checked_call(node, function):
    """``function`` bound to ``node``, refusing after each call any attr it did not read then."""
    read, semantic = node.read, node.semantic

    def call(*inputs):
        read.clear()
        out = function(node, *inputs)
        if not semantic <= read:
            node.refuse_unread()
        return out

    return call


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
    value = torch.empty(shape, dtype=dtype) if numel == 0 else torch.frombuffer(bytearray(tensor.data), dtype=dtype).reshape(shape)
    remember_const_ints(value)
    return value


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


def _output_check(node, index, desc):
    """(index, dtype, dims, exact) that output ``index`` is checked against, or None when its
    descriptor declares nothing. Only Data/Const descriptors and those TorchAir filled from the FX
    node's fake tensor (``_meta``) declare anything: before loading, TorchAir sets every other
    unknown dtype to DT_FLOAT. ``dtype`` None: undeclared; ``dims`` None: no shape or an unknown
    rank (-2); -1 in ``dims``: a size not known; ``exact``: every size known."""
    if node.type not in ("Data", "Const") and "_meta" not in desc.attr:
        return None
    dtype = None
    if desc.dtype != _undefined_dtype():
        dtype = proto_dtype_to_torch(desc.dtype, f"{node.describe()} output {index}")
    dims = tuple(desc.shape.dim) if desc.HasField("shape") else None
    if dims is not None and -2 in dims:
        dims = None
    if dtype is None and dims is None:
        return None
    return index, dtype, dims, dims is not None and all(d >= 0 for d in dims)


def _undefined_dtype():
    from torchair._ge_concrete_graph import ge_ir_pb2

    return ge_ir_pb2.DataType.Value("DT_UNDEFINED")


def _verify(node, tensor, check):
    """Compare a computed output with what its descriptor declares (see _output_check)."""
    index, dtype, dims, exact = check
    if dtype is not None and tensor.dtype != dtype:
        raise GeExecutionError(f"{node.describe()}: output {index} is {tensor.dtype}, the graph declares {dtype}")
    if dims is None or (tensor.shape == dims if exact else (
        len(dims) == tensor.dim() and all(d < 0 or d == s for d, s in zip(dims, tensor.shape, strict=True))
    )):
        return
    raise GeExecutionError(f"{node.describe()}: output {index} has shape {list(tensor.shape)}, the graph declares {list(dims)}")


class _Step:
    """One op node of the plan: what a run calls with its inputs, where those are and its outputs
    go among the value slots, its output checks, and the slots whose last reader it is (``dead``)."""

    __slots__ = ("node", "call", "slots", "first", "count", "checks", "dead", "planned")

    def __init__(self, node, call, slots, first, planned=False, checks=None):
        self.node, self.call, self.slots, self.first, self.count = node, call, slots, first, len(node.op.output_desc)
        self.planned = planned  # its call reads no attrs: planned at compile(), or an op without attrs
        if checks is None:
            checks = tuple(c for i, d in enumerate(node.op.output_desc) if (c := _output_check(node, i, d)))
        self.checks = checks

    def as_tuple(self):
        """The step as ``_Program`` reads it."""
        return self.node, self.call, tuple(self.slots), self.first, self.first + self.count, self.checks, tuple(self.dead)


def _call(node, function, check_attrs, consts):
    """What a run calls with the node's inputs. An op function with a ``plan`` attribute (see
    ge_ops.planned) is offered the inputs known at compile(), ``consts`` (each input's Const
    tensor, else None); the function it returns is used when planning raised nothing and read
    every attr of the node, so a run neither reads nor checks attrs. Otherwise (or when planning
    fails: a run then raises the same error, naming the node) the function runs whole on every
    run, with its attrs checked as read when the node has any. Returns (call, whether a run of it
    reads no attrs)."""
    plan = getattr(function, "plan", None)
    if plan is not None:
        if check_attrs:
            node.read.clear()
        try:
            call = plan(node, consts)
        except Exception:
            call = None
        if call is not None and (not check_attrs or node.semantic <= node.read):
            return call, True
    if check_attrs:
        return _attr_checked_call(node, function), False
    return functools.partial(function, node), True


class _Program:
    """Steps (as ``GeExecutor._ordered`` unpacks them) compiled into one generated Python function.

    A step costs the executor's loop more Python than many small ops' tensor work (building the
    argument list, the slice assignment of the outputs, loops over checks and dead slots), so the
    plan is written out as straight-line code instead: each value slot a local variable ``v<slot>``
    (a Const a global ``k<slot>``, an unfed optional input ``None``), each step a direct call of its
    function, its output count and checks inline comparisons against globals (``_verify`` decides
    and raises when one differs), each value ``del``-ed after its last reader (with ``drop``), and
    ``observe(node, inputs, outputs)`` after each step where asked. With ``datas`` (the graph's Data
    nodes) the function takes the run's inputs and checks each one (``GeExecutor._data`` decides
    when one differs); otherwise it takes the values of the slots ``params``. It returns the values
    of the slots ``results``: a list, or with ``single`` the one value (else a tuple).

    With ``datas`` the steps run below Autograd (a fold's program runs inside that one). An error
    other than a GeExecutionError is raised as one naming the node whose line of the generated
    code raised it."""

    def __init__(self, name, run_steps, const_of, results, *, params=(), datas=None, single=False, drop=True, observe=False):
        self.name = name
        self._nodes = {}  # line number -> the node whose step the line runs
        names = {"_verify": _verify, "_outputs": _outputs, "Tensor": torch.Tensor}
        lines = []

        def bind(prefix, value):
            name = f"{prefix}{len(names)}"
            names[name] = value
            return name

        def ref(slot):
            if slot == _UNFED:
                return "None"
            const = const_of(slot)
            if const is None:
                return f"v{slot}"
            names[f"k{slot}"] = const
            return f"k{slot}"

        def differs(var, check):
            """The condition under which ``var`` must go to _verify (see _output_check), or "" for none."""
            _, dtype, dims, exact = check
            if dims is not None and not exact:
                return "True"  # sizes to compare one by one: _verify does it
            conditions = [f"{var}.dtype is not {bind('d', dtype)}"] if dtype is not None else []
            if dims is not None:
                conditions.append(f"{var}.shape != {bind('s', dims)}")
            return " or ".join(conditions)

        arguments = ["inputs"] if datas is not None else [f"v{slot}" for slot in params]
        lines.append(f"def program({', '.join(arguments + (['observe'] if observe else []))}):")
        if datas is not None:
            names["_data"], names["_datas"] = GeExecutor._data, datas
            last = max((index for _, index, *_ in datas), default=-1)
            # Too few inputs: take them node by node, in order, so the first Data that fails is named.
            lines.append(f"    if len(inputs) <= {last}: [_data(n, inputs, i, scalar, x) for n, i, _, scalar, x in _datas]")
            for node, index, slot, scalar, check in datas:
                call = f"_data({bind('n', node)}, inputs, {index}, {scalar}, {bind('x', check)})"
                if index < 0 or scalar:
                    lines.append(f"    v{slot} = {call}")
                    continue
                lines.append(f"    v{slot} = inputs[{index}]")
                condition = differs(f"v{slot}", check) if check else None
                lines.append(f"    if not isinstance(v{slot}, Tensor){f' or {condition}' if condition else ''}: v{slot} = {call}")
            # A GE graph records no autograd (TorchAir runs forward and backward as separate graphs):
            # its ops dispatch below the Autograd keys, as GE's kernels know nothing of it.
            names["_below_autograd"] = torch._C._AutoDispatchBelowAutograd
            lines.append("    with _below_autograd():")
            indent = "        "
        else:
            indent = "    "
        for node, call, slots, first, end, checks, dead in run_steps:
            start = len(lines) + 1
            node_name = bind("n", node)
            args = ", ".join(ref(slot) for slot in slots)
            outputs = [f"v{slot}" for slot in range(first, end)]
            call = f"{bind('c', call)}({args})"
            # One output may come back alone or as a 1-tuple; several only as a tuple of that many.
            if len(outputs) == 1:
                lines.append(f"{indent}{outputs[0]} = {call}")
                lines.append(f"{indent}if type({outputs[0]}) is tuple: {outputs[0]} = _outputs({node_name}, {outputs[0]}, 1)")
            else:
                lines.append(f"{indent}o = {call}")
                lines.append(f"{indent}if type(o) is not tuple or len(o) != {len(outputs)}: o = _outputs({node_name}, o, {len(outputs)})")
                if outputs:
                    lines.append(f"{indent}{', '.join(outputs)} = o")
            for check in checks:
                var = outputs[check[0]]
                condition = differs(var, check)
                if condition:
                    lines.append(f"{indent}if {condition}: _verify({node_name}, {var}, {bind('x', check)})")
            if observe:
                lines.append(f"{indent}observe({node_name}, [{args}], ({''.join(name + ', ' for name in outputs)}))")
            local = [f"v{slot}" for slot in dead if const_of(slot) is None] if drop else []
            if local:
                lines.append(f"{indent}del {', '.join(local)}")
            self._nodes.update(dict.fromkeys(range(start, len(lines) + 1), node))
        values = ", ".join(ref(slot) for slot in results)
        lines.append(f"{indent}return {values if single else f'[{values}]' if datas is not None else f'({values},)'}")
        code = compile("\n".join(lines) + "\n", f"<GE graph {name!r} plan>", "exec")
        exec(code, names)  # noqa: S102 - the source is built above from the plan, nothing else
        self._function = names["program"]

    def __call__(self, *args):
        try:
            return self._function(*args)
        except GeExecutionError:
            raise
        except Exception as error:
            raise GeExecutionError(f"{self._failed(error)}: {error}") from error

    def _failed(self, error):
        """The node (described) whose generated line raised ``error``."""
        code, tb = self._function.__code__, error.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        node = self._nodes.get(tb.tb_lineno) if tb is not None else None
        return node.describe() if node is not None else f"GE graph {self.name!r}"


def _outputs(node, out, count):
    """A step's ``count`` outputs when ``out`` (what its function returned) holds that many, else an error."""
    outputs = out if type(out) is tuple else (out,)
    if len(outputs) != count:
        raise GeExecutionError(f"{node.describe()}: computed {len(outputs)} outputs, the node declares {count}")
    return outputs[0] if count == 1 else outputs


class GeExecutor:
    """A loaded GE graph, planned and ready to run. Building it refuses op types it cannot run."""

    def __init__(self, graph, fold=True):
        self.name = graph.name
        self.fold = fold
        self.nodes = _topological([Node(op) for op in graph.op])
        outputs = [node for node in self.nodes if node.type == "NetOutput"]
        if len(outputs) != 1:
            raise GeExecutionError(f"GE graph {self.name!r} has {len(outputs)} NetOutput nodes, expected 1")
        functions = {node.name: _op_function(node) for node in self.nodes if node.type not in _STRUCTURAL}
        missing = [node for node in self.nodes if node.name in functions and functions[node.name] is None]
        if missing:
            raise _refuse_missing(missing)
        self._plan(functions)

    def _plan(self, functions):
        """Give every node output one slot (a variable of the generated program; slot 0 is an
        unfed optional input, None) and turn each node into what a run does with it."""
        template, first_slot, output_count = [None], {}, {}
        self._datas, self._steps, self.consts = [], [], {}
        for node in self.nodes:
            if node.type == "NetOutput":
                self._result_slots = self._slots(node, first_slot, output_count)
                continue
            first = first_slot[node.name] = len(template)
            output_count[node.name] = 1 if node.type in ("Data", "Const") else len(node.op.output_desc)
            template.extend([None] * output_count[node.name])
            if node.type == "Const":
                self.consts[node.name] = template[first] = _decode_const(node)
            elif node.type == "Data":
                desc = node.op.output_desc[0]
                check = _output_check(node, 0, desc)
                self._datas.append((node, node.int("index"), first, len(desc.shape.dim) == 0, check))
            else:
                function, check_attrs = functions[node.name]
                slots = self._slots(node, first_slot, output_count)
                consts = [template[slot] if slot != _UNFED and template[slot] is not None else None for slot in slots]
                call, planned = _call(node, function, check_attrs, consts)
                self._steps.append(_Step(node, call, slots, first, planned))
        self._template = template
        self._unfolded_steps = self._ordered(self._steps)
        if self.fold:
            self._steps = self._folded(self._steps)
        self._run_steps = self._ordered(self._steps)
        self._program = _Program(self.name, self._run_steps, self._const_of, self._result_slots, datas=self._datas)
        self._observed = None  # the unfolded plan's program calling observe, made on first use (accounting)
        self._declared = {}  # see _declared_dtypes
        self._const_storages = {t.untyped_storage().data_ptr() for t in self.consts.values()}

    def _const_of(self, slot):
        """The Const tensor slot ``slot`` holds, else None."""
        return self._template[slot] if slot != _UNFED else None

    def _ordered(self, steps):
        """What a program is generated from for ``steps``: each step unpacked, with the slots it
        is the last reader of. Each intermediate value is dropped there, as eager code drops its temporaries: memory
        is reused while it is still in cache, and a run holds little at once."""
        last_reader = {}
        for position, step in enumerate(steps):
            for slot in range(step.first, step.first + step.count):
                last_reader[slot] = position  # an output nothing reads dies where it is made
            for slot in step.slots:
                last_reader[slot] = position
        for step in steps:
            step.dead = []
        kept = {_UNFED, *self._result_slots}
        for slot, position in last_reader.items():
            if slot not in kept:
                steps[position].dead.append(slot)
        return tuple(step.as_tuple() for step in steps)

    def _folded(self, steps):
        """``steps`` with each fold (see ge_folds) made one step, at its last member's place."""
        folds = ge_folds.find(steps, self._const_of, set(self._result_slots))
        replaced = {}
        for members in folds:
            replaced[members[-1]] = self._fold_step([steps[p] for p in members])
            replaced.update((p, None) for p in members[:-1])
        return [replaced.get(p, step) for p, step in enumerate(steps) if replaced.get(p, step) is not None]

    def _fold_step(self, members):
        """One step running ``members`` (see ge_folds.Fold): its inputs are the members' inputs that
        no member makes and that are not Consts; its outputs and checks are the last member's."""
        made = {slot for m in members for slot in range(m.first, m.first + m.count)}
        inputs = list(dict.fromkeys(s for m in members for s in m.slots if s != _UNFED and s not in made and self._const_of(s) is None))
        last = members[-1]
        # The members' own program, keeping every value it makes (it returns the last one's).
        steps = [m.as_tuple()[:-1] + ((),) for m in members]
        outputs = range(last.first, last.first + last.count)
        unfolded = _Program(self.name, steps, self._const_of, outputs, params=inputs, single=last.count == 1)
        fast = self._fast(members, inputs, self._const_of)
        return _Step(last.node, ge_folds.Fold(unfolded, fast), inputs, last.first, True, last.checks)

    @staticmethod
    def _fast(members, inputs, const_of):
        """The fold's fast function over ``inputs`` (see ge_folds)."""
        if not any(m.node.type in ge_folds.MATMUL_TYPES for m in members):
            return ge_folds.strided((m.call, [const_of(s) for s in m.slots[1:]]) for m in members)
        # A linear fold's members are [Transpose, head Reshape?, MatMul, tail Reshape?].
        reshapes = {position: ge_folds.const_ints(const_of(m.slots[1])) for position, m in enumerate(members) if m.node.type == "Reshape"}
        head = reshapes.get(1)
        tail = reshapes.get(len(members) - 1)
        fast = ge_folds.linear(ge_folds.linear_input_shape(head, tail))
        if len(inputs) == 1:  # x is the weight itself
            return lambda x: fast(x, x)
        return fast if inputs[0] == members[0].slots[0] else lambda x, weight: fast(weight, x)

    @staticmethod
    def _slots(node, first_slot, output_count):
        slots = []
        for edge in node.edges:
            if not edge:
                slots.append(_UNFED)
                continue
            source, index = edge.rsplit(":", 1)
            if int(index) >= output_count[source]:
                raise GeExecutionError(f"{node.describe()}: input {edge} names output {index}, {source} has {output_count[source]}")
            slots.append(first_slot[source] + int(index))
        return slots

    def run(self, inputs, assigned_outputs=(), output_dtypes=None, observe=None):
        """Evaluate the graph on ``inputs``; results are written into the non-None tensors of
        ``assigned_outputs`` (by output index) and those tensors returned in their place.
        ``observe(node, inputs, outputs)``, if given, sees every op node after it ran."""
        if observe is None:
            results = self._program(inputs)
        else:
            if self._observed is None:
                self._observed = _Program(
                    self.name, self._unfolded_steps, self._const_of, self._result_slots, datas=self._datas, observe=True
                )
            results = self._observed(inputs, observe)
        return self._finish(results, inputs, assigned_outputs, output_dtypes)

    @staticmethod
    def _data(node, inputs, index, scalar, check):
        if not 0 <= index < len(inputs):
            raise GeExecutionError(f"{node.describe()}: index {index}, but the graph was run with {len(inputs)} inputs")
        tensor = inputs[index]
        if not isinstance(tensor, torch.Tensor):
            raise GeExecutionError(f"{node.describe()}: input {index} is {type(tensor).__name__}, expected a tensor")
        if scalar and tensor.shape == (1,):
            tensor = tensor.reshape(())  # TorchAir passes a symbolic size as a 1-element host tensor
        # The common case in two comparisons, as for op outputs; _verify decides the others.
        if check and (tensor.dtype is not check[1] or (check[2] is not None and tensor.shape != check[2])):
            _verify(node, tensor, check)
        return tensor

    def _declared_dtypes(self, numbers):
        """TorchAir's output dtypes (GE numbering, the same list on every run) as torch dtypes,
        converted once per list."""
        dtypes = self._declared.get(numbers)
        if dtypes is None:
            dtypes = tuple(ge_dtype_to_torch(number, f"GE graph {self.name!r} output {i}") for i, number in enumerate(numbers))
            self._declared[numbers] = dtypes
        return dtypes

    def _finish(self, results, inputs, assigned_outputs, output_dtypes):
        if output_dtypes is not None:
            if len(output_dtypes) != len(results):
                raise GeExecutionError(f"GE graph {self.name!r}: {len(results)} outputs, but {len(output_dtypes)} output dtypes")
            for i, (tensor, dtype) in enumerate(zip(results, self._declared_dtypes(tuple(output_dtypes)), strict=True)):
                if tensor.dtype is not dtype:
                    raise GeExecutionError(f"GE graph {self.name!r}: output {i} is {tensor.dtype}, GE declares {dtype}")
        # Outputs own their memory, as GE's do: copy those that alias an input, a Const or each other.
        # (The Consts' storages are looked up in their own set, not copied into this one every run.)
        owned = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}
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
            elif (storage := tensor.untyped_storage().data_ptr()) in owned or storage in self._const_storages:
                tensor = tensor.clone()
            owned.add(tensor.untyped_storage().data_ptr())
            final.append(tensor)
        return final
