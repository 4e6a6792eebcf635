"""The fused C++ CPU kernels (csrc/cpu) behind every torch.ops.airfuse.* op: numerics against the
float64 reference for every op and dtype combination, in every instruction-set variant this CPU
runs, on odd row lengths (not multiples of any vector width) and non-contiguous inputs; which
variant runs by default and how one is forced; opcheck on non-contiguous inputs; the same error
message from the eager kernel and the fake impl for the same bad input; the error when the
library is missing; airfuse_cpu.rms_norm_backward_add against rms_norm_backward then add_."""

import functools
import importlib
import math
import os
import subprocess
import sys

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from airfuse import cpu_kernels
from airfuse.ops import ALL_OPS
from reference import TOLERANCES

# Odd lengths put every row end, and for add/gelu the flat end, in a partial vector.
SHAPES = [(1, 6), (3, 34), (2, 3, 1030)]


def _tensor(shape, dtype, *, positive=False):
    values = torch.rand(shape, dtype=torch.float64) + 0.5 if positive else torch.randn(shape, dtype=torch.float64)
    return values.to(dtype)


def _strided(t):
    """t's values in a non-contiguous layout: last two dims transposed in memory, or every other element."""
    if t.dim() >= 2:
        return t.mT.contiguous().mT
    return torch.stack([t, t], -1)[..., 0]


def _inputs(op, combo, shape, tensor=_tensor):
    """Valid inputs of op (tensors by IR name, then attrs) for rows x hidden `shape`, their values
    from tensor(shape, dtype, positive=...)."""
    *rows, hidden = shape
    dt = combo[op.tensor_args[0]]
    if op.name in ("rms_norm", "add_rms_norm", "rms_norm_backward"):
        x, gamma = tensor(shape, dt), tensor([hidden], combo["gamma"], positive=True)
        if op.name == "rms_norm":
            return {"x": x, "gamma": gamma, "epsilon": 1e-5}
        if op.name == "add_rms_norm":
            return {"x1": x, "x2": tensor(shape, dt), "gamma": gamma, "epsilon": 1e-5}
        rstd = torch.rsqrt(x.double().square().mean(-1, keepdim=True) + 1e-5).to(combo["rstd"])
        return {"dy": tensor(shape, dt), "x": x, "rstd": rstd, "gamma": gamma}
    if op.name.startswith("swiglu"):
        x = tensor([*rows, 2 * hidden], dt)
        return {"dy": tensor(shape, dt), "x": x, "dim": -1} if op.name.endswith("backward") else {"x": x, "dim": -1}
    if op.name.startswith("rope"):
        # Tables broadcast over every leading dim but the last.
        table = [1] * (len(rows) - 1) + [rows[-1], hidden] if rows else [hidden]
        rotated = "dy" if op.name.endswith("backward") else "x"
        return {rotated: tensor(shape, dt), "cos": tensor(table, combo["cos"]), "sin": tensor(table, combo["sin"]), "mode": "half"}
    tensors = {name: tensor(shape, combo[name]) for name in op.tensor_args}
    return {**tensors, **{attr.name: attr.default for attr in op.attrs}}


def _call(op, inputs):
    out = getattr(torch.ops.airfuse, op.name)(*inputs.values())
    return out if isinstance(out, tuple) else (out,)


def _reference(op, inputs):
    """The Python math the C++ kernel replaced (airfuse/ops/<op>.py), run in float64."""
    if op.name == "add_rms_norm":
        # By contract the norm reads the sum rounded to x1's dtype: so does its reference.
        x = (inputs["x1"].double() + inputs["x2"].double()).to(inputs["x1"].dtype)
        return (*_reference(ALL_OPS["rms_norm"], {"x": x, "gamma": inputs["gamma"], "epsilon": inputs["epsilon"]}), x.double())
    module = importlib.import_module(f"airfuse.ops.{op.name.removesuffix('_backward')}")
    doubled = [v.double() if isinstance(v, torch.Tensor) else v for v in inputs.values()]
    out = getattr(module, f"{op.name}_reference")(*doubled)
    return out if isinstance(out, tuple) else (out,)


def _variants(op, inputs):
    """The attr values worth covering besides the defaults (both rope modes and GELU forms, a middle swiglu dim)."""
    yield inputs
    for attr in op.attrs:
        for choice in attr.choices:
            if choice != inputs[attr.name]:
                yield {**inputs, attr.name: choice}
    if op.name.startswith("swiglu") and inputs["x"].dim() == 3:
        # dim 1 of a [2, 3, 2h] x: gate and up halves are whole rows apart.
        x = _tensor([2, 6, inputs["x"].shape[-1]], inputs["x"].dtype)
        yield {"dy": _tensor([2, 3, x.shape[-1]], x.dtype), "x": x, "dim": 1} if "dy" in inputs else {"x": x, "dim": 1}


@pytest.mark.parametrize("capability", cpu_kernels.capabilities())
@pytest.mark.parametrize("op_name", sorted(ALL_OPS))
def test_every_dtype_combination_matches_the_float64_reference(op_name, capability):
    with cpu_kernels.use_capability(capability):
        assert cpu_kernels.capability() == capability
        _check_against_reference(ALL_OPS[op_name])


def _check_against_reference(op):
    op_name = op.name
    for combo in op.combos(reference=True):
        for shape in SHAPES:
            for inputs in _variants(op, _inputs(op, combo, shape)):
                expected = _reference(op, inputs)
                for layout in ("contiguous", "strided"):
                    given = inputs if layout == "contiguous" else {k: _strided(v) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
                    for name, got, want in zip((p.name for p in op.outputs), _call(op, given), expected, strict=True):
                        assert got.dtype == combo[name] and got.shape == want.shape and got.is_contiguous(), (combo, shape, name)
                        torch.testing.assert_close(
                            got.double(), want, **TOLERANCES[got.dtype], msg=lambda m: f"{op_name} {combo} {shape} {layout} {name}: {m}"
                        )


def _bfloat16_edge_values(shape, generator, *, specials=False):
    """bfloat16 values whose float32 products include exact rounding ties (8-bit x 8-bit
    significands) and float32 denormals, never overflowing; with specials, the first slice of dim 0
    also holds zeros, infinities, NaN and values whose products overflow (a block holding a NaN
    takes another path than one without, so the other slices keep none)."""
    significand = 1 + torch.randint(0, 128, shape, generator=generator) / 128
    # Half tiny (products of two land among float32's denormals), half ordinary.
    tiny = torch.randint(0, 2, shape, generator=generator).bool()
    exponent = torch.where(tiny, torch.randint(-75, -55, shape, generator=generator), torch.randint(-20, 63, shape, generator=generator)).double()
    sign = torch.randint(0, 2, shape, generator=generator) * 2 - 1
    values = (sign * significand * 2.0**exponent).to(torch.bfloat16)
    if specials:
        special = torch.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 3e38], dtype=torch.bfloat16)
        picks = torch.randint(0, 4 * len(special), shape[1:], generator=generator)
        values[0] = torch.where(picks < len(special), special[picks.clamp(max=len(special) - 1)], values[0])
    return values


@pytest.mark.parametrize("capability", cpu_kernels.capabilities())
def test_bfloat16_stores_round_to_nearest_even_bit_for_bit(capability):
    """The kernels round float32 results to bfloat16 with their own code on some variants (AVX2 and
    AVX512 round two vectors in 16-bit lanes): rope's float32 products in both modes, and add's
    float32 sums (the elementwise driver's stores, shared with the activations), rounded once must
    equal torch's float32 math rounded by .to(bfloat16), bit for bit, on ties, denormals, inf and NaN."""
    generator = torch.Generator().manual_seed(0)
    x = _bfloat16_edge_values((4, 16, 2 * 61), generator, specials=True)
    cos, sin, y = (_bfloat16_edge_values((4, 16, 2 * 61), generator) for _ in range(3))
    x1, x2 = x.float().chunk(2, -1)
    c1, c2 = cos.float().chunk(2, -1)
    s1, s2 = sin.float().chunk(2, -1)
    u, v, cu, cv, su, sv = (t.float()[..., k::2] for t in (x, cos, sin) for k in (0, 1))
    with cpu_kernels.use_capability(capability):
        rotated, summed = torch.ops.airfuse.rope(x, cos, sin, "half"), torch.ops.airfuse.add(x, y)
        paired = torch.ops.airfuse.rope(x, cos, sin, "interleave")
    _assert_same_bits(rotated, torch.cat([x1 * c1 - x2 * s1, x2 * c2 + x1 * s2], -1).to(torch.bfloat16))
    _assert_same_bits(paired, torch.stack([u * cu - v * su, v * cv + u * sv], -1).flatten(-2).to(torch.bfloat16))
    _assert_same_bits(summed, (x.float() + y.float()).to(torch.bfloat16))


@pytest.mark.parametrize("capability", cpu_kernels.capabilities())
def test_norm_bfloat16_stores_round_to_nearest_even_bit_for_bit(capability):
    """rms_norm and add_rms_norm round their float32 y (and add_rms_norm its sum x) with the same
    stores, natively on AVX512-BF16: given the kernel's own rstd, y must be torch's float32
    (x * rstd) * gamma rounded by .to(bfloat16), bit for bit, on ties and denormals. x is scaled
    (exactly) so that no row's sum of squares overflows, which would zero the row."""
    generator = torch.Generator().manual_seed(1)
    x1, x2 = (_bfloat16_edge_values((3, 8, 2 * 61), generator) * 2.0**-40 for _ in range(2))
    gamma = _bfloat16_edge_values((2 * 61,), generator)

    def normalized(x, rstd):
        return (x.float() * rstd.reshape(*x.shape[:-1], 1)) * gamma.float()

    with cpu_kernels.use_capability(capability):
        y, rstd = torch.ops.airfuse.rms_norm(x1, gamma, 1e-6)
        y_add, rstd_add, x = torch.ops.airfuse.add_rms_norm(x1, x2, gamma, 1e-6)
    _assert_same_bits(y, normalized(x1, rstd).to(torch.bfloat16))
    _assert_same_bits(x, (x1.float() + x2.float()).to(torch.bfloat16))
    _assert_same_bits(y_add, normalized(x, rstd_add).to(torch.bfloat16))


def _assert_same_bits(got, expected):
    nan = expected.isnan()
    assert torch.equal(got.isnan(), nan)
    bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
    assert got.dtype == expected.dtype and torch.equal(got.view(bits)[~nan], expected.view(bits)[~nan])


@pytest.mark.parametrize("capability", cpu_kernels.capabilities())
def test_rms_norm_backward_add_is_rms_norm_backward_then_atens_add_bit_for_bit(capability):
    """airfuse_cpu.rms_norm_backward_add (add_rms_norm's eager backward) promises what
    rms_norm_backward then ATen's dx.add_(dx_residual) give: dx rounded to its dtype, the sum in
    float rounded once. In every variant, dtype combination and row length, with a contiguous and a
    strided residual; in bfloat16 the residual holds ties, denormals, inf and NaN."""
    generator = torch.Generator().manual_seed(0)
    op = ALL_OPS["rms_norm_backward"]
    with cpu_kernels.use_capability(capability):
        for combo in op.combos(reference=True):
            for shape in [*SHAPES, (2, 4096)]:
                inputs = _inputs(op, combo, shape)
                dx, dgamma = torch.ops.airfuse.rms_norm_backward(*inputs.values())
                dt = combo["dx"]
                residual = _bfloat16_edge_values(shape, generator, specials=True) if dt == torch.bfloat16 else _tensor(shape, dt)
                for given in (residual, _strided(residual)):
                    fused_dx, fused_dgamma = torch.ops.airfuse_cpu.rms_norm_backward_add(*inputs.values(), given)
                    _assert_same_bits(fused_dx, dx.clone().add_(given))
                    _assert_same_bits(fused_dgamma, dgamma)


def _float32_rounding_edges(shape, generator):
    """float32 values hard to round to bfloat16 or float16: low bits at ties (0x8000 of 16 dropped
    bits, 0x1000 of 13) and one off, over the exponent range (denormals of either, values above
    float16's) up to 2^124, so that 8 times them stays finite."""
    high = torch.randint(0, 1 << 16, shape, generator=generator)
    lows = torch.tensor([0x8000, 0x7FFF, 0x8001, 0x1000, 0x0FFF, 0x1001, 0x0000, 0xFFFF])
    low = lows[torch.randint(0, len(lows), shape, generator=generator)]
    bits = (high << 16) | low
    bits = torch.where((bits >> 23) & 0xFF > 0xFB, bits & ~(1 << 30), bits)
    return torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)


@pytest.mark.parametrize("capability", cpu_kernels.capabilities())
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_rms_norm_backward_add_rounds_dx_as_rms_norm_backward_stores_it(dtype, capability):
    """rms_norm_backward_add rounds dx to x's dtype in registers before adding: on chosen dx values
    (x = 0 and rstd = 1 make dx = dy * gamma, exact with dy a power of 2 and gamma a float32) its
    rounding must be the store's, bit for bit, on ties, denormals, overflow (the largest float
    rounds to inf), and NaN (row 0)."""
    generator = torch.Generator().manual_seed(0)
    rows, d = 64, 1030
    gamma = _float32_rounding_edges((d,), generator)
    gamma[:8] = torch.finfo(torch.float32).max / 8
    sign = torch.randint(0, 2, (rows, d), generator=generator) * 2 - 1
    dy = 2.0 ** torch.randint(-3, 4, (rows, d), generator=generator) * sign
    dy[:, :8] = 8.0 * sign[:, :8]
    dy[0, ::7] = float("nan")
    dy = dy.to(dtype)
    x, rstd = torch.zeros(rows, d, dtype=dtype), torch.ones(rows, 1)
    # Half the residual 0, so that the result is the rounded dx itself.
    residual = torch.where(torch.rand(rows, d, generator=generator) < 0.5, 0.0, torch.randn(rows, d, generator=generator)).to(dtype)
    with cpu_kernels.use_capability(capability):
        dx, dgamma = torch.ops.airfuse.rms_norm_backward(dy, x, rstd, gamma)
        fused_dx, fused_dgamma = torch.ops.airfuse_cpu.rms_norm_backward_add(dy, x, rstd, gamma, residual)
    assert dx[0].isnan().all() and not dx[1:].isnan().any() and dx[1:].isinf().any()
    _assert_same_bits(fused_dx, dx.clone().add_(residual))
    _assert_same_bits(fused_dgamma, dgamma)


def test_rms_norm_backward_add_refuses_a_residual_it_cannot_read():
    op = ALL_OPS["rms_norm_backward"]
    inputs = _inputs(op, op.combos(reference=False)[0], (3, 8))
    for residual in (torch.randn(8), torch.randn(3, 8, dtype=torch.float64)):
        with pytest.raises(RuntimeError, match=r"rms_norm_backward_add: dx_residual must have x's shape and dtype"):
            torch.ops.airfuse_cpu.rms_norm_backward_add(*inputs.values(), residual)


@functools.cache
def _pool(dtype, positive):
    # A prime number of values: repeated, no row of any length repeats the one before it.
    return _tensor([1_000_003], dtype, positive=positive)


def _pooled(shape, dtype, *, positive=False):
    """As _tensor, but cheap at tens of MB: a fixed random pool's values, repeated."""
    n, pool = math.prod(shape), _pool(dtype, positive)
    return pool.repeat(-(-n // pool.numel()))[:n].view(shape)


def _bits(t):
    return t.view({4: torch.int32, 2: torch.int16}[t.element_size()])


_PIECES = 2


def _streaming_inputs(op, combo):
    """_inputs of op at [rows, 8, 1030] tensors, and rows: rows such that the tensors that have
    them (the kernels count those) make 1.05 stream_bytes(op.name), so a call on them streams and one on
    a piece of _PIECES does not. Rows of 1030 start at every alignment (as do swiglu's halves and
    rope's second halves) and end in a partial block; a few NaN inputs send bfloat16 blocks
    through the NaN rounding path."""
    shape = lambda rows: (rows, 8, 1030)  # noqa: E731
    probe = _inputs(op, combo, shape(2), _pooled)
    tensors = [t for t in (*probe.values(), *_call(op, probe)) if isinstance(t, torch.Tensor) and t.shape[0] == 2]
    rows = math.ceil(1.05 * cpu_kernels.stream_bytes(op.name) / (sum(t.nbytes for t in tensors) / 2))
    inputs = _inputs(op, combo, shape(rows), _pooled)
    next(v for v in inputs.values() if isinstance(v, torch.Tensor)).view(-1)[::99_991] = float("nan")
    return inputs, rows


def _assert_streamed_rows_equal_pieces(call, inputs, rows, what):
    """Each output of call(inputs) with `rows` rows equals, bit for bit, the concatenated outputs of
    call on _PIECES pieces of the inputs' rows, in every variant but DEFAULT (which never streams)."""
    for capability in cpu_kernels.capabilities()[1:]:
        with cpu_kernels.use_capability(capability):
            whole = call(inputs)
            split = [call({k: v.tensor_split(_PIECES)[i] if isinstance(v, torch.Tensor) and v.shape[0] == rows else v
                           for k, v in inputs.items()}) for i in range(_PIECES)]
        for k, out in enumerate(whole):
            if out.shape[0] == rows:  # not rms_norm_backward's dgamma, a sum over rows
                assert torch.equal(_bits(out), _bits(torch.cat([s[k] for s in split]))), (what, capability, k)


@pytest.mark.parametrize("op_name", sorted(ALL_OPS))
def test_calls_above_the_streaming_size_give_the_same_bits(op_name):
    """A call moving stream_bytes(op_name) or more writes its outputs with streaming stores on AVX2 and
    AVX512 (full vectors at aligned addresses, the rest normal stores: csrc/cpu/vec_io.h; the
    activations in float32 only), which must change no bit: its rows must equal the same rows
    computed by calls below that size, in every output dtype."""
    op = ALL_OPS[op_name]
    # One combination per dtype of the first input (the stores' dtype); float64 never streams.
    for combo in {c[op.tensor_args[0]]: c for c in op.combos(reference=False)}.values():
        inputs, rows = _streaming_inputs(op, combo)
        _assert_streamed_rows_equal_pieces(lambda i: _call(op, i), inputs, rows, combo)


def test_rms_norm_backward_add_above_the_streaming_size_gives_the_same_bits():
    """add_rms_norm's eager backward kernel (rms_norm_backward adding the residual's gradient as
    it stores dx) streams its stores too: the same check."""
    from airfuse.ops.add_rms_norm import _rms_norm_backward_add

    op = ALL_OPS["rms_norm_backward"]
    for combo in {c["dy"]: c for c in op.combos(reference=False)}.values():
        inputs, rows = _streaming_inputs(op, combo)
        inputs["dx_residual"] = _pooled(inputs["dy"].shape, combo["dy"])
        _assert_streamed_rows_equal_pieces(lambda i: _rms_norm_backward_add(*i.values()), inputs, rows, combo)


def test_the_default_variant_is_atens_choice_and_aten_cpu_capability_lowers_it():
    assert cpu_kernels.capabilities()[0] == "DEFAULT"
    aten = torch.backends.cpu.get_cpu_capability()
    # On x86-64 this build has DEFAULT, AVX2 and AVX512: ATen's choice is one of them when this CPU runs it.
    assert cpu_kernels.capability() == (aten if aten in cpu_kernels.capabilities() else cpu_kernels.capabilities()[-1])
    lowered = cpu_kernels.capabilities()[max(0, len(cpu_kernels.capabilities()) - 2)]
    script = "import airfuse.cpu_kernels as k, torch; print(torch.backends.cpu.get_cpu_capability(), k.capability())"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": lowered.lower()}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [lowered, lowered]


def test_an_unknown_variant_is_refused_with_the_ones_built():
    with pytest.raises(RuntimeError, match=r"set_capability: no variant named 'SSE9' in this build \(DEFAULT"):
        with cpu_kernels.use_capability("SSE9"):
            pass
    assert cpu_kernels.capability() in cpu_kernels.capabilities()


@pytest.mark.parametrize("op_name", sorted(ALL_OPS))
def test_opcheck_on_non_contiguous_inputs(op_name):
    op = ALL_OPS[op_name]
    inputs = _inputs(op, op.combos(reference=False)[0], (3, 10))
    args = [_strided(v) if isinstance(v, torch.Tensor) else v for v in inputs.values()]
    torch.library.opcheck(getattr(torch.ops.airfuse, op_name).default, tuple(args), test_utils=("test_schema", "test_faketensor"))


def _bad_inputs(op):
    """Bad variants of valid inputs, derived from the op definition: a dtype no combination has, a
    shorter last dim on the second tensor, an empty first tensor, and an out-of-range value per attr."""
    inputs = _inputs(op, op.combos(reference=False)[0], (3, 8))
    names = op.tensor_args
    yield {**inputs, names[-1]: inputs[names[-1]].to(torch.int32)}
    if len(names) > 1:
        yield {**inputs, names[0]: inputs[names[0]].to(torch.float64)}
        yield {**inputs, names[1]: inputs[names[1]][..., :-2]}
    yield {**inputs, names[0]: inputs[names[0]][:0]}
    bad_attr = {"Float": -1.0, "Int": 7, "Str": "bogus"}
    for attr in op.attrs:
        yield {**inputs, attr.name: bad_attr[attr.ge_type]}


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001  (the point is comparing whatever each path raises)
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("op_name", sorted(ALL_OPS))
def test_eager_and_fake_refuse_bad_input_with_the_same_message(op_name):
    op = ALL_OPS[op_name]
    fn = getattr(torch.ops.airfuse, op_name)
    for inputs in _bad_inputs(op):
        eager = _error(lambda: fn(*inputs.values()))
        with FakeTensorMode() as mode:
            fake_args = [mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for v in inputs.values()]
            fake = _error(lambda: fn(*fake_args))
        assert eager is not None and op.public_name in eager[1], (op_name, eager)
        assert eager == fake, (op_name, eager, fake)


def test_a_missing_library_is_named_with_how_to_build_it(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "_loaded", False)
    with pytest.raises(RuntimeError, match=r"airfuse\.add: airfuse's CPU kernels .*libairfuse_cpu\.so.* run `make setup twin`"):
        torch.ops.airfuse.add(torch.ones(2), torch.ones(2))


@pytest.mark.parametrize("op_name", sorted(ALL_OPS))
def test_bad_input_is_refused_every_time_after_good_input_passed(op_name):
    """A kernel skips the checks for an argument signature that already passed (dtypes, shapes,
    devices, attrs): every bad input differs from the good one in it, and is never remembered."""
    op = ALL_OPS[op_name]
    fn = getattr(torch.ops.airfuse, op_name)
    good = _inputs(op, op.combos(reference=False)[0], (3, 8))
    for inputs in _bad_inputs(op):
        for _ in range(2):
            _call(op, good)
            error = _error(lambda: fn(*inputs.values()))
            assert error is not None and op.public_name in error[1], (op_name, error)
