"""airfuse's kernels compiled against CANN's real kernel_operator.h (vendor_check/kernels.cmake):
one build per chip, header branch, kernel and dtype combination the op's OpDef declares for the
chip, derived from the op definitions (airfuse/kernel_builds.py)."""
import json

import pytest
import torch

from airfuse.kernel_builds import CHIP_DTYPE_COMBOS, kernel_builds, kernel_ops
from airfuse.ops import ALL_OPS

MODES = ("cpu", "npu")


@pytest.fixture(scope="module")
def builds(vendor_build, vendor_part_unchecked):
    flags = json.loads((vendor_build / "kernels" / "flags.json").read_text())
    if not flags["checked"]:
        vendor_part_unchecked(flags["reason"])
    return json.loads((vendor_build / "kernels" / "builds.json").read_text())


def test_every_declared_combination_is_compiled_in_both_branches(builds):
    expected = {(b.chip, mode, b.source, b.name, tuple(b.dtype_macros)) for b in kernel_builds(ALL_OPS.values()) for mode in MODES}
    assert {(b["chip"], b["mode"], b["source"], b["name"], tuple(b["macros"])) for b in builds} == expected
    ops = kernel_ops(ALL_OPS.values())
    for chip, combos_of in CHIP_DTYPE_COMBOS.items():
        assert sum(b["chip"] == chip and b["mode"] == "cpu" for b in builds) == sum(len(combos_of(op)) for op in ops)


def test_every_build_passed(builds):
    from pathlib import Path

    failed = [b["name"] for b in builds if not Path(b["stamp"]).is_file()]
    assert not failed


def test_bfloat16_is_never_built_for_310p(builds):
    """310P's OpDef declares no bfloat16 combination, so CANN never compiles one: neither does
    the check. The op definitions do list bfloat16, and 910B builds it."""
    bf16_ops = [op for op in kernel_ops(ALL_OPS.values()) if any(torch.bfloat16 in c.values() for c in op.dtype_combos)]
    assert bf16_ops
    for op in bf16_ops:
        assert any(b["chip"] == "ascend910b" and b["name"].startswith(op.kernel_symbol + "__") and "bfloat16_t" in str(b["macros"])
                   for b in builds), op.name
    assert not [b["name"] for b in builds if b["chip"] == "ascend310p" and any("bfloat16" in m for m in b["macros"])]


def test_npu_branch_sets_aside_only_the_vendor_header_limits(builds):
    """Without ASCENDC_CPU_DEBUG g++ reports errors inside the vendor's headers for what it lacks
    (vendor_check/syntax_check.py VENDOR_HEADER_LIMITS); every build sets aside the same few."""
    from pathlib import Path

    set_aside = {int(Path(b["stamp"]).read_text().split()[0]) for b in builds if b["mode"] == "npu"}
    cpu = {int(Path(b["stamp"]).read_text().split()[0]) for b in builds if b["mode"] == "cpu"}
    assert cpu == {0}
    assert set_aside and max(set_aside) <= 8
