"""op_host and kernels/ against airfuse's op definitions (the single source of truth).

op_host's real sources are compiled against a recording stand-in of CANN's op_host API
(tests/kernels/cann_standin, built by `make twin`) and read back here.
"""

import ctypes
import json
import math
import re
from pathlib import Path

import pytest
import torch

from airfuse import twin
from airfuse.ops import ALL_OPS

from twin_helpers import TILING_HEADERS, tiling_field, tiling_layout

ROOT = Path(__file__).resolve().parents[2]
GE = twin.GE_DTYPE
ND = 2  # ge::FORMAT_ND


@pytest.fixture(scope="module")
def standin():
    lib = ctypes.CDLL(str(twin.DEFAULT_LIB.with_name("libairfuse_opdef_standin.so")))
    lib.standin_opdefs_json.restype = ctypes.c_char_p
    # attrs (the char* after the input spec): the op's attr values as text, None for every default
    lib.standin_infer.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.standin_tiling.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p,
                                   ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32] + [ctypes.c_void_p] * 4
    lib.standin_tiling_key.restype = ctypes.c_uint64
    return lib


@pytest.fixture(scope="module")
def opdefs(standin):
    return {d["op_type"]: d for d in json.loads(standin.standin_opdefs_json())}


def kernel_source(op):
    return ROOT / "kernels" / f"{op.ir_base_name}.cpp"


KERNEL_OPS = [op for op in ALL_OPS.values() if kernel_source(op).exists()]


def test_every_kernel_has_an_opdef_and_back(opdefs):
    assert {op.ir_type for op in KERNEL_OPS} == set(opdefs)
    assert {"AirfuseRmsNorm", "AirfuseRmsNormGrad", "AirfuseAdd", "AirfuseAddRmsNorm", "AirfuseRope", "AirfuseRopeGrad"} <= set(opdefs)


# The dtype combinations each chip's OpDef config declares: all on 910B; 310P has no bfloat16.
CHIP_COMBOS = {
    "ascend910b": lambda op: list(op.dtype_combos),
    "ascend310p": lambda op: [c for c in op.dtype_combos if torch.bfloat16 not in c.values()],
}


def _declared_combos(params):
    return [{p["name"]: p["dtypes"][i] for p in params} for i in range(len(params[0]["dtypes"]))]


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda o: o.ir_type)
def test_opdef_matches_op_definition(op, opdefs):
    d = opdefs[op.ir_type]
    assert [(a["name"], a["type"], a["attr_type"]) for a in d["attrs"]] == [(a.name, a.ge_type, "optional") for a in op.attrs]
    for a, ir in zip(d["attrs"], op.attrs, strict=True):
        if isinstance(ir.default, str):
            assert a["default"] == ir.default
        else:
            assert math.isclose(a["default"], ir.default, rel_tol=1e-6)
    assert d["has_tiling"] and d["has_infer_shape"] and d["has_infer_dtype"]
    assert set(d["configs"]) == set(CHIP_COMBOS)
    for soc, expected in CHIP_COMBOS.items():
        config = d["configs"][soc]
        assert [(p["name"], p["param_type"]) for p in config["inputs"]] == [(p.name, p.kind) for p in op.inputs]
        assert [(p["name"], p["param_type"]) for p in config["outputs"]] == [(p.name, p.kind) for p in op.outputs]
        params = config["inputs"] + config["outputs"]
        assert _declared_combos(params) == [{k: GE[v] for k, v in combo.items()} for combo in expected(op)], soc
        assert all(p["formats"] == [ND] * len(p["dtypes"]) for p in params)


def kernel_entry(op):
    src = kernel_source(op).read_text()
    m = re.search(rf'extern "C" __global__ __aicore__ void {op.kernel_symbol}\(([^)]*)\)', src)
    assert m, f"{kernel_source(op)} has no entry {op.kernel_symbol}"
    return [p.split()[-1] for p in m.group(1).split(",")], list(dict.fromkeys(re.findall(r"DTYPE_([A-Z0-9_]+)", src)))


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda o: o.ir_type)
def test_kernel_entry_follows_opdef_order(op):
    params, _ = kernel_entry(op)
    inputs = [p.name for p in op.inputs]
    outputs = [p.name + ("_ref" if p.name in inputs else "") for p in op.outputs]
    assert params == inputs + outputs + ["workspace", "tiling"]


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda o: o.ir_type)
def test_twin_has_one_kernel_per_dtype_combination(op):
    """The twin builds a variant per combination of the DTYPE_<PARAM> macros the kernel reads."""
    _, macros = kernel_entry(op)
    names = [m.lower() for m in macros]
    wanted = {"__".join([op.kernel_symbol, "_".join(str(c[n]).removeprefix("torch.") for n in names)]) for c in op.dtype_combos}
    exported = {l.split()[-1] for l in _exported_symbols() if l.split()[-1].startswith(op.kernel_symbol + "__")}
    exported = {s for s in exported if s.count("__") == 1}
    assert exported == wanted


def _exported_symbols():
    import subprocess

    out = subprocess.run(["nm", "-D", "--defined-only", str(twin.DEFAULT_LIB)], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def _spec(tensors):
    return ";".join(",".join(map(str, t.shape)) + f":{GE[t.dtype]}" for t in tensors).encode()


def _inputs(op, combo, shape):
    cols = shape[-1]
    shapes = {"gamma": (cols,), "rstd": (*shape[:-1], 1)}
    if op.name.startswith("swiglu"):  # x holds both halves along dim -1
        shapes["x"] = (*shape[:-1], 2 * cols)
    return [torch.empty(shapes.get(p.name, shape), dtype=combo[p.name], device="meta") for p in op.inputs]


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda o: o.ir_type)
@pytest.mark.parametrize("shape", [(3, 7), (2, 5, 4097)], ids=str)
def test_infer_shape_and_dtype_match_the_fake_impl(op, shape, standin):
    if op.name.startswith("rope"):
        shape = (*shape[:-1], shape[-1] + 1)  # rope rotates pairs: an even last dim
    for combo in op.dtype_combos:
        ins = _inputs(op, combo, shape)
        fake = getattr(torch.ops.airfuse, op.name)(*ins)
        fake = fake if isinstance(fake, tuple) else (fake,)
        out = ctypes.create_string_buffer(512)
        assert standin.standin_infer(op.ir_type.encode(), _spec(ins), None, out, 512) == 0
        assert out.value.decode() == _spec(fake).decode()


TILING_CASES = [("rms_norm", (4096, 4096)), ("rms_norm", (1, 65536)), ("rms_norm_backward", (200, 300)), ("rms_norm_backward", (128, 4096)),
                ("rms_norm_backward", (16384, 8192)), ("add", (128, 4096)), ("add_rms_norm", (4096, 4096)),
                ("add_rms_norm", (3, 14336)), ("add_rms_norm", (40000, 3)), ("rope", (2, 32, 4096, 128)), ("rope_backward", (4, 7, 64)),
                ("silu_mul", (4, 11008)), ("silu_mul_backward", (1, 7)), ("swiglu", (2, 13824)), ("swiglu_backward", (4096, 14336)),
                ("gelu", (8, 3072)), ("gelu_backward", (3, 5))]


ACT_OPS = ["silu_mul", "silu_mul_backward", "swiglu", "swiglu_backward", "gelu", "gelu_backward"]


# (chip, the stand-in platform's SoC code, vector cores, UB bytes)
ADAPTER_CHIPS = [("Ascend910B2", 1, 48, 196352), ("Ascend910B3", 1, 40, 196352), ("Ascend310P3", 2, 8, 253952)]


def _has_bf16(combo):
    return any(d == torch.bfloat16 for d in combo.values())


@pytest.mark.parametrize("name,shape", TILING_CASES, ids=str)
@pytest.mark.parametrize("chip,soc,cores,ub", ADAPTER_CHIPS, ids=[c[0] for c in ADAPTER_CHIPS])
def test_cann_tiling_adapter_equals_the_twin_tiling(name, shape, chip, soc, cores, ub, standin):
    """The thin CANN adapter and the twin launcher get the same tiling from the shared core."""
    op = ALL_OPS[name]
    for combo in op.dtype_combos:
        if soc == 2 and _has_bf16(combo):
            continue  # refused on 310P: test_cann_tiling_adapter_refuses_bf16_on_310p
        ins = _inputs(op, combo, shape)
        if name.startswith("rope"):
            ins[1:] = [t[:1] for t in ins[1:]]  # cos/sin broadcast over the first dim
        buf, size, bd, ws, mode = ctypes.create_string_buffer(256), ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint32()
        refs = [ctypes.byref(v) for v in (size, bd, ws, mode)]
        assert standin.standin_tiling(op.ir_type.encode(), soc, cores, ub, _spec(ins), None, buf, 256, *refs) == 0
        rows, cols = math.prod(shape[:-1]), shape[-1]
        if name == "add":
            tile = twin.tiling("add", chip, rows * cols, GE[combo["x"]], 0)
        elif name == "rms_norm":
            tile = twin.tiling("rms_norm", chip, rows, cols, GE[combo["x"]], GE[combo["gamma"]], 1e-6, 0)
        elif name == "add_rms_norm":
            tile = twin.tiling("add_rms_norm", chip, rows, cols, GE[combo["x1"]], GE[combo["gamma"]], 1e-6, 0)
        elif name.startswith("rope"):
            rank = len(shape)
            dims = (ctypes.c_int64 * rank)(*shape), (ctypes.c_int64 * rank)(1, *shape[1:])
            tile = twin.tiling("rope", chip, int(name == "rope_backward"), rank, *dims, GE[ins[0].dtype], GE[ins[1].dtype], b"half", 0)
        elif name == "rms_norm_backward":
            tile = twin.tiling("rms_norm_grad", chip, rows, cols, GE[combo["x"]], GE[combo["gamma"]], 0)
        else:  # activations: swiglu splits the last dim into halves of `cols`; the rest are one flat row
            gated = name.startswith("swiglu")
            tile = twin.act_tiling(op, chip, rows if gated else 1, cols if gated else rows * cols, combo[op.inputs[0].name])
        assert buf.raw[: size.value] == tile.data.raw
        assert standin.standin_tiling_key() == tile.tiling_key  # SetTilingKey: the kernel's TILING_KEY_IS branch
        assert bd.value == tile.block_dim
        assert ws.value == tile.workspace_bytes  # both include the chip's system workspace
        assert mode.value == (1 if name == "rms_norm_backward" and tile.block_dim > 1 else 0)


# (op, x's shape, attr as the graph writes it, what the twin launcher's tiling takes: (rows, cols, approximate))
TEXT_ATTR_CASES = [("swiglu", (6, 8, 5), "1", (6, 20, 0)), ("swiglu", (6, 8, 5), "0", (1, 120, 0)), ("swiglu_backward", (4, 10), "-2", (1, 20, 0)),
                   ("gelu", (2, 3072), "none", (1, 6144, 1)), ("gelu_backward", (2, 3072), "tanh", (1, 6144, 0))]


def _run_tiling(standin, op, ins, attrs, cap=256):
    """The adapter on the 910B2 stand-in platform: (return code, tiling bytes)."""
    buf, size = ctypes.create_string_buffer(256), ctypes.c_uint32()
    refs = [ctypes.byref(size), ctypes.byref(ctypes.c_uint32()), ctypes.byref(ctypes.c_uint64()), ctypes.byref(ctypes.c_uint32())]
    rc = standin.standin_tiling(op.ir_type.encode(), 1, 48, 196352, _spec(ins), attrs, buf, cap, *refs)
    return rc, buf.raw[: size.value]


@pytest.mark.parametrize("name,shape,attr,view", TEXT_ATTR_CASES, ids=str)
def test_cann_tiling_adapter_reads_int_and_str_attrs(name, shape, attr, view, standin):
    """swiglu's dim picks the [outer, 2 * half] view, gelu's approximate the form; a bad value fails the adapter."""
    op = ALL_OPS[name]
    x = torch.empty(shape, device="meta")
    ins = [x] if op.inputs[0].name == "x" else [torch.empty(torch.ops.airfuse.swiglu(x, int(attr)).shape if name.startswith("swiglu") else shape,
                                                            device="meta"), x]
    rc, data = _run_tiling(standin, op, ins, attr.encode())
    rows, cols, approximate = view
    assert rc == 0 and data == twin.act_tiling(op, "Ascend910B2", rows, cols, torch.float32, approximate).data.raw
    bad = b"3" if name.startswith("swiglu") else b"exact"
    assert _run_tiling(standin, op, ins, bad)[0] == 1


def test_cann_tiling_adapter_reads_the_float_attr(standin):
    """rms_norm's epsilon reaches the tiling as written; text that is not a float is refused."""
    op = ALL_OPS["add_rms_norm"]
    ins = _inputs(op, op.dtype_combos[0], (4, 64))
    rc, data = _run_tiling(standin, op, ins, b"0.125")
    assert rc == 0 and data == twin.tiling("add_rms_norm", "Ascend910B2", 4, 64, GE[ins[0].dtype], GE[ins[2].dtype], 0.125, 0).data.raw
    assert _run_tiling(standin, op, ins, b"0.125x")[0] == 1
    assert _run_tiling(standin, op, ins, b"1e-6;1")[0] == 1  # one attr, two values


def test_cann_tiling_adapter_passes_rope_mode(standin):
    """The adapter reads the mode attr: "interleave" gives a rotate step of 1, "half" D/2, anything
    else fails as the tiling core refuses it."""
    op = ALL_OPS["rope"]
    ins = _inputs(op, op.dtype_combos[0], (4, 64))
    steps = {}
    for mode in (b"half", b"interleave", b"quarter"):
        rc, data = _run_tiling(standin, op, ins, mode)
        steps[mode] = tiling_field(data, "rope", "rotateStep") if rc == 0 else None
    assert steps == {b"half": 32, b"interleave": 1, b"quarter": None}



@pytest.mark.parametrize("name", ["rms_norm", "rms_norm_backward", "add", "add_rms_norm", "rope", "rope_backward", *ACT_OPS])
def test_cann_tiling_adapter_refuses_bf16_on_310p(name, standin):
    op = ALL_OPS[name]
    args = [ctypes.byref(ctypes.c_uint32()), ctypes.byref(ctypes.c_uint32()), ctypes.byref(ctypes.c_uint64()), ctypes.byref(ctypes.c_uint32())]
    for combo in op.dtype_combos:
        ins = _inputs(op, combo, (4, 64))
        rc = standin.standin_tiling(op.ir_type.encode(), 2, 8, 253952, _spec(ins), None, ctypes.create_string_buffer(256), 256, *args)
        assert rc == (1 if _has_bf16(combo) else 0), combo


@pytest.mark.parametrize("name", ["rms_norm", "rms_norm_backward", "add", "add_rms_norm", "rope", "rope_backward", *ACT_OPS])
def test_cann_tiling_adapter_checks_the_tiling_buffer(name, standin):
    """GetTilingData<T>() is null when the op's tiling buffer is smaller than T: the adapter fails
    instead of writing through it; with room for T it succeeds."""
    op = ALL_OPS[name]
    ins = _inputs(op, op.dtype_combos[0], (4, 64))
    args = [ctypes.byref(ctypes.c_uint32()), ctypes.byref(ctypes.c_uint32()), ctypes.byref(ctypes.c_uint64()), ctypes.byref(ctypes.c_uint32())]
    assert standin.standin_tiling(op.ir_type.encode(), 1, 48, 196352, _spec(ins), None, ctypes.create_string_buffer(256), 8, *args) == 1
    assert standin.standin_tiling(op.ir_type.encode(), 1, 48, 196352, _spec(ins), None, ctypes.create_string_buffer(256), 256, *args) == 0


@pytest.mark.parametrize("kind", sorted(TILING_HEADERS))
def test_tiling_fields_read_by_name_sit_where_c_puts_them(kind):
    """twin_helpers.tiling_field reads the tests' tiling fields by name from the kernels' headers:
    the layout it derives has the C struct's size (a field it missed or mis-sized would change
    it), and rms_norm's fields on both sides of its float ones hold what the tiling core wrote."""
    assert tiling_layout(kind)[1] == twin.library().twin_tiling_size(kind.encode())
    if kind == "rms_norm":
        tile = twin.tiling("rms_norm", "Ascend910B2", 1000, 300, twin.GE_DTYPE[torch.float16], twin.GE_DTYPE[torch.float16], 0.5, 0)
        assert (tiling_field(tile.data, kind, "numRows"), tiling_field(tile.data, kind, "numCols")) == (1000, 300)
        assert tiling_field(tile.data, kind, "epsilon") == 0.5 and tiling_field(tile.data, kind, "avgFactor") == pytest.approx(1 / 300)
