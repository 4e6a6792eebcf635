"""The twin's headers refuse the deliberately wrong kernel code that CANN's real headers refuse
(tests/kernels/negative/kernel_defects.cpp; the same source against the real headers:
tests/vendor/test_vendor_negative_controls.py), for each chip family the kernels are built for."""
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).with_name("negative")))
from kernel_defects import assert_refused_and_clean  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("chip_defines", [[], ["-D__CCE_AICORE__=200"]], ids=["910B", "310P"])
def test_twin_refuses_each_defect_and_compiles_without_it(chip_defines):
    compiler = shutil.which("c++") or shutil.which("g++")
    assert_refused_and_clean([compiler, "-std=c++17", "-fsyntax-only", *chip_defines,
                              f"-I{ROOT / 'twin/include'}", f"-I{ROOT / 'op_host/tiling'}"])
