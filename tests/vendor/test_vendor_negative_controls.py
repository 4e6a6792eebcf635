"""CANN's real headers refuse the deliberately wrong kernel code the twin refuses
(tests/kernels/negative/kernel_defects.cpp, and tests/kernels/test_twin_negative_controls.py),
compiled exactly as the vendor check compiles the kernels (the commands vendor_check/kernels.cmake
wrote to flags.json), in the headers' CPU-debug branch for each chip."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels" / "negative"))
from kernel_defects import assert_refused_and_clean  # noqa: E402


@pytest.fixture(scope="module")
def kernel_commands(vendor_build, vendor_part_unchecked):
    flags = json.loads((vendor_build / "kernels" / "flags.json").read_text())
    if not flags["checked"]:
        vendor_part_unchecked(flags["reason"])
    return flags["commands"]


@pytest.mark.parametrize("chip", ["ascend910b", "ascend310p"])
def test_real_headers_refuse_each_defect_and_compile_without_it(kernel_commands, chip):
    assert_refused_and_clean(kernel_commands[f"{chip}/cpu"])
