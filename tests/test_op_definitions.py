"""The op definitions are the single source of truth: every Python layer is checked against them."""

import re

import pytest
import torch

from airfuse.offline import native_module
from airfuse.opdef import IrAttr, IrParam, OpDefinition
from airfuse.ops import ALL_OPS, OPS_BY_IR_TYPE

OPS = list(ALL_OPS.values())


def test_names_follow_the_naming_rules():
    names = {op.name: (op.ir_type, op.aclnn_name, op.kernel_symbol) for op in OPS}
    assert names["rms_norm"] == ("AirfuseRmsNorm", "aclnnAirfuseRmsNorm", "airfuse_rms_norm")
    assert names["rms_norm_backward"] == ("AirfuseRmsNormGrad", "aclnnAirfuseRmsNormGrad", "airfuse_rms_norm_grad")
    assert names["add"] == ("AirfuseAdd", "aclnnAirfuseAdd", "airfuse_add")
    assert names["rope_backward"] == ("AirfuseRopeGrad", "aclnnAirfuseRopeGrad", "airfuse_rope_grad")
    assert names["gelu_backward"] == ("AirfuseGeluGrad", "aclnnAirfuseGeluGrad", "airfuse_gelu_grad")
    assert set(OPS_BY_IR_TYPE) == {op.ir_type for op in OPS}


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_registered_schema_is_the_definitions(op):
    registered = getattr(torch.ops.airfuse, op.name).default._schema
    assert str(registered) == str(torch._C.parse_schema(op.qualname + op.schema))


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_layer_is_registered(op, torchair):
    overload = getattr(torch.ops.airfuse, op.name).default
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op.qualname, "CPU")
    assert torch._library.simple_registry.singleton.find(op.qualname).fake_impl.kernel is not None, (
        f"op {op.name}: no fake impl; meta/{op.module_name}.py must register one")
    assert getattr(overload, "_ge_converter", None) is not None, (
        f"op {op.name}: no TorchAir converter; converters/{op.module_name}.py must register one")


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_offline_ir_registry_answers_from_the_definitions(op):
    status, inputs, outputs, attrs = native_module.get_registered_ir_def(op.ir_type)
    assert status == "SUCCESS"
    assert inputs == [(p.name, p.kind) for p in op.inputs]
    assert outputs == [(p.name, p.kind) for p in op.outputs]
    assert attrs == [(a.name, a.vt) for a in op.attrs]


def test_unknown_ir_type_fails_as_cann_would():
    assert native_module.get_registered_ir_def("AirfuseNoSuchOp")[0] == "ERROR"
    assert native_module.get_registered_ir_def("RmsNorm")[0] == "ERROR"


def test_rms_norm_dtype_combinations():
    combos = ALL_OPS["rms_norm"].dtype_combos
    pairs = {(c["x"], c["gamma"]) for c in combos}
    f32, f16, bf16 = torch.float32, torch.float16, torch.bfloat16
    assert pairs == {(f32, f32), (f16, f16), (f16, f32), (bf16, bf16), (bf16, f32)}
    assert all(c["rstd"] == f32 and c["y"] == c["x"] for c in combos)


def _definition(**changes):
    fields = dict(
        name="demo_op",
        schema="(Tensor x, float alpha=1.0) -> Tensor out",
        inputs=(IrParam("x"),),
        outputs=(IrParam("out"),),
        attrs=(IrAttr("alpha", "Float", 1.0),),
        dtype_combos=({"x": torch.float32, "out": torch.float32},),
    )
    fields.update(changes)
    return OpDefinition(**fields)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(schema="(float alpha, Tensor x) -> Tensor out"), "schema arguments"),
        (dict(schema="(Tensor x, float alpha=2.0) -> Tensor out"), "default"),
        (dict(schema="(Tensor x, int alpha=1) -> Tensor out"), "attr alpha is int"),
        (dict(schema="(Tensor x, float alpha=1.0) -> Tensor y"), "returns"),
        (dict(dtype_combos=({"x": torch.float32},)), "dtype combination"),
        (dict(schema='(Tensor x, str alpha="a") -> Tensor out', attrs=(IrAttr("alpha", "Str", "a"),)), "must list its choices"),
        (dict(schema='(Tensor x, str alpha="a") -> Tensor out', attrs=(IrAttr("alpha", "Str", "a", choices=("b",)),)), "default included"),
        (dict(attrs=(IrAttr("alpha", "Float", 1.0, choices=(1.0,)),)), "Str attrs only"),
    ],
)
def test_definitions_that_disagree_with_their_schema_are_refused(changes, message):
    with pytest.raises(AssertionError, match=re.escape(message)):
        _definition(**changes)


def test_torch_npu_is_not_installed():
    import importlib.util

    # Installed without CANN, torch_npu breaks `import torch`; the offline path must never need it.
    assert importlib.util.find_spec("torch_npu") is None
