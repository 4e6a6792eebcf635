"""``capture_aclgraph``: what TorchAir's npugraph_ex (aclgraph) mode captures of a function, FX graph
by FX graph, with the passes that ran and the kernels its NPUGraph recorded (offline, the stand-in
of aclgraph.py records them)."""

import collections
import contextlib
import copy
import warnings
from dataclasses import dataclass

import torch

from . import compat
from .aclgraph import _WrappedCompiler, _compilers_wrapped
from .capture import _build_backward, _fresh_copy
from .torchair_env import get_npu_backend, import_torchair


def _compile_phase():
    """The phase TorchAir is compiling: "forward" (inference graphs too) or "backward"."""
    from torchair._utils.graph_transform_observer import debug_ctx

    return getattr(debug_ctx, "phase", "default")


@dataclass(frozen=True)
class AclGraphCapture:
    """One FX graph as npugraph_ex captures it: ``phase`` ("forward" or "backward"), the graph after
    TorchAir's passes (``graph_module``), the passes in the order they ran, and, per capture (one per
    graph key: a static graph has one, a dynamic one one per shape seen), the kernels recorded."""

    phase: str
    graph_module: torch.fx.GraphModule
    passes: tuple
    captured_kernels: tuple

    def targets(self) -> list:
        return [node.target for node in self.graph_module.graph.nodes if node.op == "call_function"]

    def airfuse_ops(self) -> list:
        return [str(target) for target in self.targets() if str(target).startswith("airfuse.")]

    def mutating_ops(self) -> collections.Counter:
        """Ops that write one of their arguments. AOTAutograd hands TorchAir functional graphs, so
        these are TorchAir's re-inplacing and its copies into mutated graph inputs."""
        return collections.Counter(
            str(target) for target in self.targets() if isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable
        )


@dataclass(frozen=True)
class AclCapture:
    graphs: tuple
    graph_breaks: int
    outputs: object

    @property
    def forward(self) -> list:
        return [graph for graph in self.graphs if graph.phase == "forward"]

    @property
    def backward(self) -> list:
        return [graph for graph in self.graphs if graph.phase == "backward"]


def capture_aclgraph(fn, *example_inputs, dynamic=False, compiler_config=None, custom_decompositions=None, fuse=True,
                     mode="npugraph_ex") -> AclCapture:
    """Compile ``fn`` with airfuse's backend in TorchAir's aclgraph ``mode``, call it once on
    ``example_inputs`` (and, if outputs require grad, back-propagate ones to the inputs and
    parameters, as ``capture_ge_graph`` does) and return each FX graph after TorchAir's passes,
    forward and backward, with the passes that ran and the kernels captured. ``compiler_config`` is
    copied (its mode set to ``mode``); the example inputs are not changed."""
    torchair = import_torchair()
    config = copy.deepcopy(compiler_config) if compiler_config is not None else torchair.CompilerConfig()
    config.mode = mode
    compiled, passes = [], []

    def compile_watched(compiler, gm, example_inputs):
        graph = compiler(gm, example_inputs)
        compiled.append((_compile_phase(), tuple(passes), graph))
        passes.clear()
        return graph

    backend = get_npu_backend(config, custom_decompositions=custom_decompositions, fuse=fuse)
    inputs = torch.utils._pytree.tree_map_only(torch.Tensor, _fresh_copy, example_inputs)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    watched = _compilers_wrapped(lambda compiler: _WrappedCompiler(compiler, compile_watched))
    with watched, _passes_recorded(passes), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd is returning a function")
        outputs = torch.compile(compat.compile_target(fn), backend=backend, dynamic=dynamic)(*inputs)
        graph_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
        _build_backward(outputs, inputs, fn)
    torch._dynamo.reset()
    graphs = tuple(_capture_of(*entry) for entry in compiled)
    return AclCapture(graphs, graph_breaks, outputs)


@contextlib.contextmanager
def _passes_recorded(passes):
    """TorchAir's observer names each FX pass as it finishes (``graph_after_<pass>``) when its
    debug dumps are on; for the block, it is on and appends the names to ``passes`` instead of
    writing files."""
    from torchair._utils.graph_transform_observer import GraphTransformObserver

    init, dump_gm = GraphTransformObserver.__init__, GraphTransformObserver.dump_gm

    def observing_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._dump_enabled = True

    def record(self, gm, name):
        if name.startswith("graph_after_"):
            passes.append(name.removeprefix("graph_after_"))

    GraphTransformObserver.__init__, GraphTransformObserver.dump_gm = observing_init, record
    try:
        yield
    finally:
        GraphTransformObserver.__init__, GraphTransformObserver.dump_gm = init, dump_gm


def _capture_of(phase, passes, compiled):
    run_kernel = compiled.run_kernel  # the generated module's ``kernel``, set when the graph first ran
    acl_graph = run_kernel.__globals__["acl_graph"] if run_kernel is not None else None
    # Only the offline NPUGraph lists what it recorded; a real one does not.
    captures = [graph for graph in acl_graph.graph.values() if hasattr(graph, "calls")] if acl_graph is not None else []
    return AclGraphCapture(
        phase=phase,
        graph_module=compiled.runner.fx_graph,
        passes=passes,
        captured_kernels=tuple(tuple(str(call.func) for call in graph.calls) for graph in captures),
    )
