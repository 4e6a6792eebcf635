"""The binding's op table (csrc/npu/op_table.h) against airfuse's op definitions and, for the ops
the CANN package provides, op_host's OpDef: one row per op, the aclnn entry's name, and phase 1's parameters in the order opbuild
generates them (IR inputs, IR attrs with their C types, IR outputs)."""

import ctypes
import json

import pytest

from airfuse import npu_binding, twin
from airfuse.opdef import IR_FLOAT_DTYPES, dtype_name
from airfuse.ops import ALL_OPS
from npu_cases import PACKAGED_OPS

# The C type the generated aclnn signature gives each GE attr type.
ATTR_CTYPE = {"Float": "double", "Int": "int64_t", "Bool": "bool", "Str": "char*"}
GE_DTYPE_NAME = {code: dtype_name(dt) for dt, code in twin.GE_DTYPE.items()}


@pytest.fixture(scope="module")
def table(npu):
    return {row["op"]: row for row in npu_binding.op_table(npu.binding)}


@pytest.fixture(scope="module")
def opdefs():
    lib = ctypes.CDLL(str(twin.DEFAULT_LIB.with_name("libairfuse_opdef_standin.so")))
    lib.standin_opdefs_json.restype = ctypes.c_char_p
    return {d["op_type"]: d for d in json.loads(lib.standin_opdefs_json())}


def test_one_row_per_op(table):
    assert set(table) == set(ALL_OPS)


@pytest.mark.parametrize("op", ALL_OPS.values(), ids=lambda o: o.name)
def test_row_follows_the_op_definition(op, table):
    row = table[op.name]
    assert row["aclnn"] == op.aclnn_name
    expected = ["tensor_in"] * len(op.inputs) + [ATTR_CTYPE[a.ge_type] for a in op.attrs] + ["tensor_out"] * len(op.outputs)
    assert row["params"] == expected
    assert set(row["dtypes"]) == {dtype_name(d) for d in IR_FLOAT_DTYPES}
    assert {dtype_name(d) for combo in op.dtype_combos for d in combo.values()} <= set(row["dtypes"])


@pytest.mark.parametrize("op", PACKAGED_OPS, ids=lambda o: o.name)
def test_row_follows_op_hosts_opdef(op, table, opdefs):
    d = opdefs[op.ir_type]
    generated = ["tensor_in"] * len(d["inputs"]) + [ATTR_CTYPE[a["type"]] for a in d["attrs"]] + ["tensor_out"] * len(d["outputs"])
    assert table[op.name]["params"] == generated
    assert [p["name"] for p in d["inputs"]] == list(op.tensor_args)
    declared = {GE_DTYPE_NAME[c] for config in d["configs"].values() for p in config["inputs"] + config["outputs"] for c in p["dtypes"]}
    assert declared <= set(table[op.name]["dtypes"])
