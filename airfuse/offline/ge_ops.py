"""GE operator semantics on the CPU: the op table of airfuse's offline GE executor.

``GE_OPS`` maps a GE op type to one function ``fn(node, *inputs)`` that returns the op's output
tensor (or a tuple, for several outputs). ``inputs`` are the node's data inputs in GE order, with
``None`` for an absent optional input. Attributes are read through ``node`` (an
``airfuse.offline.ge_executor.Node``): the executor refuses a node with an attribute the function
did not read, so an attribute that is not honoured can never be ignored silently. An attribute
whose non-default values are not implemented is read with ``node.expect(name, default)``.

Semantics follow GE's operator definitions (the IR prototypes TorchAir's ``ge_apis`` mirror), not
torch's: e.g. GE binary ops take one dtype for both inputs (TorchAir inserts the Casts), and
``dst_type``-like attrs use GE's DataType numbering. To add an op: one function here (shape,
layout, indexing and ordering ops in ``ge_ops_indexing.py``; the helpers all share in
``ge_op_base.py``), its entry in ``GE_OPS``, and its unit test in ``tests/offline/test_ge_ops.py``.

These functions run on every call of a compiled model, so they do only what depends on the
inputs: attrs are decoded once when the graph is compiled (``node.<type>(name)`` is a lookup),
``_ints`` of a Const index/shape input is read once (``remember_const_ints``), and ``_check``
takes its message as ``lambda: f"..."`` so the f-string is formatted only when the check fails (a
plain string works too). The ops most frequent in LLM graphs are written with ``planned``: their
attrs and Const inputs are read once, when the graph is compiled, and a run only calls the tensor
function they return.
"""

import math

import torch
import torch.nn.functional as F

from airfuse.ge_dtypes import ge_dtype_to_torch

from . import ge_ops_indexing as indexing
from .ge_collectives import COLLECTIVES
from .ge_op_base import (
    _HALF_DTYPES,
    _axes,
    _axis,
    _binary,
    _by_rank,
    _check,
    _float_compute,
    _float_unary,
    _int,
    _ints,
    _same_dtype,
    _unary,
    planned,
)


# --- elementwise -------------------------------------------------------------------------------

def real_div(node, x1, x2):
    # GE RealDiv is true division within one floating dtype; torch.div would promote integers.
    _same_dtype(x1=x1, x2=x2)
    _check(x1.dtype.is_floating_point, lambda: f"x1, x2 must be floating tensors, got {x1.dtype}")
    return x1 / x2


def pow_(node, x1, x2):
    _same_dtype(x1=x1, x2=x2)
    # A 0-d exponent (TorchAir's Const for x ** 2) as a Python number takes torch's scalar paths
    # (x * x for 2), as eager x.pow(2) does.
    return torch.pow(x1, x2.item() if x2.dim() == 0 else x2)


def muls(node, x):
    return x * torch.tensor(node.float("value"), dtype=x.dtype)


def sxpy(node, x1, x2, alpha):
    # y = x1 - alpha * x2 (TorchAir's rsub: other - alpha * self).
    _same_dtype(x1=x1, x2=x2)
    if alpha is None:
        return x1 - x2
    _same_dtype(x1=x1, alpha=alpha)
    return x1 - alpha * x2


def exp(node, x):
    # y = base ** (scale * x + shift); base -1 means e.
    base, scale, shift = node.float("base"), node.float("scale"), node.float("shift")
    _check(base == -1.0 or base > 0, lambda: f"attr base must be -1 (e) or > 0, got {base}")
    z = x * scale + shift if (scale, shift) != (1.0, 0.0) else x
    return torch.exp(z if base == -1.0 else z * math.log(base))


@planned()
def swish(node):
    scale = node.float("scale")
    return F.silu if scale == 1.0 else lambda x: x * torch.sigmoid(x * scale)


def gelu(node, x):
    # GE's Gelu is the tanh approximation, whatever aten.gelu's ``approximate`` was.
    return F.gelu(x, approximate="tanh")


def gelu_grad(node, dy, x, y):
    # Derivative of the tanh approximation; ``y`` is a placeholder (TorchAir feeds dy into it).
    _same_dtype(dy=dy, x=x)
    return torch.ops.aten.gelu_backward(dy, x, approximate="tanh")


def relu_grad(node, gradients, features):
    _same_dtype(gradients=gradients, features=features)
    return torch.where(features > 0, gradients, torch.zeros((), dtype=gradients.dtype))


def sigmoid_grad(node, y, dy):
    node.expect("complex_conj", False)
    _same_dtype(y=y, dy=dy)
    return dy * y * (1 - y)


def tanh_grad(node, y, dy):
    node.expect("complex_conj", False)
    _same_dtype(y=y, dy=dy)
    return dy * (1 - y * y)


def logical_not(node, x):
    _check(x.dtype == torch.bool, lambda: f"x must be bool, got {x.dtype}")
    return torch.logical_not(x)


def _logical(fn):
    def op(node, x1, x2):
        _check(x1.dtype == x2.dtype == torch.bool, lambda: f"x1, x2 must be bool, got {x1.dtype}, {x2.dtype}")
        return fn(x1, x2)

    return op


def floor_mod(node, x1, x2):
    # The remainder takes the divisor's sign (Python's %), as torch.remainder; not C's fmod.
    _same_dtype(x1=x1, x2=x2)
    return torch.remainder(x1, x2)


def floor_div(node, x1, x2):
    # Rounds the quotient toward -inf (Python's //), as torch.floor_divide; integers stay integers.
    _same_dtype(x1=x1, x2=x2)
    _check(x1.dtype.is_floating_point or bool((x2 != 0).all()), "integer division by zero")
    return torch.floor_divide(x1, x2)


def clip_by_value_v2(node, x, clip_value_min, clip_value_max):
    # min(max(x, clip_value_min), clip_value_max), the bounds broadcast against x.
    _same_dtype(x=x, clip_value_min=clip_value_min, clip_value_max=clip_value_max)
    out = torch.minimum(torch.maximum(x, clip_value_min), clip_value_max)
    _check(out.shape == x.shape, lambda: f"the bounds {list(clip_value_min.shape)}, {list(clip_value_max.shape)} must broadcast to x {list(x.shape)}")
    return out


def select_v2(node, condition, then, else_):
    _check(condition.dtype == torch.bool, lambda: f"condition must be bool, got {condition.dtype}")
    _same_dtype(then=then, else_=else_)
    return torch.where(condition, then, else_)


def masked_fill(node, x, mask, value):
    _check(mask.dtype == torch.bool, lambda: f"mask must be bool, got {mask.dtype}")
    _same_dtype(x=x, value=value)
    _check(value.numel() == 1, lambda: f"value must hold one element, got shape {list(value.shape)}")
    out = x.masked_fill(mask, value.reshape(()))
    _check(out.shape == x.shape, lambda: f"mask {list(mask.shape)} must broadcast to x {list(x.shape)}")
    return out


@planned()
def cast(node):
    dtype = ge_dtype_to_torch(node.int("dst_type"), "attr dst_type")
    # x.to(x's own dtype) returns x itself: LLaMA graphs hold many such Casts, skipped here.
    return lambda x: x if x.dtype is dtype else x.to(dtype)


def range_(node, start, limit, delta):
    # Scalars of possibly different dtypes (TorchAir feeds int32 Consts with an int64 size); the
    # output takes their common dtype, as aten.arange would, and TorchAir casts it afterwards.
    for name, t in (("start", start), ("limit", limit), ("delta", delta)):
        _check(t.numel() == 1, lambda: f"{name} must hold one value, got shape {list(t.shape)}")
    dtype = torch.promote_types(torch.promote_types(start.dtype, limit.dtype), delta.dtype)
    step = delta.item()
    _check(step != 0, "delta must not be 0")
    return torch.arange(start.item(), limit.item(), step, dtype=dtype)


def cumsum(node, x, axis):
    dim = _axis(_int(axis, "axis"), x.dim(), "axis")
    exclusive, reverse = node.bool("exclusive"), node.bool("reverse")
    y = x.flip(dim) if reverse else x
    y = _float_compute(lambda t: t.cumsum(dim, dtype=t.dtype), y)
    if exclusive:
        # Each position sums what precedes it: shift by one, the first becomes 0.
        y = torch.cat([torch.zeros_like(y.narrow(dim, 0, min(1, y.shape[dim]))), y.narrow(dim, 0, max(y.shape[dim] - 1, 0))], dim)
    return y.flip(dim) if reverse else y


def tril(node, x):
    _check(x.dim() >= 2, lambda: f"x must have rank >= 2, got {x.dim()}")
    return torch.tril(x, node.int("diagonal"))


# --- matrix products ---------------------------------------------------------------------------

def _matmul(x1, x2, bias, t1, t2, batched):
    if x1.dtype is not x2.dtype:
        _same_dtype(x1=x1, x2=x2)
    if batched:
        _check(x1.dim() >= 2 and x2.dim() >= 2, lambda: f"x1, x2 must have rank >= 2, got {x1.dim()}, {x2.dim()}")
    else:
        _check(x1.dim() == 2 and x2.dim() == 2, lambda: f"x1, x2 must be 2-D, got {x1.dim()}-D, {x2.dim()}-D")
    a = x1.transpose(-1, -2) if t1 else x1
    b = x2.transpose(-1, -2) if t2 else x2
    _check(a.shape[-1] == b.shape[-2], lambda: f"contracted dims differ: {list(a.shape)} @ {list(b.shape)}")
    y = torch.matmul(a, b)
    if bias is not None:
        _same_dtype(x1=x1, bias=bias)
        y = y + bias
    return y


@planned()
def mat_mul(node):
    t1, t2 = node.bool("transpose_x1"), node.bool("transpose_x2")
    return lambda x1, x2, bias: _matmul(x1, x2, bias, t1, t2, batched=False)


@planned()
def mat_mul_v2(node):
    node.expect("offset_x", 0)
    t1, t2 = node.bool("transpose_x1"), node.bool("transpose_x2")

    def run(x1, x2, bias, offset_w):
        _check(offset_w is None, "offset_w (quantized weights) is not implemented by the offline executor")
        return _matmul(x1, x2, bias, t1, t2, batched=False)

    return run


@planned()
def batch_mat_mul(node):
    adj1, adj2 = node.bool("adj_x1"), node.bool("adj_x2")
    return lambda x1, x2: _matmul(x1, x2, None, adj1, adj2, batched=True)


# --- reductions and softmax --------------------------------------------------------------------

def _reduce(x, axes, keep_dims, noop_with_empty_axes, fn):
    dims = _axes(axes, x.dim(), "axes")
    if not dims and x.dim() > 0:
        # Empty axes reduce nothing when noop_with_empty_axes, everything otherwise (ReduceMean's
        # attr; ReduceSum has none here, and TorchAir always lists the axes, so it is refused).
        _check(noop_with_empty_axes is not None, "empty axes on a tensor of rank > 0 are not implemented for this op")
        if noop_with_empty_axes:
            return x
        dims = list(range(x.dim()))
    return fn(x, dims, keep_dims) if dims else x


def _sum(t, dims, keep_dims):
    return t.sum(dims, keepdim=keep_dims, dtype=t.dtype)


def _mean(t, dims, keep_dims):
    return _float_compute(lambda f: f.mean(dims, keepdim=keep_dims), t)


@planned(1)
def reduce_sum(node, axes):
    keep_dims, axes = node.bool("keep_dims"), _ints(axes, "axes")
    return lambda x, _: _reduce(x, axes, keep_dims, None, _sum)


@planned(1)
def reduce_mean(node, axes):
    keep_dims, noop_with_empty_axes, axes = node.bool("keep_dims"), node.bool("noop_with_empty_axes"), _ints(axes, "axes")

    def run(x, _):
        _check(x.dtype.is_floating_point, lambda: f"x must be a floating tensor, got {x.dtype}")
        return _reduce(x, axes, keep_dims, noop_with_empty_axes, _mean)

    return run


def _softmax_axes(node, x):
    return _axes(node.ints("axes"), x.dim(), "attr axes")


@planned()
def softmax_v2(node):
    axes, half_to_float = node.ints("axes"), node.bool("half_to_float")
    dims_of_rank = _by_rank(lambda rank: _axes(axes, rank, "attr axes"))

    def run(x):
        _check(x.dtype.is_floating_point, lambda: f"x must be a floating tensor, got {x.dtype}")
        dims = dims_of_rank(x.dim())
        out_dtype = torch.float32 if half_to_float and x.dtype == torch.float16 else x.dtype
        if len(dims) == 1:
            # The same math, one kernel. softmax(x, dim, dtype=x.dtype) runs softmax(x, dim) after a
            # conversion call that returns x: without it, the same bits for half the time.
            y = torch.softmax(x, dims[0], dtype=torch.float32) if x.dtype in _HALF_DTYPES else torch.softmax(x, dims[0])
            return y if y.dtype is out_dtype else y.to(out_dtype)
        xf = x.float() if x.dtype in _HALF_DTYPES else x
        e = torch.exp(xf - xf.amax(dims, keepdim=True))
        return (e / e.sum(dims, keepdim=True)).to(out_dtype)

    return run


def softmax_grad(node, softmax, grad_softmax):
    _same_dtype(softmax=softmax, grad_softmax=grad_softmax)
    dims = _softmax_axes(node, softmax)
    return _float_compute(lambda s, g: (g - (g * s).sum(dims, keepdim=True)) * s, softmax, grad_softmax)


def log_softmax_v2(node, logits):
    _check(logits.dtype.is_floating_point, lambda: f"logits must be a floating tensor, got {logits.dtype}")
    dims = _axes(node.ints("axes"), logits.dim(), "attr axes")
    return _float_compute(lambda f: f - f.logsumexp(dims, keepdim=True), logits)


def log_softmax_grad(node, grad, x):
    # ``x`` is the forward's output (log-probabilities): y = grad - exp(x) * sum(grad).
    _same_dtype(grad=grad, x=x)
    dims = _axes(node.ints("axis"), x.dim(), "attr axis")
    return _float_compute(lambda g, lp: g - lp.exp() * g.sum(dims, keepdim=True), grad, x)


# --- normalization -----------------------------------------------------------------------------

def _norm_split(x, norm_dims, name):
    """The leading (kept) dims of ``x`` when its last ``norm_dims`` are normalized: [A..., R...]."""
    _check(x.dtype in (torch.float32, *_HALF_DTYPES), f"{name} must be float32, float16 or bfloat16, got {x.dtype}")
    _check(0 < norm_dims <= x.dim(), f"{norm_dims} normalized dims do not fit {name} of shape {list(x.shape)}")
    return x.dim() - norm_dims


def _param(param, default, x, norm_shape, name):
    """gamma/beta: [R...] in x's dtype or float32; an absent one is ``default`` in x's dtype."""
    if param is None:
        return torch.full(norm_shape, default, dtype=x.dtype)
    _check(list(param.shape) == norm_shape, f"{name} must have shape {norm_shape}, got {list(param.shape)}")
    _check(param.dtype in (x.dtype, torch.float32), f"{name} must be {x.dtype} or float32, got {param.dtype}")
    return param


def layer_norm_v4(node, x, normalized_shape, gamma, beta):
    # GE's mean and rstd are float32 whatever x's dtype (ops-nn's LayerNormV4 OpDef), shaped
    # [A..., 1, ..., 1] (one 1 per normalized dim), as the forward saves them for LayerNormGradV3.
    # torch types them float32 on an NPU too, but x's dtype on the CPU: offline, TorchAir declares a
    # half-precision x's statistics in its dtype, and the executor's descriptor check refuses the node.
    norm_shape = _ints(normalized_shape, "normalized_shape")
    keep = _norm_split(x, len(norm_shape), "x")
    _check(list(x.shape[keep:]) == norm_shape, f"normalized_shape {norm_shape} must end x's shape {list(x.shape)}")
    gamma, beta = _param(gamma, 1.0, x, norm_shape, "gamma"), _param(beta, 0.0, x, norm_shape, "beta")
    _check(gamma.dtype == beta.dtype, f"gamma and beta must share one dtype, got {gamma.dtype}, {beta.dtype}")
    dims = list(range(keep, x.dim()))
    xf = x.float()
    mean = xf.mean(dims, keepdim=True)
    rstd = torch.rsqrt((xf - mean).pow(2).mean(dims, keepdim=True) + node.float("epsilon"))
    y = (xf - mean) * rstd * gamma.float() + beta.float()
    return y.to(x.dtype), mean, rstd


def layer_norm_grad_v3(node, dy, x, rstd, mean, gamma):
    # The normalized dims are gamma's: x is [A..., R...], mean/rstd [A..., 1, ...], gamma [R...].
    _same_dtype(dy=dy, x=x)
    _check(dy.shape == x.shape, f"dy {list(dy.shape)} and x {list(x.shape)} must have one shape")
    _same_dtype(rstd=rstd, mean=mean)
    keep = _norm_split(x, gamma.dim(), "x")
    stats_shape = [*x.shape[:keep], *[1] * gamma.dim()]
    for name, t in (("rstd", rstd), ("mean", mean)):
        _check(list(t.shape) == stats_shape, f"{name} must have shape {stats_shape}, got {list(t.shape)}")
    _check(gamma.shape == x.shape[keep:], f"gamma {list(gamma.shape)} must end x's shape {list(x.shape)}")
    norm_dims, kept_dims = list(range(keep, x.dim())), list(range(keep))
    dyf, rstdf = dy.float(), rstd.float()
    x_hat = (x.float() - mean.float()) * rstdf
    g = dyf * gamma.float()
    # d/dx of (x - mean) * rstd: the gradient minus its mean and its projection on x_hat, scaled.
    pd_x = rstdf * (g - g.mean(norm_dims, keepdim=True) - x_hat * (g * x_hat).mean(norm_dims, keepdim=True))
    pd_gamma = (dyf * x_hat).sum(kept_dims) if kept_dims else dyf * x_hat
    pd_beta = dyf.sum(kept_dims) if kept_dims else dyf
    return pd_x.to(x.dtype), pd_gamma.to(gamma.dtype), pd_beta.to(gamma.dtype)


# --- losses and embedding gradients ------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _nll_weights(node, x, target, weight):
    """Per-sample weights ``weight[target]``, 0 where target is ``ignore_index``; x is [N, C] or [C]."""
    _check(x.dim() in (1, 2), lambda: f"x must be [N, C] or [C], got shape {list(x.shape)}")
    _check(x.dtype == torch.float32, lambda: f"x must be float32 (GE NLLLoss's only type), got {x.dtype}")
    _check(target.dtype in (torch.int32, torch.int64), lambda: f"target must be int32 or int64, got {target.dtype}")
    classes = x.shape[-1]
    rows = target.reshape(-1).long()
    _check(rows.numel() == (x.shape[0] if x.dim() == 2 else 1), lambda: f"target {list(target.shape)} does not match x {list(x.shape)}")
    ignore_index = node.int("ignore_index")
    kept = rows != ignore_index
    _check(bool(((rows[kept] >= 0) & (rows[kept] < classes)).all()), lambda: f"target values out of range [0, {classes})")
    if weight is None:
        weight = torch.ones(classes, dtype=x.dtype)
    _check(weight.shape == (classes,) and weight.dtype == x.dtype, lambda: f"weight must be {x.dtype}[{classes}], got {weight.dtype}{list(weight.shape)}")
    safe = torch.where(kept, rows, 0)
    return rows.numel(), safe, weight[safe] * kept


def _reduction(node):
    reduction = node.str("reduction")
    _check(reduction in _REDUCTIONS, lambda: f"attr reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def nll_loss(node, x, target, weight):
    reduction = _reduction(node)
    n, safe, w = _nll_weights(node, x, target, weight)
    picked = x.reshape(n, -1).gather(1, safe[:, None])[:, 0]
    losses = -w * picked
    # The sum of the weights, for every reduction (aten's CPU kernel leaves it 0 for "none", where
    # nothing reads it).
    total_weight = w.sum()
    if reduction == "none":
        return losses.reshape(target.shape), total_weight
    loss = losses.sum()
    return (loss / total_weight if reduction == "mean" else loss), total_weight


def nll_loss_grad(node, x, y_grad, target, weight, total_weight):
    reduction = _reduction(node)
    _same_dtype(x=x, y_grad=y_grad, total_weight=total_weight)
    n, safe, w = _nll_weights(node, x, target, weight)
    if reduction == "none":
        _check(y_grad.numel() == n, lambda: f"y_grad must hold one value per sample ({n}), got shape {list(y_grad.shape)}")
        scale = y_grad.reshape(n)
    else:
        _check(y_grad.numel() == 1 and total_weight.numel() == 1, "y_grad and total_weight must hold one value")
        scale = y_grad.reshape(()).expand(n)
        if reduction == "mean":
            scale = scale / total_weight.reshape(())
    x_grad = torch.zeros(n, x.shape[-1], dtype=x.dtype)
    x_grad.scatter_(1, safe[:, None], (-w * scale)[:, None])
    return x_grad.reshape(x.shape)


def embedding_dense_grad(node, grad, indices):
    num_weights, padding_idx = node.int("num_weights"), node.int("padding_idx")
    _check(not indices.dtype.is_floating_point and indices.dtype != torch.bool, lambda: f"indices must be integers, got {indices.dtype}")
    _check(grad.shape[: indices.dim()] == indices.shape, lambda: f"grad {list(grad.shape)} must start with indices' shape {list(indices.shape)}")
    rows = indices.reshape(-1).long()
    _check(bool(((rows >= 0) & (rows < num_weights)).all()), lambda: f"indices out of range [0, {num_weights})")
    grad_rows = grad.reshape(rows.numel(), -1).float()
    if node.bool("scale_grad_by_freq"):
        grad_rows = grad_rows / torch.bincount(rows, minlength=num_weights)[rows, None]
    # Rows at padding_idx get no gradient; -1 means no padding row.
    grad_rows = grad_rows * (rows != padding_idx)[:, None] if padding_idx >= 0 else grad_rows
    y = torch.zeros(num_weights, grad_rows.shape[1]).index_add_(0, rows, grad_rows)
    return y.to(grad.dtype)


GE_OPS = {
    "Abs": _unary(torch.abs),
    "Add": _binary(torch.add),
    "BatchMatMul": batch_mat_mul,
    "BroadcastTo": indexing.broadcast_to,
    "Cast": cast,
    "ClipByValueV2": clip_by_value_v2,
    "ConcatV2": indexing.concat_v2,
    "Cos": _float_unary(torch.cos),
    "Cumsum": cumsum,
    "EmbeddingDenseGrad": embedding_dense_grad,
    "Equal": _binary(torch.eq),
    "Exp": exp,
    "Expand": indexing.expand,
    "Fill": indexing.fill,
    "FloorMod": floor_mod,
    "FloorDiv": floor_div,
    "Gather": indexing.gather,
    "GatherElements": indexing.gather_elements,
    "GatherV2": indexing.gather_v2,
    "Gelu": gelu,
    "GeluGrad": gelu_grad,
    "Greater": _binary(torch.gt),
    "GreaterEqual": _binary(torch.ge),
    "Identity": indexing.identity,
    "IndexByTensor": indexing.index_by_tensor,
    "LayerNormGradV3": layer_norm_grad_v3,
    "LayerNormV4": layer_norm_v4,
    "Less": _binary(torch.lt),
    "LessEqual": _binary(torch.le),
    "LogSoftmaxGrad": log_softmax_grad,
    "LogSoftmaxV2": log_softmax_v2,
    "LogicalAnd": _logical(torch.logical_and),
    "LogicalNot": logical_not,
    "LogicalOr": _logical(torch.logical_or),
    "MaskedFill": masked_fill,
    "MatMul": mat_mul,
    "MatMulV2": mat_mul_v2,
    "Maximum": _binary(torch.maximum),
    "Minimum": _binary(torch.minimum),
    "Mul": _binary(torch.mul),
    "Muls": muls,
    "NLLLoss": nll_loss,
    "NLLLossGrad": nll_loss_grad,
    "Neg": _unary(torch.neg),
    "NotEqual": _binary(torch.ne),
    "Pack": indexing.pack,
    "PadV3": indexing.pad_v3,
    "Pow": pow_,
    "Range": range_,
    "RealDiv": real_div,
    "Reciprocal": _float_unary(torch.reciprocal),
    "ReduceMean": reduce_mean,
    "ReduceSum": reduce_sum,
    "Relu": _unary(torch.relu),
    "ReluGrad": relu_grad,
    "Reshape": indexing.reshape,
    "Rsqrt": _float_unary(torch.rsqrt),
    "ScatterElements": indexing.scatter_elements,
    "SelectV2": select_v2,
    "Shape": indexing.shape,
    "Sigmoid": _float_unary(torch.sigmoid),
    "SigmoidGrad": sigmoid_grad,
    "Sign": _unary(torch.sign),
    "Sin": _float_unary(torch.sin),
    "Sort": indexing.sort,
    "SoftmaxGrad": softmax_grad,
    "SoftmaxV2": softmax_v2,
    "SplitV": indexing.split_v,
    "Squeeze": indexing.squeeze,
    "StridedSliceV2": indexing.strided_slice_v2,
    "Sub": _binary(torch.sub),
    "Swish": swish,
    "Sxpy": sxpy,
    "Tanh": _float_unary(torch.tanh),
    "TanhGrad": tanh_grad,
    "Transpose": indexing.transpose,
    "TopKV2": indexing.top_k_v2,
    "Tril": tril,
    "Unsqueeze": indexing.unsqueeze,
    **COLLECTIVES,
}
