"""Fusion for ``torch.export``: the composites airfuse fuses replaced in an ExportedProgram.

``torch.export.export`` (non-strict) traces the model to the same pre-dispatch aten graph that
``retrace`` makes of Dynamo's graph, so the backend's rewrites apply unchanged. What differs is
what surrounds the graph: an ExportedProgram's signature names the graph's outputs, which a
rewrite may have replaced (a returned residual sum becomes ``add_rms_norm``'s third output).
Module floats such as a norm's epsilon are constants in an exported graph: nothing to specialize.
And an exported graph asserts the dtype of each cast's input (``aten._assert_tensor_metadata``):
those asserts read the norms' intermediates, which a pattern may only replace when nothing outside
it reads them. They restate what the traced dtypes already say, and ONNX has no node for them, so
they are dropped first.
"""

import torch

from . import rewrite_composites
from .retrace import drop_noop_casts


def fuse_exported_program(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """``program`` with its composites replaced by airfuse ops, in place; returned for chaining."""
    gm = program.graph_module
    for node in gm.graph.find_nodes(op="call_function", target=torch.ops.aten._assert_tensor_metadata.default):
        gm.graph.erase_node(node)
    drop_noop_casts(gm)
    rewrite_composites(gm)
    [output] = gm.graph.find_nodes(op="output")
    returned = output.args[0]
    for spec, node in zip(program.graph_signature.output_specs, returned, strict=True):
        if isinstance(node, torch.fx.Node) and hasattr(spec.arg, "name"):
            spec.arg.name = node.name
    return program
