"""One training step of a tiny Hugging Face causal LM on every rank, measured against the same
step in one process.

``train_on_ranks(rank, world_size, runs)`` is what each rank runs (``ranks.run_ranks``): for each
run (plan, family, mode, variant) it builds the model from the same seed, spreads it with the plan
(``plans``), runs one step (labels -> loss -> backward) and returns the largest relative error of
the loss and of every parameter's gradient against the single-process eager run of the
unpatched model, plus what shows whether airfuse ops ran on the shards:

- eager: the airfuse calls DebugMode recorded on plain tensors (each rank's shard or batch slice),
  their elements against the single-process calls', and the redistributions DTensor made inside an
  airfuse op (there must be none);
- compiled: the GE graphs TorchAir built, their airfuse nodes and whether any of them reads an
  all-gathered tensor (through shape-only nodes; there must be none), and their collectives.

Variants: ``patched`` is ``airfuse.patch(model)`` (compiled with ``fuse=False``: the airfuse ops
the patch placed, no more); ``fused`` is the unpatched model compiled with ``fuse=True``, the
airfuse ops placed by the backend.
"""

import time
import warnings

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor
from torch.utils._debug_mode import _OpCall, _RedistributeCall

import airfuse
from airfuse import compat
from airfuse.offline import native_module
from airfuse.testing import tiny_causal_lm
from plans import gradients, parallelize, split_batch

BATCH, SEQ = 4, 12  # the sequence splits evenly over 2 and 4 ranks and equals no model dim
# GE node types that only move or relabel data: an all-gather seen through them is still a full replica.
SHAPE_ONLY = {"Identity", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "ConcatV2", "SplitV", "StridedSliceV2", "Cast"}


def _ids():
    return torch.randint(0, 128, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))


def _model(family):
    return tiny_causal_lm(family).train()


def _relative(got, want):
    return ((got.float() - want.float()).abs().max() / want.float().abs().max().clamp_min(1e-30)).item()


def _step(model, call, ids):
    loss = call(ids, labels=ids, use_cache=False).loss
    loss.backward()
    return loss.detach()


def _airfuse_calls(debug_mode):
    """(op name, elements of its first tensor) of each airfuse call on plain tensors, and the
    redistributions DTensor decided on for the inputs of airfuse calls on DTensors (its implicit
    ones; a parallel style's explicit redistribution between modules is none of them)."""
    calls, redistributions, inside = [], [], None
    for call in debug_mode.operators:
        if inside is not None and call.call_depth <= inside:
            inside = None
        if isinstance(call, _OpCall):
            if not str(call.op).startswith("airfuse."):
                continue
            first = call.args[0]
            if not isinstance(first, DTensor):  # a shard (or a collective's output, AsyncCollectiveTensor)
                calls.append((str(call.op), first.numel()))
            elif inside is None:
                inside = call.call_depth
        elif isinstance(call, _RedistributeCall) and compat.is_outer_redistribution(call) and inside is not None:
            redistributions.append(call.render([]))
    return sorted(calls), redistributions


def _eager_step(model, ids):
    with compat.debug_mode(store_original_args=True) as debug_mode:
        loss = _step(model, model, ids)
    return loss, *_airfuse_calls(debug_mode)


class _GeGraphs:
    """Records the GE graphs TorchAir loads (the offline stand-in's ``load``) while active."""

    def __enter__(self):
        self.graphs = []
        self._load = native_module.TorchNpuGraphBase.load

        def load(graph, *args, **kwargs):
            self._load(graph, *args, **kwargs)
            self.graphs.append(graph.graph)

        native_module.TorchNpuGraphBase.load = load
        return self

    def __exit__(self, *exc):
        native_module.TorchNpuGraphBase.load = self._load


def _ge_facts(graphs) -> dict:
    """Airfuse node types, collective types, and airfuse nodes reading an all-gathered tensor."""
    airfuse_nodes, collectives, gathered_inputs = {}, {}, []
    for graph in graphs:
        producer = {op.name: op for op in graph.op}
        for op in graph.op:
            if op.type.startswith("Hcom"):
                collectives[op.type] = collectives.get(op.type, 0) + 1
            if not op.type.startswith("Airfuse"):
                continue
            airfuse_nodes[op.type] = airfuse_nodes.get(op.type, 0) + 1
            pending = [name.split(":")[0] for name in op.input if not name.endswith(":-1")]
            while pending:
                source = producer[pending.pop()]
                if source.type == "HcomAllGather":
                    gathered_inputs.append(op.name)
                elif source.type in SHAPE_ONLY:
                    pending.extend(name.split(":")[0] for name in source.input if not name.endswith(":-1"))
    return {"airfuse_nodes": airfuse_nodes, "collectives": collectives, "gathered_inputs": gathered_inputs}


def _compiled_step(model, ids, fuse):
    with _GeGraphs() as recorded, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = torch.compile(model, backend=airfuse.get_npu_backend(fuse=fuse), dynamic=False)
        loss = _step(model, compiled, ids)
    torch._dynamo.reset()
    return loss, {**_ge_facts(recorded.graphs), "warnings": sorted({str(w.message) for w in caught})}


def _one_run(rank, world_size, run, reference):
    started = time.perf_counter()
    plan, family, mode, variant = run
    model = _model(family)
    if variant == "patched":
        airfuse.patch(model)
    model = parallelize(plan, model, world_size)
    ids = split_batch(plan, _ids(), rank, world_size)
    if mode == "eager":
        loss, calls, redistributions = _eager_step(model, ids)
        facts = {"calls": calls, "redistributions": redistributions, "reference_calls": reference["calls"]}
    else:
        loss, facts = _compiled_step(model, ids, fuse=variant == "fused")
    if plan != "tp":  # each rank's loss is its slice's mean; slices of equal token counts average to the whole's
        dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    grads = gradients(plan, model)
    errors = {"loss": _relative(loss, reference["loss"])}
    errors.update({name: _relative(grads[name], want) for name, want in reference["grads"].items()})
    assert grads.keys() == reference["grads"].keys()
    return {"run": run, "seconds": time.perf_counter() - started, "loss_error": errors["loss"], "grad_error": max(v for k, v in errors.items() if k != "loss"), **facts}


def _reference(family, world_size):
    """The single-process eager step of the unpatched model (loss and gradients), and the airfuse
    calls of the patched one, with the elements each would see on one of ``world_size`` shards."""
    model = _model(family)
    loss = _step(model, model, _ids())
    grads = {name: p.grad for name, p in model.named_parameters()}
    patched = airfuse.patch(_model(family))
    _, calls, _ = _eager_step(patched, _ids())
    return {"loss": loss, "grads": grads, "calls": [(name, numel // world_size) for name, numel in calls]}


def train_on_ranks(rank, world_size, runs):
    references = {family: _reference(family, world_size) for family in sorted({run[1] for run in runs})}
    return [_one_run(rank, world_size, run, references[run[1]]) for run in runs]
