"""Each GE op of the offline executor against the torch operation it stands for: broadcasting,
every attribute it honours, and the values it refuses."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from airfuse.offline.ge_executor import GeExecutionError
from airfuse.offline.ge_ops import GE_OPS
from ge_graphs import DataType, ge, ints, rand, run_op

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
TOL = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float16: dict(atol=2e-3, rtol=2e-3), torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2)}


def _close(actual, expected, dtype=torch.float32):
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected, **TOL.get(dtype, {}))


def _grad(fn, x, dy):
    """d(fn(x))/dx applied to dy, in float64 then rounded: the reference for the *Grad ops."""
    x64 = x.double().requires_grad_()
    fn(x64).backward(dy.double())
    return x64.grad.to(x.dtype)


# --- elementwise -------------------------------------------------------------------------------

BINARY = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "RealDiv": torch.div, "Pow": torch.pow}


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1, 4), (3, 1)), ((4,), ())], ids=str)
def test_binary_broadcasts(op, shapes):
    x1, x2 = torch.rand(shapes[0]) + 0.5, torch.rand(shapes[1]) + 0.5
    _close(run_op(getattr(ge, op), x1, x2), BINARY[op](x1, x2))


@pytest.mark.parametrize("op", BINARY)
def test_binary_refuses_mixed_dtypes(op):
    with pytest.raises(GeExecutionError, match=rf"type {op}\).*share one dtype"):
        run_op(getattr(ge, op), rand(2), rand(2, dtype=torch.float16))


def test_real_div_refuses_integers():
    with pytest.raises(GeExecutionError, match="floating"):
        run_op(ge.RealDiv, torch.tensor([3, 4]), torch.tensor([2, 2]))


UNARY = {
    "Abs": torch.abs, "Neg": torch.neg, "Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh,
    "Rsqrt": torch.rsqrt, "Reciprocal": torch.reciprocal, "Sign": torch.sign, "Identity": lambda x: x,
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, dtype):
    x = rand(3, 5, dtype=dtype)
    if op in ("Rsqrt", "Reciprocal"):
        x = x.abs() + 0.1
    _close(run_op(getattr(ge, op), x), UNARY[op](x), dtype)


@pytest.mark.parametrize("op", ["Sigmoid", "Tanh", "Rsqrt", "Reciprocal"])
def test_float_unary_refuses_integers(op):
    with pytest.raises(GeExecutionError, match="floating"):
        run_op(getattr(ge, op), torch.tensor([1, 2]))


def test_logical_not():
    x = torch.tensor([True, False, True])
    assert torch.equal(run_op(ge.LogicalNot, x), ~x)
    with pytest.raises(GeExecutionError, match="bool"):
        run_op(ge.LogicalNot, torch.tensor([1, 0]))


@pytest.mark.parametrize("base, scale, shift", [(-1.0, 1.0, 0.0), (-1.0, 0.5, 1.0), (2.0, 1.0, 0.0), (10.0, 2.0, -1.0)])
def test_exp_attrs(base, scale, shift):
    x = rand(4, 3)
    expected = torch.exp(scale * x + shift) if base == -1.0 else torch.pow(base, scale * x + shift)
    _close(run_op(lambda t: ge.Exp(t, base=base, scale=scale, shift=shift), x), expected)


def test_exp_refuses_a_nonpositive_base():
    with pytest.raises(GeExecutionError, match="base"):
        run_op(lambda t: ge.Exp(t, base=0.0), rand(2))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_muls(dtype):
    x = rand(2, 3, dtype=dtype)
    _close(run_op(lambda t: ge.Muls(t, value=-2.5), x), x * -2.5, dtype)


def test_sxpy_is_x1_minus_alpha_x2():
    x1, x2, alpha = rand(2, 3), rand(3), torch.tensor(2.5)
    _close(run_op(lambda a, b, c: ge.Sxpy(a, b, c), x1, x2, alpha), x1 - alpha * x2)
    _close(run_op(lambda a, b: ge.Sxpy(a, b, None), x1, x2), x1 - x2)


@pytest.mark.parametrize("scale", [1.0, 1.702])
def test_swish(scale):
    x = rand(4, 5)
    _close(run_op(lambda t: ge.Swish(t, scale=scale), x), x * torch.sigmoid(scale * x))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_gelu_is_the_tanh_approximation(dtype):
    x = rand(4, 8, dtype=dtype) * 3
    _close(run_op(ge.Gelu, x), F.gelu(x, approximate="tanh"), dtype)


def test_gelu_grad_ignores_its_placeholder_y():
    x, dy = rand(4, 8) * 3, rand(4, 8)
    expected = _grad(lambda t: F.gelu(t, approximate="tanh"), x, dy)
    # TorchAir feeds dy into y; any value there must not change the result.
    for y in (dy, torch.zeros(4, 8)):
        _close(run_op(ge.GeluGrad, dy, x, y), expected)


def test_relu_grad():
    features, grads = rand(3, 4), rand(3, 4)
    _close(run_op(ge.ReluGrad, grads, features), torch.where(features > 0, grads, 0.0))


@pytest.mark.parametrize("op, fn", [("SigmoidGrad", torch.sigmoid), ("TanhGrad", torch.tanh)])
def test_sigmoid_tanh_grad_take_the_output(op, fn):
    x, dy = rand(3, 4), rand(3, 4)
    _close(run_op(getattr(ge, op), fn(x), dy), _grad(fn, x, dy))
    with pytest.raises(GeExecutionError, match="complex_conj"):
        run_op(lambda y, d: getattr(ge, op)(y, d, complex_conj=True), fn(x), dy)


def test_masked_fill_broadcasts_the_mask():
    x, mask = rand(2, 3, 4), torch.rand(3, 1) > 0.5
    value = torch.tensor(-7.0)
    _close(run_op(ge.MaskedFill, x, mask, value), x.masked_fill(mask, -7.0))


def test_masked_fill_refuses_a_mask_that_grows_x_and_a_wrong_value():
    with pytest.raises(GeExecutionError, match="MaskedFill"):
        run_op(ge.MaskedFill, rand(3, 1), torch.ones(3, 4, dtype=torch.bool), torch.tensor(1.0))
    with pytest.raises(GeExecutionError, match="share one dtype"):
        run_op(ge.MaskedFill, rand(3), torch.ones(3, dtype=torch.bool), torch.tensor(1.0, dtype=torch.float16))


@pytest.mark.parametrize("diagonal", [0, 1, -1])
def test_tril(diagonal):
    x = rand(2, 4, 5)
    _close(run_op(lambda t: ge.Tril(t, diagonal=diagonal), x), torch.tril(x, diagonal))


CASTS = {
    DataType.DT_FLOAT: torch.float32, DataType.DT_FLOAT16: torch.float16, DataType.DT_BF16: torch.bfloat16,
    DataType.DT_INT32: torch.int32, DataType.DT_INT64: torch.int64, DataType.DT_BOOL: torch.bool,
    DataType.DT_INT8: torch.int8, DataType.DT_UINT8: torch.uint8, DataType.DT_DOUBLE: torch.float64,
}


@pytest.mark.parametrize("dst_type", CASTS, ids=lambda d: str(CASTS[d]))
def test_cast_dst_type_is_ge_numbering(dst_type):
    x = torch.tensor([0.0, 1.5, -2.0, 3.0])
    _close(run_op(lambda t: ge.Cast(t, dst_type=dst_type), x), x.to(CASTS[dst_type]))


def test_cast_refuses_an_unknown_dst_type():
    with pytest.raises(GeExecutionError, match=r"node 'Cast'.*dst_type is GE DataType 16"):
        run_op(lambda t: ge.Cast(t, dst_type=DataType.DT_COMPLEX64), rand(2))


# --- matrix products ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["MatMul", "MatMulV2"])
@pytest.mark.parametrize("t1, t2", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transpose_flags_and_bias(op, t1, t2):
    a, b, bias = rand(3, 4), rand(4, 5), rand(5)
    x1, x2 = (a.t().contiguous() if t1 else a), (b.t().contiguous() if t2 else b)
    extra = [None] if op == "MatMulV2" else []
    build = lambda x, y, c=None: getattr(ge, op)(x, y, c, *extra, transpose_x1=t1, transpose_x2=t2)  # noqa: E731
    _close(run_op(build, x1, x2), a @ b)
    _close(run_op(build, x1, x2, bias), a @ b + bias)


def test_matmul_refuses_batched_inputs_and_quantization():
    with pytest.raises(GeExecutionError, match="2-D"):
        run_op(lambda x, y: ge.MatMul(x, y, None), rand(2, 3, 4), rand(4, 5))
    with pytest.raises(GeExecutionError, match="offset_x"):
        run_op(lambda x, y: ge.MatMulV2(x, y, None, None, offset_x=1), rand(3, 4), rand(4, 5))
    with pytest.raises(GeExecutionError, match="contracted"):
        run_op(lambda x, y: ge.MatMul(x, y, None), rand(3, 4), rand(5, 4))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("adj1, adj2", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_adjoint_flags_and_batch_broadcast(adj1, adj2, dtype):
    a, b = rand(2, 1, 3, 4, dtype=dtype), rand(5, 4, 6, dtype=dtype)
    x1 = a.transpose(-1, -2).contiguous() if adj1 else a
    x2 = b.transpose(-1, -2).contiguous() if adj2 else b
    _close(run_op(lambda x, y: ge.BatchMatMul(x, y, adj_x1=adj1, adj_x2=adj2), x1, x2), a @ b, dtype)


# --- reductions and softmax --------------------------------------------------------------------

@pytest.mark.parametrize("op, fn", [("ReduceSum", torch.sum), ("ReduceMean", torch.mean)])
@pytest.mark.parametrize("axes", [[0], [-1], [0, 2], [2, 0, 1]], ids=str)
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("index_dtype", [DataType.DT_INT32, DataType.DT_INT64])
def test_reduce_axes_input_and_keep_dims(op, fn, axes, keep_dims, index_dtype):
    x = rand(2, 3, 4)
    out = run_op(lambda t: getattr(ge, op)(t, ints(axes, index_dtype), keep_dims=keep_dims), x)
    _close(out, fn(x, axes, keepdim=keep_dims))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_reduce_keeps_half_dtypes(dtype):
    x = rand(8, 64, dtype=dtype)
    _close(run_op(lambda t: ge.ReduceMean(t, ints([-1])), x), x.float().mean(-1).to(dtype), dtype)
    _close(run_op(lambda t: ge.ReduceSum(t, ints([-1])), x), x.sum(-1), dtype)


def test_reduce_sum_of_integers_keeps_their_dtype():
    x = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    _close(run_op(lambda t: ge.ReduceSum(t, ints([0])), x), torch.tensor([4, 6], dtype=torch.int32))


def test_reduce_mean_noop_with_empty_axes():
    x = rand(2, 3)
    _close(run_op(lambda t: ge.ReduceMean(t, ints([]), noop_with_empty_axes=True), x), x)
    _close(run_op(lambda t: ge.ReduceMean(t, ints([]), noop_with_empty_axes=False), x), x.mean())


def test_reduce_refuses_what_it_does_not_define():
    with pytest.raises(GeExecutionError, match="empty axes"):
        run_op(lambda t: ge.ReduceSum(t, ints([])), rand(2, 3))
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(lambda t: ge.ReduceSum(t, ints([2])), rand(2, 3))
    with pytest.raises(GeExecutionError, match="repeats"):
        run_op(lambda t: ge.ReduceMean(t, ints([1, -1])), rand(2, 3))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("axes", [[-1], [0], [1, 2]], ids=str)
def test_softmax_v2_axes(axes, dtype):
    x = rand(2, 3, 4, dtype=dtype) * 4
    x[0, 0, 0] = float("-inf")
    expected = torch.softmax(x.float().flatten(axes[0], axes[-1]) if len(axes) > 1 else x.float(), axes[0])
    _close(run_op(lambda t: ge.SoftmaxV2(t, axes=axes), x), expected.reshape(x.shape).to(dtype), dtype)


@pytest.mark.parametrize("dtype, out", [(torch.float16, torch.float32), (torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16)])
def test_softmax_v2_half_to_float(dtype, out):
    x = rand(3, 5, dtype=dtype)
    _close(run_op(lambda t: ge.SoftmaxV2(t, half_to_float=True), x), torch.softmax(x.float(), -1).to(out), dtype)


@pytest.mark.parametrize("axes", [[-1], [1]], ids=str)
def test_softmax_grad(axes):
    x, dy = rand(2, 3, 4), rand(2, 3, 4)
    y = torch.softmax(x, axes[0])
    _close(run_op(lambda s, g: ge.SoftmaxGrad(s, g, axes=axes), y, dy), _grad(lambda t: torch.softmax(t, axes[0]), x, dy))


# --- layer norm ---------------------------------------------------------------------------------

def _layer_norm_reference(x, norm_shape, gamma, beta, eps):
    """torch's native_layer_norm in float32: y rounded to x's dtype, mean and rstd float32 [A..., 1...]."""
    y, mean, rstd = torch.native_layer_norm(x.float(), norm_shape, gamma if gamma is None else gamma.float(),
                                            beta if beta is None else beta.float(), eps)
    return y.to(x.dtype), mean, rstd


@pytest.mark.parametrize("dtype, param_dtype", [*((d, d) for d in FLOATS), (torch.bfloat16, torch.float32)], ids=str)
@pytest.mark.parametrize("norm_shape", [[8], [3, 8]], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_v4_is_native_layer_norm(dtype, param_dtype, norm_shape, affine):
    x = rand(2, 3, 8, dtype=dtype) * 3 + 1
    gamma, beta = (rand(*norm_shape, dtype=param_dtype), rand(*norm_shape, dtype=param_dtype)) if affine else (None, None)
    build = lambda t, *p: ge.LayerNormV4(t, ints(norm_shape, DataType.DT_INT32), *(p or (None, None)), epsilon=1e-3)  # noqa: E731
    got = run_op(build, x, *([gamma, beta] if affine else []))
    want = _layer_norm_reference(x, norm_shape, gamma, beta, 1e-3)
    _close(got[0], want[0], dtype)
    for actual, expected in zip(got[1:], want[1:], strict=True):
        _close(actual, expected)  # float32 statistics, whatever x's dtype


def test_layer_norm_v4_refuses_a_shape_not_ending_x_and_wrong_params():
    x = rand(2, 8)
    with pytest.raises(GeExecutionError, match="normalized_shape"):
        run_op(lambda t: ge.LayerNormV4(t, ints([4], DataType.DT_INT32), None, None), x)
    with pytest.raises(GeExecutionError, match="gamma must have shape"):
        run_op(lambda t, g: ge.LayerNormV4(t, ints([8], DataType.DT_INT32), g, None), x, rand(4))
    with pytest.raises(GeExecutionError, match="gamma must be torch.float16 or float32"):
        run_op(lambda t, g: ge.LayerNormV4(t, ints([8], DataType.DT_INT32), g, None), x.half(), rand(8, dtype=torch.bfloat16))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("norm_shape", [[8], [3, 8]], ids=str)
def test_layer_norm_grad_v3_is_the_layer_norm_gradient(dtype, norm_shape):
    x, dy = rand(2, 3, 8, dtype=dtype) * 3 + 1, rand(2, 3, 8, dtype=dtype)
    gamma, beta = rand(*norm_shape, dtype=dtype), rand(*norm_shape, dtype=dtype)
    _, mean, rstd = _layer_norm_reference(x, norm_shape, gamma, beta, 1e-5)
    x64, gamma64, beta64 = (t.double().requires_grad_() for t in (x, gamma, beta))
    torch.nn.functional.layer_norm(x64, norm_shape, gamma64, beta64, 1e-5).backward(dy.double())
    got = run_op(ge.LayerNormGradV3, dy, x, rstd, mean, gamma)
    for actual, expected in zip(got, (x64.grad, gamma64.grad, beta64.grad), strict=True):
        _close(actual, expected.to(dtype), dtype)


def test_layer_norm_grad_v3_refuses_statistics_of_another_shape():
    x, gamma = rand(2, 3, 8), rand(8)
    mean = rstd = torch.ones(2, 3)  # missing the trailing 1 of the normalized dim
    with pytest.raises(GeExecutionError, match=r"rstd must have shape \[2, 3, 1\]"):
        run_op(ge.LayerNormGradV3, x, x, rstd, mean, gamma)


# --- shapes, layout and indexing ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [DataType.DT_INT32, DataType.DT_INT64])
def test_shape_dtype_attr(dtype):
    out = run_op(lambda t: ge.Shape(t, dtype=dtype), rand(2, 3, 4))
    _close(out, torch.tensor([2, 3, 4], dtype=torch.int32 if dtype == DataType.DT_INT32 else torch.int64))


def test_reshape_infers_minus_one_and_refuses_axis_attrs():
    x = rand(2, 3, 4)
    _close(run_op(lambda t: ge.Reshape(t, ints([4, -1])), x), x.reshape(4, 6))
    with pytest.raises(GeExecutionError, match="attr axis=1"):
        run_op(lambda t: ge.Reshape(t, ints([4, -1]), axis=1), x)


def test_transpose_perm_input():
    x = rand(2, 3, 4)
    _close(run_op(lambda t: ge.Transpose(t, ints([2, 0, 1], DataType.DT_INT32)), x), x.permute(2, 0, 1))
    with pytest.raises(GeExecutionError, match="perm"):
        run_op(lambda t: ge.Transpose(t, ints([1, 0])), x)


def test_squeeze_axis_attr():
    x = rand(1, 3, 1, 4)
    _close(run_op(lambda t: ge.Squeeze(t), x), x.squeeze())
    _close(run_op(lambda t: ge.Squeeze(t, axis=[-2]), x), x.squeeze(2))
    with pytest.raises(GeExecutionError, match="not 1"):
        run_op(lambda t: ge.Squeeze(t, axis=[1]), x)


def test_unsqueeze_axes_attr_counts_in_the_output():
    x = rand(3, 4)
    _close(run_op(lambda t: ge.Unsqueeze(t, axes=[0, 3]), x), x[None, :, :, None])
    _close(run_op(lambda t: ge.Unsqueeze(t, axes=[-1]), x), x[..., None])


def test_broadcast_to():
    x = rand(3, 1)
    _close(run_op(lambda t: ge.BroadcastTo(t, ints([2, 3, 5])), x), x.expand(2, 3, 5))
    with pytest.raises(GeExecutionError, match="negative"):
        run_op(lambda t: ge.BroadcastTo(t, ints([-2, 5])), x)


def test_broadcast_to_minus_one_keeps_the_dim():
    x = rand(3, 1)
    _close(run_op(lambda t: ge.BroadcastTo(t, ints([2, -1, 5])), x), x.expand(2, -1, 5))
    with pytest.raises(GeExecutionError, match="new leading dim"):
        run_op(lambda t: ge.BroadcastTo(t, ints([-1, 3, 5])), x)


@pytest.mark.parametrize("x_shape, shape, out", [((3, 1), (2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1), (2, 3, 4)), ((4,), (1,), (4,))], ids=str)
def test_expand_broadcasts_both_ways(x_shape, shape, out):
    x = rand(*x_shape)
    _close(run_op(lambda t: ge.Expand(t, ints(shape)), x), x.expand(out))


def test_expand_refuses_incompatible_shapes():
    with pytest.raises(GeExecutionError, match="does not broadcast"):
        run_op(lambda t: ge.Expand(t, ints([4])), rand(3))


def test_fill():
    out = run_op(lambda v: ge.Fill(ints([2, 3]), v), torch.tensor(1.5, dtype=torch.bfloat16))
    _close(out, torch.full((2, 3), 1.5, dtype=torch.bfloat16))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack_axis_and_n(axis):
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    _close(run_op(lambda *t: ge.Pack(list(t), N=3, axis=axis), a, b, c), torch.stack([a, b, c], axis))


@pytest.mark.parametrize("dim", [0, -1])
def test_concat_v2(dim):
    a, b = rand(2, 3), rand(2, 3)
    _close(run_op(lambda x, y: ge.ConcatV2([x, y], ints([dim]), N=2), a, b), torch.cat([a, b], dim))


def test_concat_v2_skips_empty_inputs_of_any_rank():
    # Regression: Hugging Face's KV cache concatenates 4-D states onto an empty 1-D tensor along
    # dim -2, which torch allows; the empty input's rank must not bound concat_dim.
    empty, states = torch.empty(0), rand(2, 2, 3, 4)
    out = run_op(lambda x, y: ge.ConcatV2([x, y], ints([-2]), N=2), empty, states)
    _close(out, torch.cat([empty, states], -2))
    with pytest.raises(GeExecutionError, match="differ in rank"):
        run_op(lambda x, y: ge.ConcatV2([x, y], ints([0]), N=2), rand(2), rand(2, 2))
    # Empty inputs of another shape still count.
    a, b = torch.empty(0, 3), torch.empty(0, 2)
    _close(run_op(lambda x, y: ge.ConcatV2([x, y], ints([1]), N=2), a, b), torch.cat([a, b], 1))


def test_pack_and_concat_refuse_mixed_dtypes():
    with pytest.raises(GeExecutionError, match="share one dtype"):
        run_op(lambda x, y: ge.Pack([x, y], N=2), rand(2), rand(2, dtype=torch.float16))


def test_split_v_sizes_and_inferred_size():
    x = rand(2, 7)
    for sizes in ([3, 4], [2, -1, 1]):
        outs = run_op(lambda t: ge.SplitV(t, ints(sizes), ints([-1]), num_split=len(sizes)), x)
        expected = torch.split(x, [s if s >= 0 else 7 - sum(sizes) - 1 for s in sizes], -1)
        for out, ref in zip(outs, expected, strict=True):
            _close(out, ref)
    with pytest.raises(GeExecutionError, match="do not split"):
        run_op(lambda t: ge.SplitV(t, ints([3, 3]), ints([1]), num_split=2), x)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_is_aten_scatter(axis):
    data, updates = rand(3, 5), rand(3, 5)
    indices = torch.stack([torch.randperm(data.shape[axis])[: updates.shape[axis]] for _ in range(updates.shape[1 - axis % 2])], 1 - axis % 2)
    negative = indices - data.shape[axis]  # the same positions counted from the end
    for index in (indices, negative):
        _close(run_op(lambda d, i, u: ge.ScatterElements(d, i, u, axis=axis), data, index, updates), data.scatter(axis, indices, updates))


def test_scatter_elements_refuses_reductions_and_out_of_range_indices():
    data = rand(3, 4)
    with pytest.raises(GeExecutionError, match="reduction 'mul'"):
        run_op(lambda d, i, u: ge.ScatterElements(d, i, u, reduction="mul"), data, torch.zeros(3, 4, dtype=torch.int64), data)
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(lambda d, i, u: ge.ScatterElements(d, i, u, axis=1), data, torch.full((3, 4), 4), data)


def test_gather_takes_axis_zero():
    x, idx = rand(5, 3), torch.tensor([[4, 0], [2, 2]])
    _close(run_op(ge.Gather, x, idx), x[idx])
    _close(run_op(ge.Gather, torch.tensor([7, 8, 9]), torch.tensor(1)), torch.tensor(8))


def test_gather_negative_index_support():
    x, idx = rand(5, 3), torch.tensor([-1, 0])
    _close(run_op(lambda a, i: ge.Gather(a, i, negative_index_support=True), x, idx), x[idx])
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(ge.Gather, x, idx)
    with pytest.raises(GeExecutionError, match="batch_dims"):
        run_op(lambda a, i: ge.Gather(a, i, batch_dims=1), x, torch.tensor([0]))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_v2_axis_input(axis):
    x, idx = rand(3, 4, 5), torch.tensor([[2, 0], [1, 1]])
    out = run_op(lambda a, i: ge.GatherV2(a, i, ints([axis])), x, idx)
    dim = axis % 3
    _close(out, torch.index_select(x, dim, idx.flatten()).reshape(*x.shape[:dim], 2, 2, *x.shape[dim + 1:]))


@pytest.mark.parametrize(
    "begin, end, axes, strides, begin_mask, end_mask, expected",
    [
        ([1], [3], [1], [1], 0, 0, lambda x: x[:, 1:3]),
        ([0, 1], [2147483647, 4], None, None, 0, 0, lambda x: x[0:, 1:4]),
        ([-3], [-1], [2], [2], 0, 0, lambda x: x[:, :, -3:-1:2]),
        ([4], [0], [1], [-2], 0, 0, lambda x: x[:, [4, 2]]),
        ([3, 2], [0, 4], None, None, 0b01, 0b11, lambda x: x[:, 2:]),
        ([1, 2], [2, 4], None, None, 0b10, 0b00, lambda x: x[1:2, :4]),
    ],
)
def test_strided_slice_v2(begin, end, axes, strides, begin_mask, end_mask, expected):
    x = rand(3, 5, 6)

    def build(t):
        return ge.StridedSliceV2(
            t, ints(begin), ints(end), None if axes is None else ints(axes), None if strides is None else ints(strides),
            begin_mask=begin_mask, end_mask=end_mask,
        )

    _close(run_op(build, x), expected(x).contiguous())


def test_strided_slice_v2_refuses_unimplemented_masks():
    with pytest.raises(GeExecutionError, match="shrink_axis_mask"):
        run_op(lambda t: ge.StridedSliceV2(t, ints([0]), ints([1]), None, None, shrink_axis_mask=1), rand(3))
    with pytest.raises(GeExecutionError, match="together with the axes"):
        run_op(lambda t: ge.StridedSliceV2(t, ints([0]), ints([1]), ints([0]), None, begin_mask=1), rand(3))


# --- comparisons, selection and integer arithmetic ---------------------------------------------

COMPARISONS = {
    "Equal": torch.eq, "NotEqual": torch.ne, "Less": torch.lt, "LessEqual": torch.le, "Greater": torch.gt,
    "GreaterEqual": torch.ge,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_broadcast_to_bool(op, dtype):
    x1 = torch.randint(-2, 3, (3, 1, 4)).to(dtype)
    x2 = torch.randint(-2, 3, (2, 1)).to(dtype)
    out = run_op(getattr(ge, op), x1, x2)
    assert out.dtype == torch.bool and torch.equal(out, COMPARISONS[op](x1, x2))


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_refuse_mixed_dtypes(op):
    with pytest.raises(GeExecutionError, match="share one dtype"):
        run_op(getattr(ge, op), torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))


@pytest.mark.parametrize("op, fn", [("LogicalAnd", torch.logical_and), ("LogicalOr", torch.logical_or)])
def test_logical_binaries(op, fn):
    x1, x2 = torch.rand(3, 4) > 0.5, torch.rand(4) > 0.5
    assert torch.equal(run_op(getattr(ge, op), x1, x2), fn(x1, x2))
    with pytest.raises(GeExecutionError, match="bool"):
        run_op(getattr(ge, op), torch.tensor([1, 0]), torch.tensor([1, 1]))


@pytest.mark.parametrize("op, fn", [("Maximum", torch.maximum), ("Minimum", torch.minimum)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_maximum_minimum(op, fn, dtype):
    x1, x2 = (torch.randn(2, 3) * 5).to(dtype), (torch.randn(3) * 5).to(dtype)
    _close(run_op(getattr(ge, op), x1, x2), fn(x1, x2), dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32], ids=str)
def test_floor_mod_takes_the_divisor_sign(dtype):
    x1 = torch.tensor([7, -7, 7, -7, 0]).to(dtype)
    x2 = torch.tensor([3, 3, -3, -3, 5]).to(dtype)
    out = run_op(ge.FloorMod, x1, x2)
    assert torch.equal(out, torch.tensor([1, 2, -2, -1, 0]).to(dtype))


def test_select_v2_broadcasts_all_three():
    condition, then, other = torch.rand(3, 1) > 0.5, rand(1, 4), rand(4)
    _close(run_op(ge.SelectV2, condition, then, other), torch.where(condition, then, other))
    with pytest.raises(GeExecutionError, match="condition must be bool"):
        run_op(ge.SelectV2, torch.tensor([1, 0]), rand(2), rand(2))
    with pytest.raises(GeExecutionError, match="share one dtype"):
        run_op(ge.SelectV2, torch.tensor([True]), rand(2), rand(2, dtype=torch.float16))


@pytest.mark.parametrize("op, fn", [("Cos", torch.cos), ("Sin", torch.sin)])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cos_sin(op, fn, dtype):
    x = rand(3, 5, dtype=dtype) * 4
    _close(run_op(getattr(ge, op), x), fn(x), dtype)


@pytest.mark.parametrize(
    "start, limit, delta",
    [(0, 7, 1), (2, 11, 3), (5, -4, -2), (0.5, 2.0, 0.25), (torch.tensor(0, dtype=torch.int32), torch.tensor(6), torch.tensor(1, dtype=torch.int32))],
    ids=str,
)
def test_range(start, limit, delta):
    start, limit, delta = (v if isinstance(v, torch.Tensor) else torch.tensor(v) for v in (start, limit, delta))
    expected = torch.arange(start.item(), limit.item(), delta.item(), dtype=torch.promote_types(torch.promote_types(start.dtype, limit.dtype), delta.dtype))
    out = run_op(ge.Range, start, limit, delta)
    assert out.dtype == expected.dtype and torch.equal(out, expected)


def test_range_refuses_a_zero_delta():
    with pytest.raises(GeExecutionError, match="delta"):
        run_op(ge.Range, torch.tensor(0), torch.tensor(3), torch.tensor(0))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumsum_exclusive_reverse(exclusive, reverse, axis):
    x = torch.randint(-5, 5, (3, 4))
    flipped = x.flip(axis) if reverse else x
    expected = flipped.cumsum(axis) - (flipped if exclusive else 0)
    expected = expected.flip(axis) if reverse else expected
    out = run_op(lambda t: ge.Cumsum(t, ints([axis]), exclusive=exclusive, reverse=reverse), x)
    assert out.dtype == x.dtype and torch.equal(out, expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cumsum_keeps_float_dtypes(dtype):
    x = rand(2, 6, dtype=dtype)
    _close(run_op(lambda t: ge.Cumsum(t, ints([1])), x), x.float().cumsum(1).to(dtype), dtype)


# --- log-softmax, losses and embedding gradients -----------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("axes", [[-1], [0]])
def test_log_softmax_v2(axes, dtype):
    x = rand(3, 5, dtype=dtype) * 3
    _close(run_op(lambda t: ge.LogSoftmaxV2(t, axes=axes), x), torch.log_softmax(x.float(), axes[0]).to(dtype), dtype)


@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_grad_takes_the_output(axis):
    x, dy = rand(3, 5), rand(3, 5)
    expected = _grad(lambda t: torch.log_softmax(t, axis), x, dy)
    _close(run_op(lambda g, y: ge.LogSoftmaxGrad(g, y, axis=[axis]), dy, torch.log_softmax(x, axis)), expected)


NLL_CASES = [((6, 5), (6,), False, -100), ((6, 5), (6,), True, 2), ((5,), (), True, -100)]


def _nll_inputs(x_shape, target_shape, weighted, ignore_index):
    x = torch.log_softmax(rand(*x_shape), -1)
    target = torch.randint(0, x_shape[-1], target_shape)
    if ignore_index >= 0:
        target.view(-1)[0] = ignore_index
    weight = torch.rand(x_shape[-1]) + 0.5 if weighted else None
    return x, target, weight


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("x_shape, target_shape, weighted, ignore_index", NLL_CASES, ids=str)
def test_nll_loss(x_shape, target_shape, weighted, ignore_index, reduction):
    x, target, weight = _nll_inputs(x_shape, target_shape, weighted, ignore_index)
    expected, expected_total = torch.ops.aten.nll_loss_forward(x, target, weight, _REDUCTION_ENUM[reduction], ignore_index)
    build = lambda *t: list(ge.NLLLoss(t[0], ge.Cast(t[1], dst_type=DataType.DT_INT32), t[2] if weighted else None, reduction=reduction, ignore_index=ignore_index))  # noqa: E731
    y, total = run_op(build, *([x, target, weight] if weighted else [x, target]))
    _close(y, expected)
    if reduction != "none":  # aten leaves total_weight at 0 without a reduction
        _close(total, expected_total)


_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("x_shape, target_shape, weighted, ignore_index", NLL_CASES, ids=str)
def test_nll_loss_grad(x_shape, target_shape, weighted, ignore_index, reduction):
    x, target, weight = _nll_inputs(x_shape, target_shape, weighted, ignore_index)
    weight = weight if weighted else torch.ones(x_shape[-1])
    _, total = torch.ops.aten.nll_loss_forward(x, target, weight, 1, ignore_index)
    y_grad = rand(*target_shape) if reduction == "none" else torch.tensor(0.7)
    expected = torch.ops.aten.nll_loss_backward(y_grad, x, target, weight, _REDUCTION_ENUM[reduction], ignore_index, total)
    build = lambda a, g, t, w, tw: ge.NLLLossGrad(a, g, t, w, tw, reduction=reduction, ignore_index=ignore_index)  # noqa: E731
    _close(run_op(build, x, y_grad, target.int(), weight, total), expected)


def test_nll_loss_refuses_out_of_range_targets_and_unknown_reductions():
    x = torch.log_softmax(rand(2, 3), -1)
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(lambda a, t: list(ge.NLLLoss(a, t, None)), x, torch.tensor([0, 3]))
    with pytest.raises(GeExecutionError, match="reduction"):
        run_op(lambda a, t: list(ge.NLLLoss(a, t, None, reduction="max")), x, torch.tensor([0, 1]))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("padding_idx, scale_grad_by_freq", [(-1, False), (2, False), (-1, True)])
def test_embedding_dense_grad(padding_idx, scale_grad_by_freq, dtype):
    indices = torch.tensor([[0, 2, 2], [5, 2, 1]])
    grad = rand(2, 3, 4, dtype=dtype)
    expected = torch.ops.aten.embedding_dense_backward(grad.float(), indices, 7, padding_idx, scale_grad_by_freq).to(dtype)
    build = lambda g, i: ge.EmbeddingDenseGrad(g, i, num_weights=7, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)  # noqa: E731
    _close(run_op(build, grad, indices), expected, dtype)


def test_embedding_dense_grad_refuses_out_of_range_indices():
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(lambda g, i: ge.EmbeddingDenseGrad(g, i, num_weights=3), rand(2, 4), torch.tensor([0, 3]))


# --- padding and advanced indexing -------------------------------------------------------------

@pytest.mark.parametrize("pad", [[0, 0, 0, 1, 0, 0], [1, 2], [0, -1, 0, -1], [2, 0, 1, 1]], ids=str)
def test_pad_v3_constant_as_torchair_orders_paddings(pad):
    # TorchAir turns aten's pad (from the last dim, (before, after) pairs) into one pair per dim
    # from the first, padding unnamed leading dims with zeros.
    x = rand(2, 3, 4)
    pairs = [(0, 0)] * (3 - len(pad) // 2) + [tuple(pad[i:i + 2]) for i in range(len(pad) - 2, -1, -2)]
    paddings = [p for pair in pairs for p in pair]
    _close(run_op(lambda t: ge.PadV3(t, ints(paddings), ge.Const(1.5)), x), F.pad(x, pad, value=1.5))


def test_pad_v3_non_contiguous_paddings_and_integer_x():
    x = torch.arange(6).reshape(2, 3)
    out = run_op(lambda t: ge.PadV3(t, ints([1, 0, 0, 2]), ge.Const(-1.0), paddings_contiguous=False), x)
    assert torch.equal(out, F.pad(x, [0, 2, 1, 0], value=-1))


def test_pad_v3_refuses_other_modes_and_inexact_values():
    with pytest.raises(GeExecutionError, match="mode 'reflect'"):
        run_op(lambda t: ge.PadV3(t, ints([1, 1]), None, mode="reflect"), rand(3))
    with pytest.raises(GeExecutionError, match="not a torch.int64 value"):
        run_op(lambda t: ge.PadV3(t, ints([1, 1]), ge.Const(0.5)), torch.arange(3))


@pytest.mark.parametrize(
    "mask, index_shapes",
    [([1], [(4,)]), ([0, 1], [(2, 3)]), ([1, 1], [(5,), (5,)]), ([1, 0, 1], [(2, 1), (3,)]), ([0, 1, 1], [(4,), (1,)])],
    ids=str,
)
def test_index_by_tensor_is_aten_index(mask, index_shapes):
    x = rand(3, 4, 5)
    indices = [torch.randint(-x.shape[d], x.shape[d], shape) for d, shape in zip([d for d, m in enumerate(mask) if m], index_shapes)]
    expected = torch.ops.aten.index(x, [i if m else None for m, i in _with_gaps(mask, indices)])
    _close(run_op(lambda t, *i: ge.IndexByTensor(t, list(i), indices_mask=mask), x, *indices), expected)


def _with_gaps(mask, indices):
    it = iter(indices)
    return [(m, next(it) if m else None) for m in mask]


def test_index_by_tensor_refuses_out_of_range_and_a_wrong_mask():
    x = rand(3, 4)
    with pytest.raises(GeExecutionError, match="out of range"):
        run_op(lambda t, i: ge.IndexByTensor(t, [i], indices_mask=[1]), x, torch.tensor([3]))
    with pytest.raises(GeExecutionError, match="marks 2 dims, 1 index"):
        run_op(lambda t, i: ge.IndexByTensor(t, [i], indices_mask=[1, 1]), x, torch.tensor([0]))


def test_every_op_in_the_table_is_tested_here():
    """Adding an op means adding its test: each GE_OPS entry is built somewhere in this file, in its
    sibling for the MoE routing ops, or for the HCCL collectives, which need a process group of
    several ranks, in tests/distributed."""
    here = Path(__file__).resolve().parent
    sources = [here / "test_ge_ops.py", here / "test_ge_ops_routing.py", here.parent / "distributed" / "test_ge_collectives.py"]
    source = "".join(path.read_text() for path in sources)
    untested = [op for op in GE_OPS if f"ge.{op}" not in source and f'"{op}"' not in source]
    assert untested == []

