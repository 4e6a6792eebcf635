"""The deliberately wrong kernel code of kernel_defects.cpp and the diagnostic each defect must get.

Read by tests/kernels/test_twin_negative_controls.py (the twin's headers) and
tests/vendor/test_vendor_negative_controls.py (CANN's real headers).
"""
import re
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("kernel_defects.cpp")
DEFECTS_ON = "-DAIRFUSE_DEFECTS"
_DEFECT = re.compile(r"//\s*DEFECT (?P<name>\w+): (?P<diagnostic>.+)$")


def defects() -> dict:
    """name -> (line number, regular expression the compiler's error at that line must match)."""
    found = {}
    for number, line in enumerate(SOURCE.read_text().splitlines(), start=1):
        m = _DEFECT.search(line)
        if m:
            found[m["name"]] = (number, m["diagnostic"].strip())
    return found


def compile_errors(command: list[str]) -> tuple[int, dict]:
    """Run ``command`` (a compiler command ending with the source); return its exit code and its
    error messages by line of kernel_defects.cpp, with the compiler's typographic quotes as '."""
    result = subprocess.run(command, capture_output=True, text=True)
    errors = {}
    for m in re.finditer(rf"^{re.escape(str(SOURCE))}:(\d+):\d+: error: (.*)$", result.stderr, re.M):
        errors.setdefault(int(m[1]), []).append(m[2].replace("\u2018", "'").replace("\u2019", "'"))
    return result.returncode, errors


def assert_refused_and_clean(command: list[str]) -> None:
    """Every defect is refused at its line with its diagnostic, and the source without the defects
    compiles (so the refusals come from the defects)."""
    code, errors = compile_errors(command + [DEFECTS_ON, str(SOURCE)])
    assert code != 0
    for name, (line, diagnostic) in defects().items():
        assert any(re.search(diagnostic, e) for e in errors.get(line, [])), (name, line, errors.get(line))
    code, errors = compile_errors(command + [str(SOURCE)])
    assert code == 0 and not errors, errors
