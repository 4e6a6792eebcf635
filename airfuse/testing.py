"""Graph-capture regression tests: compare a capture's GE summary with a golden JSON file.

    capture = airfuse.capture_ge_graph(model, x)
    assert_matches_golden(capture, "tests/golden/my_model.json")

Set ``AIRFUSE_UPDATE_GOLDEN=1`` to (re)write the golden files instead of comparing; review the
diff before committing it.
"""

import difflib
import json
import os
from pathlib import Path

UPDATE_ENV = "AIRFUSE_UPDATE_GOLDEN"


def assert_matches_golden(capture, path, **summary_options):
    path = Path(path)
    actual = _dump(capture.summary(**summary_options))
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    if not path.is_file():
        raise AssertionError(f"golden file {path} does not exist; run with {UPDATE_ENV}=1 to create it")
    expected = path.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(path), "captured"))
        raise AssertionError(f"GE graph differs from {path} (rerun with {UPDATE_ENV}=1 if intended):\n{diff}")


def _dump(summary) -> str:
    return json.dumps(summary, indent=1, sort_keys=False) + "\n"
