"""A residual add feeding an airfuse RMSNorm -> ``airfuse.add_rms_norm``, which also returns the
sum for the next residual. Written by hand rather than as a matcher pattern: the sum usually has
other users (the next residual add), which a replacement pattern does not allow."""

import operator

import torch

from ..ops.add_rms_norm import check_add_rms_norm
from .patterns import accepts

aten = torch.ops.aten
airfuse = torch.ops.airfuse


def fuse_residual_adds(gm: torch.fx.GraphModule) -> int:
    graph = gm.graph
    order = {node: index for index, node in enumerate(graph.nodes)}
    fused = 0
    for norm in list(graph.find_nodes(op="call_function", target=airfuse.rms_norm.default)):
        # make_fx leaves out an argument equal to its default: read them through the schema.
        total, gamma, epsilon = norm.normalized_arguments(gm, normalize_to_only_use_kwargs=True).kwargs.values()
        if not _is_plain_add(total) or not _getitems_only(norm):
            continue
        x1, x2 = total.args
        if not accepts(check_add_rms_norm, x1.meta["val"], x2.meta["val"], gamma.meta["val"], epsilon):
            continue
        # The fused node takes the norm's place: every other reader of the sum must come later.
        if any(order[user] < order[norm] for user in total.users if user is not norm):
            continue
        with graph.inserting_before(norm):
            fused_node = graph.call_function(airfuse.add_rms_norm.default, (x1, x2, gamma, epsilon))
            fused_node.meta["val"] = (*norm.meta["val"], total.meta["val"])
            total_out = graph.call_function(operator.getitem, (fused_node, 2))
            total_out.meta["val"] = total.meta["val"]
        for getitem in list(norm.users):
            getitem.args = (fused_node, getitem.args[1])
        total.replace_all_uses_with(total_out, delete_user_cb=lambda user: user is not norm)
        graph.erase_node(norm)
        graph.erase_node(total)
        fused += 1
    if fused:
        graph.lint()
        gm.recompile()
    return fused


def _is_plain_add(node) -> bool:
    """``a + b`` of two tensors: no alpha, no scalar operand (add_rms_norm adds same-shape tensors)."""
    return (
        isinstance(node, torch.fx.Node)
        and node.target == aten.add.Tensor
        and not node.kwargs
        and all(isinstance(arg, torch.fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor) for arg in node.args)
    )


def _getitems_only(node) -> bool:
    return all(user.target is operator.getitem for user in node.users)
