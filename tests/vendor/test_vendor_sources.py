"""How the vendor check finds CANN's sources (vendor_check/cann_open.py), and what it does
without them: one skip line, or with AIRFUSE_REQUIRE_CANN_OPEN=1 an error saying why. These run
everywhere, vendor tree or not."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cann_open(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("cann_open", PROJECT / "vendor_check" / "cann_open.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cann_open", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    for var in ("AIRFUSE_CANN_OPEN", "ASCEND_HOME_PATH", "AIRFUSE_REQUIRE_CANN_OPEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(module, "DEFAULT_TREE", tmp_path / "shared" / "vendor" / "cann-open")
    return module


def test_without_sources_the_build_prints_one_skip_line(cann_open, tmp_path, capsys):
    assert cann_open.main(["--build", str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("vendor check SKIPPED: no vendor sources: AIRFUSE_CANN_OPEN and ASCEND_HOME_PATH are unset")
    assert json.loads((tmp_path / "build" / "state.json").read_text())["status"] == "skipped"


def test_required_sources_missing_is_an_error_with_the_reason(cann_open, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AIRFUSE_REQUIRE_CANN_OPEN", "1")
    assert cann_open.main(["--build", str(tmp_path / "build")]) == 1
    assert "vendor check: AIRFUSE_REQUIRE_CANN_OPEN=1 but no vendor sources" in capsys.readouterr().err
    assert json.loads((tmp_path / "build" / "state.json").read_text())["status"] == "error"


def test_a_named_tree_that_is_not_cann_open_is_refused(cann_open, tmp_path, monkeypatch):
    (tmp_path / "tree" / "asc-devkit" / "include").mkdir(parents=True)
    (tmp_path / "tree" / "asc-devkit" / "include" / "kernel_operator.h").write_text("")
    monkeypatch.setenv("AIRFUSE_CANN_OPEN", str(tmp_path / "tree"))
    with pytest.raises(cann_open.VendorTreeError, match=r"missing asc-tools/cpudebug/include/stub_def.h, metadef/"):
        cann_open.find_sources()


def test_the_default_tree_is_found_beside_the_project(cann_open, tmp_path):
    for repo, marker in cann_open.OPEN_TREE_MARKERS.items():
        (cann_open.DEFAULT_TREE / repo / marker).parent.mkdir(parents=True, exist_ok=True)
        (cann_open.DEFAULT_TREE / repo / marker).write_text("")
    sources, reason = cann_open.find_sources()
    assert (sources.layout, sources.root, sources.chosen_by, reason) == ("open", str(cann_open.DEFAULT_TREE), "the default location", "")
