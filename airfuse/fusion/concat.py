"""Concatenations with empty operands, as a model writes a partial rotary embedding at full width.

Phi-3's ``apply_rotary_pos_emb`` rotates ``q[..., :rotary_dim]`` and concatenates the untouched
``q[..., rotary_dim:]``: with the rotary dim equal to the head dim that is an empty tensor, and the
concatenation is a copy of the rotated tensor (a GE ConcatV2 reading and writing all of it), which
``airfuse.patch``'s forward skips. Dropping the empty operands gives the fused graph the same nodes.
"""

import functools

import torch

aten = torch.ops.aten


def drop_empty_concat_operands(gm: torch.fx.GraphModule) -> int:
    """Remove the operands of ``aten.cat`` that are empty along the concatenated dim, unless the
    result's dtype came from one of them (cat promotes over all operands); a concatenation left with
    one operand becomes that operand when nothing else reads it and an op made it afresh, no view or
    input (so no alias can be seen, nor a later in-place op reach another tensor).
    Returns how many concatenations were changed."""
    changed = 0
    for cat in list(gm.graph.find_nodes(op="call_function", target=aten.cat.default)):
        tensors, dim = cat.args[0], cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0)
        result = cat.meta["val"]
        kept = [t for t in tensors if not _empty_along(t.meta["val"], dim, result.dim())]
        # A concatenation the graph returns stays: Hugging Face's KV cache starts empty, and its
        # update returned as the operand itself would alias a tensor the graph also computes with.
        if len(kept) == len(tensors) or not kept or any(user.op == "output" for user in cat.users):
            continue
        if functools.reduce(torch.promote_types, (t.meta["val"].dtype for t in kept)) != result.dtype:
            continue
        if len(kept) == 1 and len(kept[0].users) == 1 and _is_fresh(kept[0]):
            cat.replace_all_uses_with(kept[0])
            gm.graph.erase_node(cat)
        else:
            cat.args = (kept, *cat.args[1:])
        changed += 1
    if changed:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return changed


def _empty_along(value, dim, rank) -> bool:
    # torch.cat also skips 1-D tensors of shape [0] whatever the others' rank.
    return tuple(value.shape) == (0,) or (value.dim() == rank and value.shape[dim] == 0)


def _is_fresh(node) -> bool:
    """The node's tensor is new memory: an op whose schema returns no alias of its inputs (make_fx's
    fake values do not say whether they are views)."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    return schema is not None and len(schema.returns) == 1 and schema.returns[0].alias_info is None
