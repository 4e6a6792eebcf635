"""What CANN's opbuild generated from airfuse's op_host (vendor_check/op_host.cmake), per chip,
against airfuse's op definitions (airfuse/opdef.py, airfuse/ops/*):

- the op-info .ini: one section per op, its inputs, outputs, dtype and format lists for the chip,
  attrs with their types and defaults;
- the generated aclnn wrappers, called through the binding's op table (csrc/npu/op_table.h) into a
  recording nnopbase (vendor_check/nnopbase_recorder.cpp): each tensor reaches nnopbase at the IR
  index the op definition gives it, each attr with the value passed (null str attrs: the op
  definition's default), and phase 2 runs phase 1's executor on the stream and workspace passed.

The prototypes themselves are checked at compile time (vendor_check/aclnn_table_check.cpp).
"""
import configparser
import ctypes
import json

import numpy as np
import pytest
import torch

from airfuse.opdef import dtype_name
from airfuse.ops import ALL_OPS

CHIPS = ("ascend910b", "ascend310p")
# The combinations each chip's OpDef config declares (op_host/opdef_common.h): 310P has no bfloat16.
CHIP_COMBOS = {
    "ascend910b": lambda op: list(op.dtype_combos),
    "ascend310p": lambda op: [c for c in op.dtype_combos if torch.bfloat16 not in c.values()],
}
INI_ATTR_TYPE = {"Float": "float", "Int": "int", "Bool": "bool", "Str": "str"}
OPS = sorted(ALL_OPS.values(), key=lambda op: op.name)


@pytest.fixture(autouse=True)
def _opbuild_part(vendor_build, vendor_part_unchecked):
    """vendor_check/op_host.cmake records why it skipped its part (an installed toolkit's layout)."""
    skipped = vendor_build / "opbuild" / "skipped.txt"
    if skipped.is_file():
        vendor_part_unchecked(skipped.read_text().strip())


def _ini(vendor_build, chip) -> configparser.ConfigParser:
    ini = configparser.ConfigParser(interpolation=None)
    ini.optionxform = str
    path = vendor_build / "opbuild" / chip / f"aic-{chip}-ops-info.ini"
    assert path.is_file(), f"opbuild wrote no op-info file {path}"
    ini.read(path)
    return ini


def _same_default(ge_type: str, written: str, default) -> bool:
    if ge_type == "Float":  # the OpDef holds a float32
        return np.float32(float(written)) == np.float32(default)
    if ge_type == "Int":
        return int(written) == default
    if ge_type == "Bool":
        return written == str(default).lower()
    return written == default


@pytest.mark.parametrize("chip", CHIPS)
def test_op_info_ini_lists_every_op_definition_and_nothing_else(vendor_build, chip):
    assert sorted(_ini(vendor_build, chip).sections()) == sorted(op.ir_type for op in OPS)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_info_ini_matches_the_op_definition(vendor_build, chip, op):
    section = _ini(vendor_build, chip)[op.ir_type]
    combos = CHIP_COMBOS[chip](op)
    for kind, params in (("input", op.inputs), ("output", op.outputs)):
        for i, param in enumerate(params):
            key = f"{kind}{i}"
            assert section.get(f"{key}.name") == param.name, f"{op.ir_type} {chip}: {key}"
            assert section.get(f"{key}.paramType") == param.kind, f"{op.ir_type} {chip}: {key} {param.name}"
            assert section.get(f"{key}.dtype", "").split(",") == [dtype_name(c[param.name]) for c in combos], (
                f"{op.ir_type} {chip}: {param.name}'s dtypes differ from airfuse/ops' combinations for {chip}")
            assert section.get(f"{key}.format", "").split(",") == ["ND"] * len(combos), f"{op.ir_type} {chip}: {param.name}"
        assert f"{kind}{len(params)}.name" not in section, f"{op.ir_type} {chip}: more {kind}s than the op definition"
    assert section.get("attr.list", "").split(",") == ([a.name for a in op.attrs] if op.attrs else [""])
    for attr in op.attrs:
        key = f"attr_{attr.name}"
        assert section.get(f"{key}.type") == INI_ATTR_TYPE[attr.ge_type], f"{op.ir_type}: {attr.name}"
        assert section.get(f"{key}.paramType") == "optional", f"{op.ir_type}: {attr.name} has a default, so is optional"
        written = section.get(f"{key}.defaultValue")
        assert _same_default(attr.ge_type, written, attr.default), (
            f"{op.ir_type} {chip}: the OpDef's default for {attr.name} is {written}, the op definition's {attr.default!r}")
    assert section.get("opFile.value") == op.kernel_symbol


class AclArg(ctypes.Union):
    """csrc/npu/aclnn_call.h's AclArg: one phase-1 argument as the binding marshals it."""
    _fields_ = [("tensor", ctypes.c_void_p), ("f", ctypes.c_double), ("i", ctypes.c_int64), ("b", ctypes.c_bool),
                ("s", ctypes.c_char_p)]


@pytest.fixture(scope="module", params=CHIPS)
def recorded(request, vendor_build):
    lib = ctypes.CDLL(str(vendor_build / "aclnn_recorded" / request.param / "libaclnn_recorded.so"))
    lib.airfuse_vendor_call_row.argtypes = [ctypes.c_char_p, ctypes.POINTER(AclArg), ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    lib.nnopbase_recording_json.restype = ctypes.c_char_p
    return lib


def _attr_value(attr):
    """A value for attr that is not its default where the op definition allows one."""
    if attr.ge_type == "Float":
        return 0.125  # exact in float32, as the wrapper passes it on
    if attr.ge_type == "Int":
        return attr.default - 1
    if attr.ge_type == "Str":
        return next((c for c in attr.choices if c != attr.default), attr.default)
    return not attr.default


def _call(lib, op, attr_values):
    """op's row called with fake tensor addresses: (the addresses by IR name, the recording)."""
    tensors = {p.name: 0x10000 * (i + 1) for i, p in enumerate(op.inputs + op.outputs)}
    args = [AclArg(tensor=tensors[p.name]) for p in op.inputs]
    for attr in op.attrs:
        value = attr_values[attr.name]
        field = {"Float": "f", "Int": "i", "Bool": "b", "Str": "s"}[attr.ge_type]
        args.append(AclArg(**{field: value.encode() if isinstance(value, str) else value}))
    args += [AclArg(tensor=tensors[p.name]) for p in op.outputs]
    lib.nnopbase_recording_reset()
    status = lib.airfuse_vendor_call_row(op.name.encode(), (AclArg * len(args))(*args), len(args), 0x5000, 0x6000)
    assert status == 0, f"{op.public_name}: the generated wrappers returned {status} (-1: no row of that length in op_table.h)"
    return tensors, json.loads(lib.nnopbase_recording_json())


def _events(recording, call):
    return [e for e in recording["events"] if e["call"] == call]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_generated_wrappers_pass_each_tensor_at_its_ir_index(recorded, op):
    tensors, rec = _call(recorded, op, {a.name: a.default for a in op.attrs})
    assert rec["op_type"] == op.ir_type
    assert (rec["input_num"], rec["output_num"]) == (len(op.inputs), len(op.outputs))
    assert not _events(rec, "error"), rec
    for kind, params in (("input", op.inputs), ("output", op.outputs)):
        got = {e["index"]: int(e["tensor"], 16) for e in _events(rec, kind)}
        assert got == {i: tensors[p.name] for i, p in enumerate(params)}, f"{op.public_name}: {kind}s by IR index"
    names = [e["name"] for e in _events(rec, "param_name") if e["input"]]
    assert names == [p.name for p in op.inputs]
    run = _events(rec, "run")
    assert len(run) == 1 and run[0]["executor_is_phase1s"], f"{op.public_name}: phase 2 did not run phase 1's executor"
    assert (int(run[0]["stream"], 16), int(run[0]["workspace"], 16)) == (0x5000, 0x6000)


@pytest.mark.parametrize("op", [op for op in OPS if op.attrs], ids=lambda op: op.name)
def test_generated_wrappers_pass_each_attr_with_its_value(recorded, op):
    values = {a.name: _attr_value(a) for a in op.attrs}
    _, rec = _call(recorded, op, values)
    attrs = _events(rec, "attr")
    assert [e["index"] for e in attrs] == list(range(len(op.attrs)))
    for event, attr in zip(attrs, op.attrs):
        assert event["dtype"] == INI_ATTR_TYPE[attr.ge_type].replace("str", "string"), f"{op.public_name}: {attr.name}"
        expected = float(np.float32(values[attr.name])) if attr.ge_type == "Float" else values[attr.name]
        assert event["value"] == expected, f"{op.public_name}: {attr.name} reached nnopbase as {event['value']!r}"


@pytest.mark.parametrize("op", [op for op in OPS if any(a.ge_type == "Str" for a in op.attrs)], ids=lambda op: op.name)
def test_null_str_attr_becomes_the_op_definitions_default(recorded, op):
    _, rec = _call(recorded, op, {a.name: None if a.ge_type == "Str" else a.default for a in op.attrs})
    for event, attr in zip(_events(rec, "attr"), op.attrs):
        if attr.ge_type == "Str":
            assert event["value"] == attr.default, f"{op.public_name}: a null {attr.name} became {event['value']!r}"
