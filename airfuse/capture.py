"""capture_ge_graph: compile a function with TorchAir and return the GE graphs it built.

The graphs are TorchAir's own: Dynamo traces ``fn``, TorchAir converts each FX graph into a GE
graph (our converters emit the airfuse nodes) and dumps it. Nothing is loaded or executed as a
GE graph: TorchAir's ``debug.run_eagerly`` makes the compiled function run its FX graph eagerly,
so capture works the same on an NPU host and offline, and a backward graph can be built too.
"""

import collections
import copy
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from google.protobuf import text_format

from . import compat, ge_accounting, ge_dot
from .torchair_env import get_npu_backend, import_torchair


@dataclass(frozen=True)
class GeNode:
    """One GE node: ``inputs`` are the producers' node names (data edges, in input order);
    ``output_shapes`` are the output descs' dims as TorchAir set them (-1 for a symbolic dim,
    empty where GE infers the shape)."""

    name: str
    type: str
    inputs: tuple
    attrs: dict = field(hash=False)
    output_names: tuple
    output_dtypes: tuple
    output_shapes: tuple


class GeCapture:
    """The GE graphs TorchAir built for one function, in the order it built them."""

    def __init__(self, graphs, graph_breaks: int, outputs):
        self.graphs = list(graphs)
        self.graph_breaks = graph_breaks
        self.outputs = outputs

    def op_types(self) -> collections.Counter:
        return collections.Counter(op.type for graph in self.graphs for op in graph.op)

    def nodes(self, op_type: str) -> list:
        return [_to_node(op) for graph in self.graphs for op in graph.op if op.type == op_type]

    def node_counts(self) -> collections.Counter:
        """Nodes by kind: data, const, output (graph structure), matmul (matmuls and attention),
        airfuse (airfuse's fused ops) and other (the remaining compute nodes)."""
        return ge_accounting.node_counts(self.graphs)

    def hbm_traffic(self) -> ge_accounting.HbmTraffic:
        """Modeled HBM bytes if every GE op node read its inputs from and wrote its outputs to HBM,
        per op type, with matmul/attention nodes apart (see ``airfuse.ge_accounting``). Needs a
        static capture."""
        return ge_accounting.hbm_traffic(self.graphs, "GeCapture.hbm_traffic")

    def to_dot(self, consts=False) -> str:
        """The graphs as Graphviz DOT text (see ``airfuse.ge_dot.to_dot``)."""
        return ge_dot.to_dot(self.graphs, consts=consts)

    def render(self, path, formats=("svg",), consts=False) -> list:
        """Write the DOT text to ``path`` (suffix .dot) and, where Graphviz is installed, each of
        ``formats`` (svg, png, ...) beside it; returns the paths written."""
        return ge_dot.render(self.to_dot(consts=consts), path, formats)

    def to_pbtxt(self) -> str:
        return "\n".join(f"# GE graph {graph.name}\n{text_format.MessageToString(graph)}" for graph in self.graphs)

    def summary(self, node_types=lambda op_type: op_type.startswith("Airfuse")) -> dict:
        """A stable digest for golden files: op-type counts, and a signature for each node whose
        type ``node_types`` selects (producer types instead of generated node names)."""
        signatures = []
        for graph in self.graphs:
            types_by_name = {op.name: op.type for op in graph.op}
            for op in graph.op:
                if node_types(op.type):
                    node = _to_node(op)
                    signatures.append(
                        {
                            "type": node.type,
                            "inputs": [types_by_name.get(name, name) for name in node.inputs],
                            "attrs": {k: v for k, v in sorted(node.attrs.items()) if not k.startswith("_")},
                            "outputs": list(node.output_names),
                            "output_dtypes": list(node.output_dtypes),
                        }
                    )
        return {
            "graphs": len(self.graphs),
            "graph_breaks": self.graph_breaks,
            "op_types": dict(sorted(self.op_types().items())),
            "nodes": signatures,
        }


def capture_ge_graph(
    fn, *example_inputs, dynamic=False, compiler_config=None, custom_decompositions=None, fuse=True
) -> GeCapture:
    """Compile ``fn`` with airfuse's ``get_npu_backend(compiler_config, custom_decompositions=..., fuse=...)``,
    call it once on ``example_inputs`` and return every GE graph built. If outputs require grad, ones
    are back-propagated to the example inputs and, when ``fn`` is an ``nn.Module``, its parameters,
    so the backward GE graph is built too; their ``.grad`` is left untouched.

    ``compiler_config`` is copied, not changed (capture turns on its graph dump and
    ``debug.run_eagerly``). The example inputs are not changed either: ``fn`` runs on detached
    copies, as Dynamo records what it learnt about a tensor's dims on the tensor itself (a tensor
    seen by a dynamic compile would make a later static capture dynamic)."""
    torchair = import_torchair()
    with tempfile.TemporaryDirectory(prefix="airfuse-capture-") as dump_dir:
        config = copy.deepcopy(compiler_config) if compiler_config is not None else torchair.CompilerConfig()
        config.debug.run_eagerly = True
        config.debug.graph_dump.type = "txt"
        config.debug.graph_dump.path = dump_dir
        backend = get_npu_backend(config, custom_decompositions=custom_decompositions, fuse=fuse)
        inputs = torch.utils._pytree.tree_map_only(torch.Tensor, _fresh_copy, example_inputs)

        torch._dynamo.reset()  # a cached compilation would build no graph
        torch._dynamo.utils.counters.clear()
        with warnings.catch_warnings():
            # run_eagerly hands AOTAutograd the FX graph itself, which takes unboxed arguments.
            warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd is returning a function")
            outputs = torch.compile(compat.compile_target(fn), backend=backend, dynamic=dynamic)(*inputs)
            graph_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
            _build_backward(outputs, inputs, fn)
        graphs = [_read_dump(path) for path in sorted(Path(dump_dir).glob("*.txt"), key=_dump_order)]
    torch._dynamo.reset()
    return GeCapture(graphs, graph_breaks, outputs)


def _fresh_copy(tensor):
    """The same values in a new tensor object (no Dynamo marks), a leaf requiring grad as the original."""
    return tensor.detach().requires_grad_(tensor.requires_grad)


def _requiring_grad(tree):
    return [t for t in torch.utils._pytree.tree_leaves(tree) if isinstance(t, torch.Tensor) and t.requires_grad]


def _build_backward(outputs, example_inputs, fn):
    flat = _requiring_grad(outputs)
    parameters = list(fn.parameters()) if isinstance(fn, torch.nn.Module) else []
    leaves = _requiring_grad(example_inputs) + _requiring_grad(parameters)
    if flat and leaves:
        torch.autograd.grad(flat, leaves, grad_outputs=[torch.ones_like(t) for t in flat], allow_unused=True)


def _dump_order(path: Path):
    # TorchAir names dumps <name>_rank_<r>_pid_<p>_ts_<UTC timestamp, microseconds>.txt
    return path.stem.rsplit("_ts_", 1)[-1]


def _read_dump(path: Path):
    from torchair._ge_concrete_graph import ge_ir_pb2

    return text_format.Parse(path.read_text(), ge_ir_pb2.GraphDef())


def _to_node(op) -> GeNode:
    data_inputs = [edge for edge in op.input if edge and not edge.endswith(":-1")]
    return GeNode(
        name=op.name,
        type=op.type,
        inputs=tuple(edge.rsplit(":", 1)[0] for edge in data_inputs),
        attrs={name: _decode_attr(value) for name, value in op.attr.items()},
        output_names=tuple(desc.name for desc in op.output_desc),
        output_dtypes=tuple(_proto_dtype_name(desc.dtype) for desc in op.output_desc),
        output_shapes=tuple(tuple(desc.shape.dim) for desc in op.output_desc),
    )


def _proto_dtype_name(dtype: int) -> str:
    from torchair._ge_concrete_graph import ge_ir_pb2

    return ge_ir_pb2.DataType.Name(dtype)


def _decode_attr(attr):
    """A GE AttrDef as a Python value: str, int, float, bool, or a list of them."""
    kind = attr.WhichOneof("value")
    if kind == "s":
        return attr.s.decode(errors="replace")
    if kind in ("i", "f", "b", "type"):
        return getattr(attr, kind)
    if kind == "list":
        for list_kind in ("s", "i", "f", "b", "type"):
            values = list(getattr(attr.list, list_kind))
            if values:
                return [v.decode(errors="replace") if isinstance(v, bytes) else v for v in values]
        return []
    if kind == "t":
        return f"<tensor {_proto_dtype_name(attr.t.desc.dtype)} {list(attr.t.desc.shape.dim)}>"
    return f"<{kind}>"
