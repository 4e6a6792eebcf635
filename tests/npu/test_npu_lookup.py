"""The binding finds aclnn symbols in torch_npu op-plugin's order, reading the environment when the
first op runs. Each case is a fresh process: the lookup happens once per process."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import emulated_npu

HERE = Path(__file__).resolve().parent

# Loads the emulated NPU with the environment the case set, runs one op, reports where the
# binding found its symbols, or the error.
SCRIPT = f"""
import json, sys
sys.path.insert(0, {str(HERE)!r})
import torch, airfuse, emulated_npu
from airfuse import npu_binding
npu = emulated_npu.load()
try:
    x = torch.ones(4, device="npu")
    assert torch.equal(torch.ops.airfuse.add(x, x).cpu(), torch.full((4,), 2.0))
    origin = {{s: npu_binding.symbol_origin(npu.binding, s) for s in ("aclnnAirfuseAddGetWorkspaceSize", "aclnnAirfuseAdd", "aclCreateTensor")}}
    print(json.dumps({{"origin": origin}}))
except RuntimeError as exc:
    print(json.dumps({{"error": str(exc)}}))
"""


def _vendor(root: Path, name: str) -> Path:
    """A copy of the stand-in vendor package: its own file, so it loads as a library of its own."""
    lib = root / name / "op_api" / "lib"
    lib.mkdir(parents=True)
    shutil.copy(emulated_npu.CUST_OPAPI, lib / "libcust_opapi.so")
    return root / name


def _run(**env) -> dict:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.setdefault("ASCEND_CUSTOM_OPP_PATH", "")  # set but empty: emulated_npu.load() keeps it
    out = subprocess.run([sys.executable, "-c", SCRIPT], env={**base, **env}, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", autouse=True)
def _built(npu):
    """The emulated NPU exists (the fixture raises with the build command otherwise)."""


def test_custom_opp_path_entries_in_order(tmp_path):
    empty = tmp_path / "no_package"
    empty.mkdir()
    first, second = _vendor(tmp_path, "first"), _vendor(tmp_path, "second")
    found = _run(ASCEND_CUSTOM_OPP_PATH=f"{empty}:{second}:{first}")["origin"]
    lib = str(second / "op_api/lib/libcust_opapi.so")
    # aclCreateTensor too: the vendor library brings CANN's libopapi.so as its dependency.
    assert found == {"aclnnAirfuseAddGetWorkspaceSize": lib, "aclnnAirfuseAdd": lib, "aclCreateTensor": lib}


def test_config_ini_load_priority_after_custom_opp_path(tmp_path):
    opp = tmp_path / "opp"
    vendors = opp / "vendors"
    _vendor(vendors, "customize")
    _vendor(vendors, "other")
    (vendors / "config.ini").write_text("# vendors\nload_priority=missing,other,customize\n")
    found = _run(ASCEND_OPP_PATH=str(opp))["origin"]
    assert found["aclnnAirfuseAdd"] == str(vendors / "other/op_api/lib/libcust_opapi.so")
    custom = _vendor(tmp_path, "custom")
    found = _run(ASCEND_OPP_PATH=str(opp), ASCEND_CUSTOM_OPP_PATH=str(custom))["origin"]
    assert found["aclnnAirfuseAdd"] == str(custom / "op_api/lib/libcust_opapi.so")


def test_missing_package_names_op_symbol_every_place_and_the_fix(tmp_path):
    opp, home, custom = tmp_path / "opp", tmp_path / "home", tmp_path / "custom"
    (opp / "vendors").mkdir(parents=True)
    (opp / "vendors" / "config.ini").write_text("load_priority=customize\n")
    error = _run(ASCEND_CUSTOM_OPP_PATH=str(custom), ASCEND_OPP_PATH=str(opp), ASCEND_HOME_PATH=str(home))["error"]
    assert error.startswith("airfuse.add: cannot find aclnnAirfuseAddGetWorkspaceSize; looked in, in this order:")
    places = [
        f"1. {custom}/op_api/lib/libcust_opapi.so (ASCEND_CUSTOM_OPP_PATH entry {custom}): no such file",
        f"2. {opp}/vendors/customize/op_api/lib/libcust_opapi.so (vendor customize of {opp}/vendors/config.ini): no such file",
        "3. libopapi.so (the dynamic loader's search path): dlopen failed",
        "4. libaclnn_ops_infer.so (the dynamic loader's search path): dlopen failed",
    ]
    for place in places:
        assert place in error
    assert "9. libaclnn_rand.so" in error
    assert "custom_opp_*.run --install-path=$HOME/airfuse_opp" in error and "ASCEND_CUSTOM_OPP_PATH" in error


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a root process skips libraries other users own")
def test_root_skips_a_library_another_user_owns(tmp_path):
    foreign, own = _vendor(tmp_path, "foreign"), _vendor(tmp_path, "own")
    os.chown(foreign / "op_api/lib/libcust_opapi.so", 1000, 1000)
    found = _run(ASCEND_CUSTOM_OPP_PATH=f"{foreign}:{own}")["origin"]
    assert found["aclnnAirfuseAdd"] == str(own / "op_api/lib/libcust_opapi.so")
    error = _run(ASCEND_CUSTOM_OPP_PATH=str(foreign))["error"]
    assert f"1. {foreign}/op_api/lib/libcust_opapi.so (ASCEND_CUSTOM_OPP_PATH entry {foreign}): skipped: owned by uid 1000, " \
           "and this process runs as root" in error
