"""Decompositions for aten (and transformers) ops that Hugging Face causal LMs trace to and TorchAir
2.13 cannot convert, on an NPU host as offline. Each is written with ops TorchAir converts, keeps
the op's exact semantics on every input it takes, and leaves the shapes static (no data-dependent
size), so a model stays one graph.

``decompositions()`` gives the table ``airfuse.default_decompositions`` adds.
"""

import math

import torch
from torch.utils._python_dispatch import _disable_current_modes

aten = torch.ops.aten


def histc(x, bins=100, min=0, max=0):
    """``aten.histc`` (TorchAir: "Failed to auto-generated converter for aten.histc.default"):
    transformers' MoE expert routing counts the tokens per expert with it
    (``integrations/moe.py``, ``grouped_mm_experts_forward``, and the load-balancing loss).

    As aten: ``bins`` equal bins over [min, max]; an element's bin is
    ``trunc((x - min) * bins / (max - min))`` in x's dtype, ``max`` itself in the last bin, values
    outside [min, max] and NaN not counted; with ``min == max`` the range is the data's (widened
    by 1 each way when that is one value). The counts are compared per bin (``[N, bins]``
    booleans, summed), where aten scatters; the bins are few (experts). Integer x (which the NPU
    and CUDA take, the CPU does not) bins in exact integer arithmetic."""
    torch._check(bins > 0, lambda: f"aten.histc: bins must be > 0, got {bins}")
    torch._check(min <= max, lambda: f"aten.histc: max must be larger than min, got min={min} max={max}")
    torch._check(x.dtype != torch.bool, lambda: "aten.histc: x must be a floating or integer tensor, got torch.bool")
    integer = not x.dtype.is_floating_point
    flat = x.reshape(-1)
    if min == max:
        torch._check(x.numel() > 0, lambda: "aten.histc: min == max takes the range from x, which is empty")
        low, high = flat.amin(), flat.amax()
        same = low == high
        low, high = torch.where(same, low - 1, low), torch.where(same, high + 1, high)
        width = high - low
    else:
        torch._check(math.isfinite(min) and math.isfinite(max), lambda: f"aten.histc: range of [{min}, {max}] is not finite")
        low, high, width = _range_in(x.dtype, min, max)
    inside = (flat >= low) & (flat <= high)
    if integer:
        position = torch.div((flat.long() - low) * bins, width, rounding_mode="floor")
    else:
        position = ((flat - low) * bins / width).to(torch.int64)
    position = position.clamp(0, bins - 1)
    hits = (position.unsqueeze(-1) == torch.arange(bins, device=x.device)) & inside.unsqueeze(-1)
    return hits.sum(0).to(x.dtype)


def _range_in(dtype, low, high):
    """``low``, ``high`` and ``high - low`` as aten's histc has them: rounded to x's dtype (its bin
    edges are a tensor of that dtype), the difference computed in it. Python numbers: the graph
    takes them as constants."""
    with _disable_current_modes():
        low_t, high_t = torch.tensor(low, dtype=dtype), torch.tensor(high, dtype=dtype)
        return low_t.item(), high_t.item(), (high_t - low_t).item()


def true_divide(x, other):
    """``aten.true_divide`` (TorchAir: "torch.ops.aten.true_divide.Tensor ge_converter is not
    implemented"; Phi-1/2 divide by the attention scale with ``torch.true_divide``): it is
    ``aten.div`` without a rounding mode, which TorchAir converts."""
    return aten.div(x, other)


def index_put(x, indices, values, accumulate=False):
    """``aten.index_put`` (TorchAir: "torch.ops.aten.index_put.default ge_converter is not
    implemented") in the two forms models use; other forms (several indexed dims, a mask with
    several values) are left to TorchAir (``NotImplemented``):

    - ``x[mask] = value``, one boolean mask over the leading dims and one value (DTensor's
      vocab-parallel embedding zeroes other ranks' ids and rows this way): ``where``;
    - ``x[index] = values``, one integer index tensor on the first dim (transformers'
      grouped-matmul MoE inverts its expert sort with ``inv_perm[perm] = arange``): a scatter (a
      scatter-add with ``accumulate``) along it, negative indices counted from the end as aten does.
    """
    if len(indices) != 1 or indices[0] is None or x.dim() == 0:
        return NotImplemented
    if indices[0].dtype == torch.bool:
        return _masked_fill_as_where(x, indices[0], values, accumulate)
    if indices[0].dtype not in (torch.int32, torch.int64):
        return NotImplemented
    index = indices[0].reshape(-1).to(torch.int64)
    index = torch.where(index < 0, index + x.shape[0], index)
    shape = (index.shape[0], *x.shape[1:])
    values = values.to(x.dtype).expand(*indices[0].shape, *x.shape[1:]).reshape(shape)
    index = index.view(-1, *([1] * (x.dim() - 1))).expand(shape)
    return x.scatter_add(0, index, values) if accumulate else x.scatter(0, index, values)


def _masked_fill_as_where(x, mask, values, accumulate):
    if accumulate or values.numel() != 1 or mask.dim() > x.dim() or tuple(mask.shape) != tuple(x.shape[: mask.dim()]):
        return NotImplemented
    mask = mask.reshape(*mask.shape, *([1] * (x.dim() - mask.dim())))
    return torch.where(mask, values.reshape(()).to(x.dtype), x)


def _positions(like, count):
    """``arange(count)`` (int64, on ``like``'s device), made from ``like``: these decompositions run in
    backward graphs too, which TorchAir's aclgraph converter compiles outside the fake mode, where an
    op that makes a tensor from nothing (``arange``, ``zeros``) gives a real tensor among FakeTensors
    and stops the compile (docs/npugraph_ex.md)."""
    return like.new_ones(count, dtype=torch.int64).cumsum(0) - 1


def _group_of_rows(offs, rows):
    """For a tensor whose ``rows`` are grouped by the cumulative ends ``offs`` (int, one per group):
    each row's group index, ``len(offs)`` for rows after the last end."""
    row = _positions(offs, rows)
    return (row.unsqueeze(-1) >= offs.to(torch.int64)).sum(-1)


def _grouped_rows_mm(x, weight, offs):
    """``x[rows of group e] @ weight[e]`` for each group: x ``[S, K]``, weight ``[E, K, N]``,
    rows after the last group zero. Every row against every expert (``[E, S, N]``, one batched
    matmul) then each row's own product picked: static shapes where grouping by slices needs
    the counts on the host."""
    experts, rows = weight.shape[0], x.shape[0]
    group = _group_of_rows(offs, rows)
    every = torch.matmul(x.unsqueeze(0), weight)
    index = group.clamp(max=experts - 1).view(1, rows, 1).expand(1, rows, weight.shape[2])
    own = every.gather(0, index).squeeze(0)
    return torch.where((group < experts).unsqueeze(-1), own, own.new_zeros(()))


def _grouped_inner_mm(a, b, offs):
    """``a[:, group e] @ b[group e, :]`` for each group of the shared dim: a ``[M, K]``, b ``[K, N]``
    -> ``[E, M, N]`` (the weight gradient of a grouped matmul); an empty group gives zeros."""
    experts = offs.shape[0]
    group = _group_of_rows(offs, a.shape[1])
    member = group == _positions(offs, experts).unsqueeze(-1)
    masked = torch.where(member.unsqueeze(1), a.unsqueeze(0), a.new_zeros(()))
    return torch.matmul(masked, b)


def grouped_mm(x, mat2, offs=None, bias=None, out_dtype=None):
    """``aten._grouped_mm`` (TorchAir has no converter; transformers' MoE experts call it through
    ``F.grouped_mm`` in bfloat16 under ``torch.compile``): the two forms with ``offs`` that MoE
    forward and backward use, 2-D x 3-D (rows grouped) and 2-D x 2-D (shared dim grouped). Other
    forms, a bias or another output dtype are left to TorchAir (``NotImplemented``)."""
    if offs is None or bias is not None or (out_dtype is not None and out_dtype != x.dtype) or x.dim() != 2:
        return NotImplemented
    if mat2.dim() == 3:
        return _grouped_rows_mm(x, mat2, offs)
    if mat2.dim() == 2:
        return _grouped_inner_mm(x, mat2, offs)
    return NotImplemented


def grouped_mm_fallback(x, weight, offs):
    """``transformers::grouped_mm_fallback`` (transformers' float32 MoE experts under
    ``torch.compile``; its CPU loop reads ``offs`` on the host, TorchAir has no converter)."""
    return _grouped_rows_mm(x, weight, offs)


def grouped_mm_fallback_backward(x, weight, offs, grad_output):
    """``transformers::grouped_mm_fallback_backward``: the input and weight gradients of
    ``grouped_mm_fallback``."""
    return _grouped_rows_mm(grad_output, weight.transpose(1, 2), offs), _grouped_inner_mm(x.t(), grad_output, offs)


def _transformers_ops():
    """transformers registers its grouped-matmul ops when its MoE code is imported."""
    namespace = torch.ops.transformers
    names = ("grouped_mm_fallback", "grouped_mm_fallback_backward")
    if not all(hasattr(namespace, name) for name in names):
        return {}
    return {
        namespace.grouped_mm_fallback.default: grouped_mm_fallback,
        namespace.grouped_mm_fallback_backward.default: grouped_mm_fallback_backward,
    }


def decompositions() -> dict:
    table = {
        aten.histc.default: histc,
        aten.true_divide.Tensor: true_divide,
        aten.true_divide.Scalar: true_divide,
        aten._grouped_mm.default: grouped_mm,
        aten.index_put.default: index_put,
    }
    table.update(_transformers_ops())
    return table
