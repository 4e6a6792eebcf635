"""The helpers every op-family module of the offline GE executor shares (``ge_ops.py`` says how
ops are written): input checks, host-side int inputs, axes, float32 compute for 16-bit floats,
and the ``planned`` two-stage form."""

import functools

import torch

_HALF_DTYPES = (torch.float16, torch.bfloat16)


def _check(condition, message):
    """Raise ``message`` (a str, or a function making it: an f-string is built only on failure)
    unless ``condition``. The executor prefixes the node's name and type to every error an op raises."""
    if not condition:
        raise ValueError(message() if callable(message) else message)


def _same_dtype(**tensors):
    dtypes = {t.dtype for t in tensors.values()}
    _check(len(dtypes) == 1, lambda: f"inputs must share one dtype (GE type T), got { {name: t.dtype for name, t in tensors.items()} }")


_CONST_INTS = "_airfuse_const_ints"  # the tensor attribute that remember_const_ints sets


def remember_const_ints(tensor):
    """Read once the values of a Const that can be an index/shape input: a Const never changes,
    so _ints returns them without reading the tensor on every run. The executor calls this for
    each Const it decodes."""
    if not tensor.dtype.is_floating_point and tensor.dtype != torch.bool and tensor.dim() <= 1 and tensor.numel() <= 64:
        setattr(tensor, _CONST_INTS, tuple(_ints(tensor, "Const")))


def _ints(tensor, name):
    """A host-side index/shape input (an int tensor) as a list of ints."""
    known = getattr(tensor, _CONST_INTS, None)
    if known is not None:
        return list(known)
    _check(tensor is not None, lambda: f"input {name} is required")
    _check(not tensor.dtype.is_floating_point and tensor.dtype != torch.bool, lambda: f"{name} must be an integer tensor, got {tensor.dtype}")
    _check(tensor.dim() <= 1, lambda: f"{name} must be a scalar or a 1-D tensor, got shape {list(tensor.shape)}")
    values = tensor.tolist()  # Python ints already; a 0-d tensor gives one
    return values if isinstance(values, list) else [values]


def _int(tensor, name):
    values = _ints(tensor, name)
    _check(len(values) == 1, lambda: f"{name} must hold one value, got {values}")
    return values[0]


def _axis(axis, rank, name):
    _check(-rank <= axis < rank, lambda: f"{name} {axis} is out of range for rank {rank}")
    return axis % rank


def _axes(axes, rank, name):
    normalized = [_axis(a, rank, name) for a in axes]
    _check(len(set(normalized)) == len(normalized), lambda: f"{name} {axes} repeats an axis")
    return normalized


def _float_compute(fn, *tensors):
    """Run ``fn`` in float32 for float16/bfloat16 inputs (as Ascend kernels accumulate), cast back."""
    dtype = tensors[0].dtype
    if dtype in _HALF_DTYPES:
        return fn(*(t.float() for t in tensors)).to(dtype)
    return fn(*tensors)


def planned(*const_inputs):
    """An op function written in two stages: ``plan(node, *consts)`` reads the node's attrs and
    the Const inputs at positions ``const_inputs`` and returns ``run(*inputs)`` (all the node's
    inputs, in order), which does the tensor work. The decorated function runs both stages on
    every call; the executor calls its ``plan`` once, when the graph is compiled, where those
    inputs are Consts (else it runs the whole function on every run)."""

    def decorate(plan):
        def op(node, *inputs):
            return plan(node, *(inputs[i] for i in const_inputs))(*inputs)

        def plan_once(node, consts):
            values = [consts[i] for i in const_inputs]
            return None if any(value is None for value in values) else plan(node, *values)

        op.plan = plan_once
        op.__name__, op.__doc__ = plan.__name__, plan.__doc__
        return op

    return decorate


def _binary(fn):
    def op(node, x1, x2):
        if x1.dtype is not x2.dtype:
            _same_dtype(x1=x1, x2=x2)
        return fn(x1, x2)

    return op


def _unary(fn):
    def op(node, x):
        return fn(x)

    return op


def _float_unary(fn):
    def op(node, x):
        _check(x.dtype.is_floating_point, lambda: f"x must be a floating tensor, got {x.dtype}")
        return fn(x)

    return op


def _by_rank(normalize):
    """``normalize(rank)`` computed once per input rank (a compiled graph sees one or few)."""
    return functools.lru_cache(maxsize=8)(normalize)
