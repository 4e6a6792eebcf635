"""Converters, called directly inside a GE graph: wiring from the op definitions, and refusals of
what the IR cannot express."""

import numpy as np
import pytest
import torch

import airfuse
from airfuse.ops import ALL_OPS


@pytest.fixture
def ge(torchair):
    from torchair.ge._ge_graph import Data, GeGraph

    class Builder:
        DataType = torchair.ge.DataType

        def __init__(self):
            self.graph = GeGraph(name="converter_test")

        def data(self, index, dtype, shape):
            with self.graph:
                tensor = Data(index=index, dtype=dtype, shape=shape, placement="NPU")
            tensor.set_torch_dtype(_TORCH_OF[dtype])
            return tensor

        def call(self, converter, *args):
            with self.graph:
                return converter(*args)

    _TORCH_OF = {
        torchair.ge.DataType.DT_FLOAT: torch.float32,
        torchair.ge.DataType.DT_FLOAT16: torch.float16,
        torchair.ge.DataType.DT_BF16: torch.bfloat16,
        torchair.ge.DataType.DT_DOUBLE: torch.float64,
        torchair.ge.DataType.DT_INT32: torch.int32,
    }
    return Builder()


def _converter(op_name):
    return getattr(torch.ops.airfuse, op_name).default._ge_converter


def test_rms_norm_converter_wires_inputs_attrs_and_outputs_by_name(ge):
    x = ge.data(0, ge.DataType.DT_FLOAT16, [4, 64])
    gamma = ge.data(1, ge.DataType.DT_FLOAT, [64])
    y, rstd = ge.call(_converter("rms_norm"), x, gamma, 1e-5)
    node = y.node
    assert node.type == "AirfuseRmsNorm"
    assert list(node.input) == [f"{x.node.name}:0", f"{gamma.node.name}:0"]
    assert [d.name for d in node.input_desc] == ["x", "gamma"]
    assert [d.name for d in node.output_desc] == ["y", "rstd"]
    assert node.attr["epsilon"].f == pytest.approx(1e-5)
    assert (y.index, rstd.index) == (0, 1)


def test_backward_converter_follows_ir_order(ge):
    dtype = ge.DataType.DT_BF16
    dy, x = ge.data(0, dtype, [2, 8]), ge.data(1, dtype, [2, 8])
    rstd, gamma = ge.data(2, ge.DataType.DT_FLOAT, [2, 1]), ge.data(3, dtype, [8])
    dx, dgamma = ge.call(_converter("rms_norm_backward"), dy, x, rstd, gamma)
    ir = ALL_OPS["rms_norm_backward"]
    assert dx.node.type == ir.ir_type
    assert [d.name for d in dx.node.input_desc] == [p.name for p in ir.inputs]
    assert list(dx.node.input) == [f"{t.node.name}:0" for t in (dy, x, rstd, gamma)]


def test_float64_is_refused_by_the_converter(ge):
    x, gamma = ge.data(0, ge.DataType.DT_DOUBLE, [2, 8]), ge.data(1, ge.DataType.DT_DOUBLE, [8])
    with pytest.raises(TypeError, match=r"AirfuseRmsNorm \(GE IR\) cannot express this call: airfuse\.rms_norm: x has dtype float64"):
        ge.call(_converter("rms_norm"), x, gamma, 1e-6)


def test_mixed_dtypes_the_ir_lacks_are_refused(ge):
    x, y = ge.data(0, ge.DataType.DT_FLOAT16, [2, 8]), ge.data(1, ge.DataType.DT_FLOAT, [2, 8])
    with pytest.raises(TypeError, match=r"AirfuseAdd \(GE IR\) cannot express this call: airfuse\.add: y has dtype float32 with x=float16"):
        ge.call(_converter("add"), x, y)


def test_symbolic_attr_is_refused(ge):
    x, gamma = ge.data(0, ge.DataType.DT_FLOAT, [2, 8]), ge.data(1, ge.DataType.DT_FLOAT, [8])
    symbolic_epsilon = ge.data(2, ge.DataType.DT_FLOAT, [])
    with pytest.raises(TypeError, match=r"AirfuseRmsNorm: attr epsilon of airfuse\.rms_norm must be a constant at compile time"):
        ge.call(_converter("rms_norm"), x, gamma, symbolic_epsilon)


def test_float64_model_fails_to_capture_naming_the_ir():
    x, gamma = torch.randn(2, 8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    with pytest.raises(Exception, match=r"AirfuseRmsNorm \(GE IR\) cannot express this call"):
        airfuse.capture_ge_graph(lambda a, b: torch.ops.airfuse.rms_norm(a, b)[0], x, gamma)


def test_attrs_are_checked_as_the_ir_sees_them(ge):
    x, gamma = ge.data(0, ge.DataType.DT_FLOAT, [2, 8]), ge.data(1, ge.DataType.DT_FLOAT, [8])
    with pytest.raises(ValueError, match=r"airfuse\.rms_norm: epsilon must be a finite float32 number"):
        ge.call(_converter("rms_norm"), x, gamma, 1e300)
    y, _ = ge.call(_converter("rms_norm"), x, gamma, np.float64(1e-5))
    assert y.node.attr["epsilon"].f == pytest.approx(1e-5)


def test_a_missing_input_is_refused_by_the_converter(ge):
    x = ge.data(0, ge.DataType.DT_FLOAT, [2, 8])
    with pytest.raises(TypeError, match=r"AirfuseRmsNorm: input gamma of airfuse\.rms_norm must be a tensor, got NoneType"):
        ge.call(_converter("rms_norm"), x, None, 1e-6)


def test_str_attrs_are_emitted_and_checked_against_their_choices(ge):
    x = ge.data(0, ge.DataType.DT_BF16, [2, 4, 8])
    cos, sin = ge.data(1, ge.DataType.DT_FLOAT, [1, 4, 8]), ge.data(2, ge.DataType.DT_FLOAT, [1, 4, 8])
    y = ge.call(_converter("rope"), x, cos, sin, "interleave")
    assert y.node.type == "AirfuseRope"
    assert [d.name for d in y.node.input_desc] == ["x", "cos", "sin"]
    assert y.node.attr["mode"].s == b"interleave"
    with pytest.raises(ValueError, match=r"airfuse\.rope: mode must be one of 'half', 'interleave', got 'full'"):
        ge.call(_converter("rope"), x, cos, sin, "full")
    with pytest.raises(TypeError, match=r"airfuse\.gelu: approximate must be a str, got int"):
        ge.call(_converter("gelu"), x, 1)
    dx = ge.call(_converter("gelu_backward"), x, x, "none")
    assert dx.node.type == "AirfuseGeluGrad" and dx.node.attr["approximate"].s == b"none"
