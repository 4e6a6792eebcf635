"""Adding an op means defining it (README, "Adding an op"): every per-op file and every C++ table
row that the op definitions cannot generate is checked here against them, and a missing one fails
naming the op, the file and what to add.

The Python layers are found by module name (airfuse/ops, meta, converters import every module of
their package); kernels and op_host by the IR base name (the CMake builds glob or derive them).
The two C++ tables are X-macros the compilers need as literals: their rows follow from the
schema, so the expected row is written out here.
"""

import re
from pathlib import Path

import pytest
import torch

from airfuse.ops import ALL_OPS

ROOT = Path(__file__).resolve().parents[1]
OPS = list(ALL_OPS.values())
CPU_KERNELS_H = "csrc/cpu/kernels.h"
NPU_OP_TABLE_H = "csrc/npu/op_table.h"

# The C++ parameter of each schema argument type in the CPU kernels' signatures (csrc/cpu/kernels.h).
CPU_PARAMETER = {"Tensor": "const Tensor&", "float": "double", "int": "int64_t", "bool": "bool", "str": "c10::string_view"}
CPU_RESULT = {1: "Tensor", 2: "Tensors2", 3: "Tensors3"}
# The C type opbuild gives each GE attr type in the generated aclnn signature (csrc/npu/op_table.h).
ACLNN_ATTR = {"Float": "double", "Int": "int64_t", "Bool": "bool", "Str": "char*"}


def _macro_rows(path: str, macro: str, row: str) -> dict[str, str]:
    """The rows ``row(name, ...)`` of ``#define macro(row)`` in ``path`` (its lines up to the first
    blank one), by name, whitespace-normalized."""
    text = (ROOT / path).read_text()
    header = f"#define {macro}({row})"
    body = re.split(r"\n\s*\n", text[text.index(header) + len(header) :], maxsplit=1)[0].replace("\\\n", " ")
    rows = {}
    for match in re.finditer(rf"\b{row}\(", body):
        depth = 0
        for end, ch in enumerate(body[match.start() :], match.start()):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == ")" and depth == 0:
                break
        text_row = " ".join(body[match.start() : end + 1].split())
        rows[text_row[len(row) + 1 :].split(",")[0].strip()] = text_row
    return rows


def expected_cpu_kernel_row(op) -> str:
    schema = torch._C.parse_schema(op.qualname + op.schema)
    parameters = ", ".join(f"{CPU_PARAMETER[str(a.type)]} {a.name}" for a in schema.arguments)
    arguments = ", ".join(a.name for a in schema.arguments)
    return f"X({op.name}, {CPU_RESULT[len(schema.returns)]}, ({parameters}), ({arguments}))"


def expected_npu_table_row(op) -> str:
    kinds = ["TensorIn"] * len(op.inputs) + [ACLNN_ATTR[a.ge_type] for a in op.attrs] + ["TensorOut"] * len(op.outputs)
    return f"ROW({op.name}, {op.aclnn_name}, {', '.join(kinds)})"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_has_its_python_modules(op):
    holders = {"airfuse/ops": "its definition", "meta": "its fake impl", "converters": "its TorchAir converter"}
    missing = [f"{folder}/{op.module_name}.py ({holds})" for folder, holds in holders.items()
               if not (ROOT / folder / f"{op.module_name}.py").is_file()]
    assert not missing, f"op {op.name}: missing {', '.join(missing)}"


def test_cpu_kernel_table_has_a_row_per_op_as_its_schema_says():
    rows = _macro_rows(CPU_KERNELS_H, "AIRFUSE_CPU_KERNELS", "X")
    for op in OPS:
        want = expected_cpu_kernel_row(op)
        assert op.name in rows, f"op {op.name}: {CPU_KERNELS_H} AIRFUSE_CPU_KERNELS has no row; add `{want}` and the kernel in csrc/cpu/"
        assert rows[op.name] == want, f"op {op.name}: {CPU_KERNELS_H} has `{rows[op.name]}`, its schema says `{want}`"


def test_npu_op_table_has_a_row_per_op_and_no_other():
    rows = _macro_rows(NPU_OP_TABLE_H, "AIRFUSE_NPU_OP_ROWS", "ROW")
    for op in OPS:
        want = expected_npu_table_row(op)
        assert op.name in rows, f"op {op.name}: {NPU_OP_TABLE_H} AIRFUSE_NPU_OP_ROWS has no row; add `{want}`"
        assert rows[op.name] == want, f"op {op.name}: {NPU_OP_TABLE_H} has `{rows[op.name]}`, its definition says `{want}`"
    assert set(rows) <= set(ALL_OPS), f"{NPU_OP_TABLE_H} has rows for ops that are not defined: {sorted(set(rows) - set(ALL_OPS))}"


def test_the_row_parser_reads_nested_parentheses():
    rows = _macro_rows(CPU_KERNELS_H, "AIRFUSE_CPU_KERNELS", "X")
    assert rows["rms_norm"] == "X(rms_norm, Tensors2, (const Tensor& x, const Tensor& gamma, double epsilon), (x, gamma, epsilon))"
    assert "rms_norm_backward_add" in rows  # a fused CPU-only kernel, no op of its own


def test_every_kernel_has_its_op_host_and_back():
    """kernels/<ir base>.cpp and op_host/<ir base>.cpp come in pairs (CMake globs both), each for a defined op."""
    by_base = {op.ir_base_name: op for op in OPS}
    kernels = {p.stem for p in (ROOT / "kernels").glob("*.cpp")}
    op_host = {p.stem for p in (ROOT / "op_host").glob("*.cpp")}
    for base in sorted(kernels | op_host):
        assert base in by_base, f"kernels/{base}.cpp or op_host/{base}.cpp belongs to no defined op (IR base names: {sorted(by_base)})"
        for folder, present in (("kernels", kernels), ("op_host", op_host)):
            assert base in present, f"op {by_base[base].name}: {folder}/{base}.cpp is missing (kernels/ and op_host/ come in pairs)"


def test_the_twin_exports_every_kernel_build_derived_from_the_op_definitions():
    """CMakeLists.txt compiles the twin's kernels from `python -m airfuse.kernel_builds --twin`."""
    import subprocess

    from airfuse import twin
    from airfuse.kernel_builds import twin_builds

    out = subprocess.run(["nm", "-D", "--defined-only", str(twin.DEFAULT_LIB)], check=True, capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in out.splitlines()}
    for build in twin_builds(OPS):
        assert build.twin_name in exported, (
            f"op {build.op.name}: {twin.DEFAULT_LIB.name} lacks {build.twin_name} (kernels/{build.source}); rebuild with `make twin`")


def test_every_twin_tiling_entry_has_its_python_signature():
    """twin/src/capi.cpp's twin_tiling_<kind> entries and airfuse/twin.py's TILING_ARGUMENTS and argtypes name the same kinds."""
    import subprocess

    from airfuse import twin

    out = subprocess.run(["nm", "-D", "--defined-only", str(twin.DEFAULT_LIB)], check=True, capture_output=True, text=True).stdout
    entries = {s.removeprefix("twin_tiling_") for s in (line.split()[-1] for line in out.splitlines()) if s.startswith("twin_tiling_")}
    entries.discard("size")
    assert entries == set(twin.TILING_ARGUMENTS), (
        f"twin/src/capi.cpp twin_tiling_<kind> entries {sorted(entries)} != airfuse/twin.py TILING_ARGUMENTS {sorted(twin.TILING_ARGUMENTS)}")
    lib = twin.library()
    for kind in sorted(entries):
        assert getattr(lib, f"twin_tiling_{kind}").argtypes, f"airfuse/twin.py library() sets no argtypes for twin_tiling_{kind}"
