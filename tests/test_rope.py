"""airfuse.rope / rope_backward: CPU numerics against the Hugging Face and GPT-J / Meta formulas,
opcheck, autograd, torch.compile, bad input."""

import pytest
import torch

from reference import IR_DTYPES, TOLERANCES, rope_backward_reference, rope_reference

rope = torch.ops.airfuse.rope
rope_backward = torch.ops.airfuse.rope_backward

ALL_DTYPES = IR_DTYPES + (torch.float64,)


def _table_dtypes(dtype):
    return [dtype] if dtype in (torch.float32, torch.float64) else [dtype, torch.float32]


def _angles(seq, head_dim, layout):
    """Rotation angles per position and dim, in the layout each model family uses: the D/2
    frequencies repeated as two halves (Hugging Face) or each one twice in a row (GPT-J / Meta)."""
    inv_freq = 1.0 / 10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq)
    return torch.cat((freqs, freqs), -1) if layout == "half" else freqs.repeat_interleave(2, -1)


def hf_rotate_half(x):
    """Hugging Face's rotate_half: the second half negated, then the first half."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def gptj_rotate_every_two(x):
    """GPT-J's rotate_every_two: each (even, odd) pair becomes (-odd, even)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


ROTATIONS = {"half": hf_rotate_half, "interleave": gptj_rotate_every_two}


def meta_rope(x, pair_angles):
    """Meta LLaMA's rotary embedding: adjacent pairs as complex numbers, times e^(i·angle)."""
    pairs = torch.view_as_complex(x.double().unflatten(-1, (-1, 2)).contiguous())
    return torch.view_as_real(pairs * torch.polar(torch.ones_like(pair_angles), pair_angles)).flatten(-2)


# (x shape, cos/sin shape): LLM layouts [B, H, S, D] and [B, S, H, D] with head dims 64 and 128,
# a hidden of 14336 (one head spanning it), and small odd shapes; the last, [B, H, S, D] with
# S = 37, runs the CPU kernel's 16-token tiles (each visited once per head) over two batches, the
# last tile of each partial.
SHAPES = [
    ((2, 8, 16, 64), (1, 1, 16, 64)),
    ((2, 8, 16, 128), (2, 1, 16, 128)),
    ((2, 16, 8, 128), (2, 16, 1, 128)),
    ((1, 3, 14336), (1, 3, 14336)),
    ((3, 5, 2), (1, 5, 2)),
    ((7, 6), (7, 6)),
    ((3, 1, 5, 10), (1, 1, 5, 10)),
    ((2,), (2,)),
    ((2, 3, 37, 8), (2, 1, 37, 8)),
]


@pytest.mark.parametrize("mode", ROTATIONS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("x_shape, table_shape", SHAPES, ids=str)
def test_matches_hugging_face_and_gpt_j_formulas(x_shape, table_shape, dtype, mode):
    """x * cos + rotate(x) * sin with Hugging Face's rotate_half (half) or GPT-J's
    rotate_every_two (interleave), tables in each family's layout, one position per table row."""
    head_dim = table_shape[-1]
    angles = _angles(torch.Size(table_shape).numel() // head_dim, head_dim, mode).reshape(table_shape)
    for table_dtype in _table_dtypes(dtype):
        x = torch.randn(x_shape, dtype=dtype)
        cos, sin = angles.cos().to(table_dtype), angles.sin().to(table_dtype)
        y = rope(x, cos, sin, mode)
        assert y.dtype == dtype and y.shape == x.shape and y.is_contiguous()
        x64, cos64, sin64 = x.double(), cos.double(), sin.double()
        expected = x64 * cos64 + ROTATIONS[mode](x64) * sin64
        torch.testing.assert_close(y.double(), expected, **TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("batch, seq, heads, head_dim", [(2, 16, 8, 64), (1, 8, 4, 128), (1, 3, 1, 14336), (3, 5, 2, 2)])
def test_interleave_mode_matches_meta_complex_rotation(batch, seq, heads, head_dim, dtype):
    """x [B, S, H, D] as Meta's LLaMA lays it out; cos/sin [1, S, 1, D], each angle twice in a row,
    in full precision (float32, float64 for float64 x), so they encode the angles to well within
    x's tolerance."""
    angles = _angles(seq, head_dim, "interleave")[None, :, None, :]
    table_dtype = torch.float64 if dtype == torch.float64 else torch.float32
    x = torch.randn(batch, seq, heads, head_dim, dtype=dtype)
    y = rope(x, angles.cos().to(table_dtype), angles.sin().to(table_dtype), "interleave")
    torch.testing.assert_close(y.double(), meta_rope(x, angles[..., ::2]), **TOLERANCES[dtype])


def test_modes_differ_and_default_is_half():
    x, cos, sin = torch.randn(2, 3, 8), torch.randn(1, 3, 8), torch.randn(1, 3, 8)
    assert torch.equal(rope(x, cos, sin), rope(x, cos, sin, "half"))
    assert not torch.allclose(rope(x, cos, sin, "half"), rope(x, cos, sin, "interleave"))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_non_contiguous_inputs(dtype):
    """q as attention code makes it: a [B, S, H, D] projection viewed as [B, H, S, D]."""
    x = torch.randn(2, 5, 4, 64, dtype=dtype).transpose(1, 2)
    cos = torch.randn(1, 64, 5, dtype=dtype).transpose(1, 2)[:, None]
    sin = torch.randn(1, 1, 5, 64, dtype=dtype)
    assert not x.is_contiguous() and not cos.is_contiguous()
    for mode in ("half", "interleave"):
        y = rope(x, cos, sin, mode)
        assert y.is_contiguous()
        torch.testing.assert_close(y.double(), rope_reference(x, cos, sin, mode), **TOLERANCES[dtype])


@pytest.mark.parametrize("mode", ["half", "interleave"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("x_shape, table_shape", SHAPES[::2], ids=str)
def test_backward_matches_float64_autograd(x_shape, table_shape, dtype, mode):
    for table_dtype in _table_dtypes(dtype):
        dy = torch.randn(x_shape, dtype=dtype)
        cos, sin = torch.randn(table_shape, dtype=table_dtype), torch.randn(table_shape, dtype=table_dtype)
        dx = rope_backward(dy, cos, sin, mode)
        assert dx.dtype == dtype and dx.shape == dy.shape
        # Each dx element sums two products: one more rounding than the forward.
        tol = {k: 2 * v for k, v in TOLERANCES[dtype].items()}
        torch.testing.assert_close(dx.double(), rope_backward_reference(dy, cos, sin, mode), **tol)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_opcheck(dtype):
    for table_dtype in _table_dtypes(dtype):
        x = torch.randn(2, 3, 5, 8, dtype=dtype, requires_grad=True)
        cos, sin = torch.randn(1, 3, 5, 8, dtype=table_dtype), torch.randn(1, 3, 5, 8, dtype=table_dtype)
        for mode in ("half", "interleave"):
            torch.library.opcheck(rope.default, (x, cos, sin, mode))
            torch.library.opcheck(rope_backward.default, (torch.randn_like(x), cos, sin, mode))


@pytest.mark.parametrize("mode", ["half", "interleave"])
def test_gradcheck_float64(mode):
    x = torch.randn(2, 3, 4, 6, dtype=torch.float64, requires_grad=True)
    cos, sin = torch.randn(1, 3, 1, 6, dtype=torch.float64), torch.randn(1, 3, 1, 6, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda t: rope(t, cos, sin, mode), (x,))


@pytest.mark.parametrize("table", ["cos", "sin"])
def test_tables_requiring_grad_are_refused(table):
    x = torch.randn(2, 4, 8, requires_grad=True)
    tables = {"cos": torch.randn(1, 4, 8), "sin": torch.randn(1, 4, 8)}
    tables[table].requires_grad_()
    message = rf"airfuse\.rope: gradients for {table} are not provided, but {table} requires grad"
    with pytest.raises(RuntimeError, match=message):
        rope(x, tables["cos"], tables["sin"])
    with pytest.raises(Exception, match=message):
        torch.compile(rope, backend="aot_eager", fullgraph=True)(x, tables["cos"], tables["sin"])
    with torch.no_grad():  # no autograd, nothing refused
        rope(x, tables["cos"], tables["sin"])


def _model(x, cos, sin):
    q = rope(x, cos, sin, "interleave")
    return (q * q.sigmoid()).sum(-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_compiled_forward_and_backward_equal_eager(dtype):
    x = torch.randn(2, 4, 6, 32, dtype=dtype)
    cos, sin = torch.randn(1, 1, 6, 32, dtype=dtype), torch.randn(1, 1, 6, 32, dtype=dtype)
    results = []
    for fn in (_model, torch.compile(_model, backend="aot_eager", fullgraph=True)):
        xi = x.clone().requires_grad_()
        out = fn(xi, cos, sin)
        out.backward(torch.ones_like(out))
        results.append((out, xi.grad))
    for eager, compiled in zip(*results, strict=True):
        torch.testing.assert_close(compiled, eager, **TOLERANCES[dtype])


# --- bad input: the same clear error in eager and while tracing for torch.compile (fake) ------

def _args(x_shape=(2, 4, 8), table_shape=(1, 4, 8), dtype=torch.float32, table_dtype=None, mode="half"):
    table_dtype = table_dtype or dtype
    return torch.randn(x_shape, dtype=dtype), torch.randn(table_shape, dtype=table_dtype), torch.randn(table_shape, dtype=table_dtype), mode


BAD_INPUTS = [
    pytest.param(lambda: _args((2, 4, 7), (1, 4, 7)), RuntimeError, r"x's last dim must be even \(it is rotated in pairs\), got 7", id="odd-last-dim"),
    pytest.param(lambda: _args((2, 4, 8), (4, 8)), RuntimeError, r"cos must have x's rank and last dim, every other dim x's or 1 \(x has shape \[2, 4, 8\]\), got \[4, 8\]", id="table-rank"),
    pytest.param(lambda: _args((2, 4, 8), (1, 4, 4)), RuntimeError, r"cos must have x's rank and last dim.*got \[1, 4, 4\]", id="table-last-dim"),
    pytest.param(lambda: _args((2, 4, 8), (1, 3, 8)), RuntimeError, r"cos must have x's rank and last dim.*got \[1, 3, 8\]", id="table-broadcast"),
    pytest.param(lambda: _args((2, 4, 8), (2, 4, 8))[:2] + (torch.randn(1, 4, 8), "half"), RuntimeError, r"sin must have cos's shape \[2, 4, 8\], got \[1, 4, 8\]", id="sin-shape"),
    pytest.param(lambda: _args(mode="rotate_half"), ValueError, r"mode must be one of 'half', 'interleave', got 'rotate_half'", id="bad-mode"),
    pytest.param(lambda: _args(mode="Half"), ValueError, r"mode must be one of 'half', 'interleave', got 'Half'", id="mode-case"),
    pytest.param(lambda: _args(dtype=torch.float16, table_dtype=torch.bfloat16), TypeError, r"cos has dtype bfloat16 with x=float16; expected one of float16, float32", id="table-dtype"),
    pytest.param(lambda: _args()[:2] + (torch.randn(1, 4, 8, dtype=torch.float16), "half"), TypeError, r"sin has dtype float16 with x=float32, cos=float32; expected one of float32", id="sin-dtype"),
    pytest.param(lambda: (torch.ones(2, 4, 8, dtype=torch.int32),) + _args()[1:], TypeError, r"x has dtype int32", id="int-x"),
    pytest.param(lambda: (torch.tensor(1.0), torch.tensor(1.0), torch.tensor(1.0), "half"), RuntimeError, r"x must have at least 1 dimension, got a 0-d tensor", id="0-d-x"),
    pytest.param(lambda: _args((0, 4, 8), (1, 4, 8)), RuntimeError, r"x is empty \(shape \[0, 4, 8\]\)", id="empty-x"),
    pytest.param(lambda: (None,) + _args()[1:], TypeError, r"x must be a Tensor, got NoneType", id="none-x"),
    pytest.param(lambda: _args()[:1] + (None,) + _args()[2:], TypeError, r"cos must be a Tensor, got NoneType", id="none-cos"),
    pytest.param(lambda: _args()[:2] + (None, "half"), TypeError, r"sin must be a Tensor, got NoneType", id="none-sin"),
]


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_in_eager(make_args, error, message):
    with pytest.raises(error, match=r"airfuse\.rope: " + message):
        rope(*make_args())


@pytest.mark.parametrize("make_args, error, message", BAD_INPUTS)
def test_bad_input_is_refused_while_tracing(make_args, error, message):
    x, cos, sin, mode = make_args()
    compiled = torch.compile(lambda a, b, c: rope(a, b, c, mode), backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"airfuse\.rope: " + message):
        compiled(x, cos, sin)


def test_bad_input_to_backward_is_refused():
    dy, cos, sin, _ = _args()
    with pytest.raises(RuntimeError, match=r"airfuse\.rope_backward: cos must have dy's rank and last dim"):
        rope_backward(dy, cos[0], sin[0])
    with pytest.raises(RuntimeError, match=r"airfuse\.rope_backward: dy's last dim must be even"):
        rope_backward(torch.randn(2, 4, 5), torch.randn(1, 4, 5), torch.randn(1, 4, 5))
    with pytest.raises(ValueError, match=r"airfuse\.rope_backward: mode must be one of 'half', 'interleave', got 'none'"):
        rope_backward(dy, cos, sin, "none")
    with pytest.raises(TypeError, match=r"airfuse\.rope_backward: sin has dtype float64"):
        rope_backward(dy, cos, sin.double())


def test_device_mismatch_is_refused():
    x, cos, sin, _ = _args()
    with pytest.raises(RuntimeError, match=r"airfuse\.rope: sin is on meta but x is on cpu"):
        rope(x, cos, sin.to("meta"))
