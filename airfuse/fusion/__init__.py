"""Automatic fusion: find the composites airfuse ops replace in a Dynamo graph, before TorchAir.

``fuse_graph`` retraces Dynamo's graph to aten (``retrace``), replaces the RMSNorm composites
(Hugging Face's, Gemma's ``1 + weight``, ``F.rms_norm``), Hugging Face's rotate-half RoPE, SiLU
products (``swiglu`` when both factors are halves of one tensor, else ``silu_mul``) and tanh GELU
(written out or ``F.gelu(approximate="tanh")``) by airfuse ops (``patterns``), drops the empty
operands of concatenations (a full-width partial RoPE, ``concat``), then replaces a residual add
feeding a norm by ``add_rms_norm`` (``residual``). A model patched with ``airfuse.patch`` and an
unpatched one end up with the same airfuse ops.
"""

import functools
import warnings

import torch
from torch._inductor.pattern_matcher import PatternMatcherPass, register_replacement
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

from .. import compat
from . import patterns
from .concat import drop_empty_concat_operands
from .residual import fuse_residual_adds
from .retrace import input_fake_mode, retrace, specialize_norm_epsilons, trace_aten

SUBCLASS_GRAPH_WARNING = (
    "airfuse fusion (fuse=True) skips a graph with DTensor inputs (a tensor-parallel model): "
    "patch the model with airfuse.patch to run airfuse ops there"
)


def fuse_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The aten graph of Dynamo's ``gm`` with every composite airfuse fuses replaced."""
    with compat.tracing_fake_mode(input_fake_mode(gm)):
        aten_gm = retrace(gm)
        specialize_norm_epsilons(gm, aten_gm)
        return rewrite_composites(aten_gm)


def rewrite_composites(aten_gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """``aten_gm`` (an aten graph as ``retrace`` or ``torch.export`` makes it, no-op casts dropped)
    with every composite airfuse fuses replaced, in place."""
    for matcher in _matchers():
        matcher.apply(aten_gm)
    drop_empty_concat_operands(aten_gm)
    fuse_residual_adds(aten_gm)
    aten_gm.graph.eliminate_dead_code()
    aten_gm.recompile()
    return aten_gm


def fusing(backend):
    """``backend`` (a Dynamo backend) compiling ``fuse_graph``'s graph instead of Dynamo's.

    Not for graphs with tensor-subclass inputs (the DTensor parameters of a tensor-parallel
    model): ``retrace``'s ``make_fx(pre_dispatch=True)`` cannot trace DTensor code (torch 2.13
    fails in the vocab-parallel embedding with "Unable to cast NotImplemented to Tensor"). Those
    compile as Dynamo traced them, with a warning: ``airfuse.patch`` places the ops there."""

    def compile_fused(gm, example_inputs):
        if any(is_traceable_wrapper_subclass(t) for t in example_inputs):
            warnings.warn(SUBCLASS_GRAPH_WARNING, stacklevel=2)
            return backend(gm, example_inputs)
        return backend(fuse_graph(gm), example_inputs)

    return compile_fused


@functools.cache
def _matchers() -> tuple:
    return _matcher(patterns.PATTERNS, "airfuse_fusion"), _matcher(patterns.LATE_PATTERNS, "airfuse_fusion_late")


def _matcher(entries, name) -> PatternMatcherPass:
    matcher = PatternMatcherPass(pass_name=name)
    for name, search, replacement, inputs, check in entries:
        example_inputs = [torch.empty(shape, dtype=dtype) for shape, dtype in inputs]
        scalars = {}
        if "eps" in search.__code__.co_varnames[: search.__code__.co_argcount]:
            scalars = patterns.RMS_NORM_EPS
        trace_fn, arguments = compat.pattern_arguments(search, trace_aten)
        register_replacement(
            search,
            replacement,
            example_inputs,
            trace_fn,
            matcher,
            extra_check=_extra_check(check, arguments),
            scalar_workaround=scalars,
            **compat.replacement_options(name),
        )
    return matcher


def _extra_check(check, arguments):
    def accepts_match(match) -> bool:
        return patterns.accepts(check, *[_value(arg) for arg in arguments(match)])

    return accepts_match


def _value(arg):
    return arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg
