"""Every forward airfuse op exported in both forms, run in ONNX Runtime against eager.

One model per form holds every case in float32, float16 and bfloat16 (``onnx_cases``), exported
with a symbolic batch and sequence dim at one size and run at another. ONNX Runtime runs the
standard form in float32 and float16, and the custom form in float32 on airfuse's CPU kernels; its
Python custom ops carry no 16-bit tensors, so the custom form's float16 and bfloat16 run in onnx's
reference evaluator on the same kernels. ONNX Runtime's CPU provider has no bfloat16 kernels for
these ops (pinned below, so that a release that adds them shows up).
"""

import subprocess
import sys

import onnx
import onnx.utils
import onnxruntime
import pytest
import torch

import airfuse.onnx
from airfuse.onnx import custom, runtime, standard
from onnx_cases import CASES, EXPORT_SIZE, RUN_SIZE, build, cases_for
from reference import TOLERANCES

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_ORT_DTYPES = {"standard": (torch.float32, torch.float16), "custom": (torch.float32,)}
# The ONNX op types the standard form may use (opset 23, default domain).
_STANDARD_TYPES = {
    "RMSNormalization", "RotaryEmbedding", "Gelu", "Sigmoid", "Mul", "Add", "Cast", "ReduceMean", "Sqrt", "Reciprocal",
    "Split", "Concat", "Neg", "Reshape", "Squeeze", "Slice", "Shape", "Expand", "Constant",
}


@pytest.fixture(scope="module")
def program():
    """One ExportedProgram of every case, translated to each form below."""
    module, inputs, dynamic, input_names, output_names = build(_DTYPES, EXPORT_SIZE)
    exported = airfuse.onnx.export_program(module, inputs, dynamic_shapes=(dynamic,), fuse=False)
    return module, exported, input_names, output_names


@pytest.fixture(scope="module", params=airfuse.onnx.FORMS)
def exported(request, program):
    module, exported_program, input_names, output_names = program
    onnx_program = airfuse.onnx.export(exported_program, form=request.param, input_names=input_names, output_names=output_names)
    _, run_inputs, *_ = build(_DTYPES, RUN_SIZE, seed=1)
    return request.param, onnx_program.model_proto, module, run_inputs, input_names, output_names


def _sub_model(model, input_names, output_names, keep):
    """The part of ``model`` computing the outputs ``keep`` selects, from the inputs it needs."""
    outputs = [name for name in output_names if keep(name)]
    inputs = [name for name in input_names if keep(name)]
    return onnx.utils.Extractor(model).extract_model(inputs, outputs), inputs, outputs


def _tag(dtype):
    return str(dtype).removeprefix("torch.")


def test_import_airfuse_imports_no_onnx_package():
    packages = ("onnx", "onnx_ir", "onnxscript", "onnxruntime", "onnxruntime_extensions")
    code = f"import sys, airfuse; print([m for m in {packages!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_translations_cover_every_forward_op():
    forward = {op.name for op in custom.FORWARD_OPS}
    assert set(standard.TRANSLATIONS) == forward == set(custom.TRANSLATIONS), (
        f"forward ops without a standard-ONNX translation in airfuse/onnx/standard.py: {sorted(forward - set(standard.TRANSLATIONS))}")
    assert {case.op for case in CASES} == forward, f"forward ops without a case in tests/onnx/onnx_cases.py: {sorted(forward - {c.op for c in CASES})}"


def test_checker_passes_and_dims_stay_symbolic(exported):
    form, model, *_ = exported
    onnx.checker.check_model(model, full_check=True)
    x = next(i for i in model.graph.input if i.name == "rms_norm.float32.x")
    dims = x.type.tensor_type.shape.dim
    assert dims[0].dim_param and dims[1].dim_param and dims[2].dim_value == 16


def test_nodes_are_the_forms_own(exported):
    form, model, *_ = exported
    types = {(n.domain, n.op_type) for n in model.graph.node}
    if form == "standard":
        assert {d for d, _ in types} == {""}
        assert {t for _, t in types} <= _STANDARD_TYPES
        assert ("", "RotaryEmbedding") in types and ("", "RMSNormalization") in types
        return
    airfuse_nodes = [n for n in model.graph.node if n.domain == custom.DOMAIN]
    expected = [case for dtype in _DTYPES for case in cases_for(dtype)]
    assert [n.op_type for n in airfuse_nodes] == [airfuse.ops.ALL_OPS[c.op].ir_type for c in expected]
    for node, case in zip(airfuse_nodes, expected, strict=True):
        opdef = airfuse.ops.ALL_OPS[case.op]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        assert list(attrs) == [a.name for a in opdef.attrs]
        assert list(attrs.values()) == pytest.approx(list(case.attrs) or [a.default for a in opdef.attrs])
    # Only the exporter's own view ops surround them (the rank-3 RoPE tables' reshapes and so on).
    assert {t for d, t in types if d == ""} <= {"Reshape", "Transpose", "Shape", "Concat", "Constant"}


@pytest.mark.parametrize("dtype", _DTYPES, ids=_tag)
def test_ort_matches_eager(exported, dtype):
    form, model, module, run_inputs, input_names, output_names = exported
    tag = f".{_tag(dtype)}."
    sub, inputs, outputs = _sub_model(model, input_names, output_names, lambda name: tag in name)
    feeds = [run_inputs[input_names.index(name)] for name in inputs]
    if dtype in _ORT_DTYPES[form]:
        actual = runtime.run(runtime.session(sub), *feeds)
    elif form == "standard":
        with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
            runtime.session(sub)
        return
    else:
        actual = runtime.reference_run(sub, *feeds)
    eager = dict(zip(output_names, module(*run_inputs), strict=True))
    for name, got in zip(outputs, actual, strict=True):
        expected = eager[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape, name
        torch.testing.assert_close(got, expected, **TOLERANCES[dtype], msg=lambda m: f"{form} {name}: {m}")
