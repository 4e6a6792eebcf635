"""The ``standard`` form: each airfuse forward op as standard ONNX ops (opset 23), so any ONNX
consumer runs the model.

What the ONNX ops compute, checked against the opset-23 spec (and by tests against eager):

- ``RMSNormalization`` normalizes over ``[axis, rank)``; ``axis=-1`` is rms_norm's last dim, and
  ``stash_type=1`` computes the statistics in float32 as airfuse does. Its one output is ``y``: the
  spec's RMS is internal and is the root, not its reciprocal. airfuse's ``rstd`` (float32,
  ``x.shape[:-1] + (1,)``) is computed beside it from the same x; the exporter's optimizer removes
  those nodes when nothing reads rstd (a model's forward never does).
- ``RotaryEmbedding`` takes x as ``(batch, heads, seq, head)`` (or ``(batch, seq, heads * head)``
  with ``num_heads``) and cos/sin caches ``(batch, seq, head / 2)``: one angle per rotated pair,
  the same for all heads. ``interleaved=0`` pairs ``x[i]`` with ``x[i + D/2]`` (airfuse's
  ``mode="half"``), ``interleaved=1`` pairs ``x[2i]`` with ``x[2i + 1]`` (``"interleave"``), and
  both give ``first' = first*cos - second*sin``, ``second' = second*cos + first*sin``: airfuse's
  ``x*cos + rotate(x)*sin``. airfuse's tables are full width (each angle repeated for both members
  of its pair, as every RoPE builds them), so the cache is the half (``cos[..., :D/2]``) or the even
  positions (``cos[..., ::2]``). A rank-4 x whose tables broadcast over dim 1 takes the 4-D form,
  over dim 2 the 3-D one; any other layout is written with Mul/Add over the full tables.
- ``Gelu`` with the op's ``approximate`` (``"tanh"`` or ``"none"``, the same strings as ONNX's).
- ``silu_mul``: ``a * Sigmoid(a) * b``; ``swiglu``: the same on the two halves of ``Split``.

ONNX's RMSNormalization and RotaryEmbedding take x and the second tensor in one type (a float32
scale with a half x would give a float32 y). Where airfuse takes float32 gamma or tables with a
16-bit x, x is cast to float32 around the op, which is also how airfuse computes it (float32,
rounded once).
"""

from onnxscript import ir
from onnxscript import opset23 as op

from ..ops.add import ADD
from ..ops.add_rms_norm import ADD_RMS_NORM
from ..ops.gelu import GELU
from ..ops.rms_norm import RMS_NORM
from ..ops.rope import MODES, ROPE
from ..ops.silu_mul import SILU_MUL
from ..ops.swiglu import SWIGLU

_FLOAT = ir.DataType.FLOAT
_HALF_MODE, _INTERLEAVE_MODE = MODES


def _default(opdef, name):
    return next(attr.default for attr in opdef.attrs if attr.name == name)


def _rstd(x, epsilon: float):
    """rsqrt(mean(x², last dim) + epsilon) in float32, keeping the last dim as 1."""
    xf = op.Cast(x, to=_FLOAT)
    mean_square = op.ReduceMean(op.Mul(xf, xf), op.Constant(value_ints=[-1]), keepdims=1)
    return op.Reciprocal(op.Sqrt(op.Add(mean_square, op.Constant(value_float=epsilon))))


def _normalized(x, dtype, gamma, epsilon: float):
    """y of rms_norm for x of ``dtype`` (passed apart: the exporter knows the dtypes of a
    translation's inputs, not those of the values it computes)."""
    if gamma.dtype == dtype:
        return op.RMSNormalization(x, gamma, axis=-1, epsilon=epsilon, stash_type=1)
    y = op.RMSNormalization(op.Cast(x, to=_FLOAT), gamma, axis=-1, epsilon=epsilon, stash_type=1)
    return op.Cast(y, to=dtype)


def rms_norm(x, gamma, epsilon: float = _default(RMS_NORM, "epsilon")):
    return _normalized(x, x.dtype, gamma, epsilon), _rstd(x, epsilon)


def add_rms_norm(x1, x2, gamma, epsilon: float = _default(ADD_RMS_NORM, "epsilon")):
    x = op.Add(x1, x2)
    return _normalized(x, x1.dtype, gamma, epsilon), _rstd(x, epsilon), x


def add(x, y):
    return op.Add(x, y)


def silu_mul(a, b):
    return op.Mul(op.Mul(a, op.Sigmoid(a)), b)


def swiglu(x, dim: int = _default(SWIGLU, "dim")):
    gate, up = op.Split(x, axis=dim, num_outputs=2)
    return silu_mul(gate, up)


def gelu(x, approximate: str = _default(GELU, "approximate")):
    return op.Gelu(x, approximate=approximate)


def rope(x, cos, sin, mode: str = _default(ROPE, "mode")):
    if cos.dtype == x.dtype:
        return _rope(x, x, cos, sin, mode)
    return op.Cast(_rope(x, op.Cast(x, to=_FLOAT), cos, sin, mode), to=x.dtype)


def _rope(x, rotated, cos, sin, mode):
    """y of rope for ``rotated`` (x, or x cast to the tables' dtype); layouts read from x."""
    shape, table_shape = x.shape, cos.shape
    head = shape[len(shape) - 1]
    if len(shape) == 4 and isinstance(head, int) and _is_one(table_shape[1]):
        # (batch, heads, seq, head): the 4-D form, the tables broadcast over heads.
        return _rotary_embedding(x, rotated, cos, sin, mode, broadcast_dim=1)
    if len(shape) == 4 and isinstance(head, int) and isinstance(shape[2], int) and _is_one(table_shape[2]):
        # (batch, seq, heads, head): the 3-D form on (batch, seq, heads * head), num_heads = heads.
        flat = op.Reshape(rotated, op.Constant(value_ints=[0, 0, -1]))
        y = _rotary_embedding(x, flat, cos, sin, mode, broadcast_dim=2, num_heads=shape[2])
        return op.Reshape(y, op.Constant(value_ints=[0, 0, shape[2], head]))
    return op.Add(op.Mul(rotated, cos), op.Mul(_rotate(rotated, len(shape), mode), sin))


def _is_one(dim) -> bool:
    return isinstance(dim, int) and dim == 1


def _rotary_embedding(x, rotated, cos, sin, mode, *, broadcast_dim, num_heads=None):
    """RotaryEmbedding on ``rotated`` (x itself, or x flattened to 3-D with ``num_heads``), the
    tables of rank 4 with size 1 at ``broadcast_dim``; the other two leading dims are x's batch
    and sequence (or 1, broadcast)."""
    attrs = {"interleaved": int(mode == _INTERLEAVE_MODE)}
    if num_heads is not None:
        attrs["num_heads"] = num_heads
    batch_seq = tuple(d for d in range(3) if d != broadcast_dim)
    caches = [_cache(table, x, broadcast_dim, batch_seq, mode) for table in (cos, sin)]
    return op.RotaryEmbedding(rotated, *caches, **attrs)


def _cache(table, x, broadcast_dim, batch_seq, mode):
    """One angle per rotated pair, shape (x's batch, x's seq, head / 2)."""
    head = x.shape[3]
    squeezed = op.Squeeze(table, op.Constant(value_ints=[broadcast_dim]))
    start, end, last = op.Constant(value_ints=[0]), op.Constant(value_ints=[head]), op.Constant(value_ints=[-1])
    if mode == _HALF_MODE:
        per_pair = op.Slice(squeezed, start, op.Constant(value_ints=[head // 2]), last)
    else:
        per_pair = op.Slice(squeezed, start, end, last, op.Constant(value_ints=[2]))
    if all(table.shape[d] == x.shape[d] for d in batch_seq):
        return per_pair
    target = op.Concat(
        *(op.Shape(x, start=d, end=d + 1) for d in batch_seq), op.Constant(value_ints=[head // 2]), axis=0
    )
    return op.Expand(per_pair, target)


def _rotate(x, rank, mode):
    """airfuse's rotate(x) over the last dim, for layouts RotaryEmbedding does not take."""
    if mode == _HALF_MODE:
        first, second = op.Split(x, axis=-1, num_outputs=2)
        return op.Concat(op.Neg(second), first, axis=-1)
    keep = [0] * (rank - 1)
    first, second = op.Split(op.Reshape(x, op.Constant(value_ints=[*keep, -1, 2])), axis=-1, num_outputs=2)
    return op.Reshape(op.Concat(op.Neg(second), first, axis=-1), op.Constant(value_ints=[*keep, -1]))


TRANSLATIONS = {
    RMS_NORM.name: rms_norm,
    ADD_RMS_NORM.name: add_rms_norm,
    ADD.name: add,
    SILU_MUL.name: silu_mul,
    SWIGLU.name: swiglu,
    GELU.name: gelu,
    ROPE.name: rope,
}
