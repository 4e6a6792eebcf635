"""Import TorchAir: natively on an NPU host, otherwise offline (``airfuse.offline``).

The stand-in native module is installed only when no NPU environment exists: if torch_npu or a
``torchair`` package is installed, TorchAir is imported untouched and its errors are the user's.
"""

import importlib
import importlib.util
import sys
import warnings
from pathlib import Path

import torch
from torch._decomp import get_decompositions

from . import aclgraph, compat, torchair_gaps
from .offline import cpu_sdpa, fetch, native_module
from .subclass_inputs import with_tensor_subclass_inputs

_state = {"torchair": None, "offline": False}


def native_torchair_available() -> bool:
    """torch_npu, or a TorchAir that is not airfuse's offline copy: a process that inherited this
    one's ``sys.path`` (a fork server, a spawned worker) finds the copy as ``torchair`` too, and
    it cannot load without the stand-in native module."""
    if importlib.util.find_spec("torch_npu") is not None:
        return True
    spec = importlib.util.find_spec("torchair")
    return spec is not None and not _in_offline_cache(spec.origin or "")


def _in_offline_cache(path: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(fetch.install_root()).resolve())


def is_offline() -> bool:
    """True once TorchAir was imported offline, with airfuse's stand-in native module."""
    return _state["offline"]


def import_torchair():
    """Return the ``torchair`` module, importing it (natively or offline) on first use, and
    register airfuse's converters with it."""
    if _state["torchair"] is None:
        if "torchair" in sys.modules or native_torchair_available():
            torchair = _import_native()
        else:
            torchair = _import_offline()
        from airfuse import converters

        converters.register_all()
        _state["torchair"] = torchair
    return _state["torchair"]


def _import_native():
    if importlib.util.find_spec("torch_npu") is not None:
        importlib.import_module("torch_npu")  # it sets up the ``torchair`` package it ships
    return importlib.import_module("torchair")


def _import_offline():
    if not fetch.is_fetched():
        raise RuntimeError(
            "airfuse: TorchAir is not installed (no NPU environment) and offline TorchAir is not in the "
            f"cache {fetch.install_root()}. Run `python -m airfuse.offline` once (or `make test`), "
            f"or set {fetch.CACHE_ENV} to a cache that has it."
        )
    # A damaged cache would otherwise fail later as an ImportError or a GE graph internal error.
    fetch.verify("python")
    sys.modules[native_module.MODULE_NAME] = native_module.build()
    sys.path.insert(0, str(fetch.torchair_root()))
    with warnings.catch_warnings():
        # TorchAir registers converters for torch_npu's own ops; without torch_npu each one warns
        # that it could not be imported. Those ops cannot occur here, so the warnings are noise.
        warnings.filterwarnings("ignore", message=r"(?s).*torch_npu|.*npu_", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"Failed to import torchair\._ge_concrete_graph\.ge_converter\.custom\.", category=UserWarning)
        torchair = importlib.import_module("torchair")
        # TorchAir imports these converters lazily, the first time an op has no aten converter,
        # where the warnings would bury the real error: import them now, under the filter.
        importlib.import_module("torchair._ge_concrete_graph.ge_converter.custom")
    _state["offline"] = True
    return torchair


def default_decompositions() -> dict:
    """The decompositions ``get_npu_backend`` applies unless the user gives their own for an op.

    - ``aten.silu_backward``: TorchAir 2.13 has no converter for it (training any SiLU model,
      Llama/Mistral/Qwen/..., fails without it), on an NPU host as offline.
    - ``aten.slice_backward`` with a negative start or end: TorchAir 2.13's converter takes them
      modulo the dim's size where aten adds the size and clamps to [0, size], so a slice starting
      before the dim's start (``x[:, -15:]`` of 7 positions, as Hugging Face's sliding-window cache
      keeps the last ``sliding_window - 1`` keys) gets a gradient 6 positions too long, which GE's
      next node refuses (Gemma2/3 training with a window longer than the sequence).
      ``_slice_backward_bounds_in_range`` passes them as aten means them (and the end of a
      stepped slice with a symbolic size, which the converter cannot cast); other slices are untouched.
    - ``aten.histc``, ``aten.true_divide``, ``aten._grouped_mm`` and transformers' own
      ``grouped_mm_fallback`` (and its backward), everywhere: ops of Hugging Face models (MoE expert
      routing, Phi) that TorchAir 2.13 cannot convert, written with ops it converts
      (``airfuse.torchair_gaps``, each naming TorchAir's error); and ``aten.index_put`` in the two
      forms models use: an integer index on the first dim (the MoE expert sort's inverse) and one
      boolean mask with one value (``t[mask] = 0``, DTensor's vocab-parallel embedding).
    - Offline only, ``aten._scaled_dot_product_flash_attention_for_cpu`` and its backward
      (``airfuse.offline.cpu_sdpa``): Dynamo traces ``F.scaled_dot_product_attention`` on CPU
      tensors to them, and TorchAir has no converters. On an NPU host torch_npu routes SDPA to its
      own kernels, so they never appear there; offline the graph has matmul/softmax nodes where
      the NPU graph has a fused attention node.
    """
    import_torchair()
    compat.trace_reduction_backward_from_the_gradient()
    table = get_decompositions([torch.ops.aten.silu_backward])
    table[torch.ops.aten.slice_backward.default] = _slice_backward_bounds_in_range
    table.update(torchair_gaps.decompositions())
    if is_offline():
        table.update(cpu_sdpa.decompositions())
    return table


def get_npu_backend(compiler_config=None, *, custom_decompositions=None, fuse=True):
    """TorchAir's NPU backend for ``torch.compile`` (offline TorchAir where there is no NPU).

    ``compiler_config`` goes to ``torchair.get_npu_backend`` unchanged; ``custom_decompositions``
    are added to ``default_decompositions()``, and win for an op both name. With ``fuse`` the
    composites airfuse ops replace (RMSNorm, residual add + RMSNorm, RoPE, SiLU products, tanh
    GELU; ``airfuse.fusion``) are replaced in the traced graph before TorchAir converts it;
    ``fuse=False`` leaves the graph as TorchAir builds it. Offline, a config in TorchAir's
    npugraph_ex / reduce-overhead mode runs TorchAir's aclgraph pipeline with a stand-in for
    torch_npu (``airfuse.aclgraph``).
    """
    torchair = import_torchair()
    decompositions = {**default_decompositions(), **(custom_decompositions or {})}
    if is_offline() and aclgraph.is_aclgraph_mode(compiler_config):
        backend = aclgraph.offline_backend(torchair, compiler_config, decompositions)
    else:
        backend = with_tensor_subclass_inputs(
            torchair.get_npu_backend(compiler_config=compiler_config, custom_decompositions=decompositions)
        )
    if not fuse:
        return backend
    from .fusion import fusing

    return fusing(backend)


def _slice_backward_bounds_in_range(grad_output, input_sizes, dim, start, end, step):
    """``aten.slice_backward`` with the bounds TorchAir's converter gets wrong replaced by the index
    aten means, in [0, size]: a negative int start/end, and for a step other than 1 an end of
    ``sys.maxsize`` ("to the end", which the converter's int32 cast overflows when the size is
    symbolic). ``NotImplemented`` (trace the op as it is) when neither occurs. A symbolic size is
    compared, not clamped with ``sym_max`` (TorchAir cannot convert it): the comparison becomes a
    guard, as any shape-dependent branch does."""
    size = input_sizes[dim]

    def in_range(bound):
        if not isinstance(bound, int) or bound >= 0:
            return bound
        return bound + size if bound + size > 0 else 0

    new_start, new_end = in_range(start), in_range(end)
    if step != 1 and end == sys.maxsize:
        new_end = size
    if new_start is start and new_end is end:
        return NotImplemented
    return torch.ops.aten.slice_backward(grad_output, input_sizes, dim, new_start, new_end, step)
