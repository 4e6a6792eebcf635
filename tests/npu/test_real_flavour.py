"""The real binding (build/libairfuse_npu.so), compiled against the pinned torch_npu wheel's headers
and linked against its libtorch_npu.so. It cannot be loaded here (libtorch_npu.so needs CANN), so
what is checked is what the dynamic linker will need on an NPU host: every symbol it leaves
undefined is exported by libtorch_npu.so, by torch, or by the C/C++ runtime, and no CANN library
is linked (aclnn and aclCreateTensor are looked up at run time)."""

import subprocess
from pathlib import Path

import pytest
import torch

from airfuse import npu_binding
from airfuse.offline.fetch import torch_npu_sdk_root

LIBTORCH_NPU = torch_npu_sdk_root() / "lib" / "libtorch_npu.so"
TORCH_LIBS = [Path(torch.__file__).parent / "lib" / f"lib{n}.so" for n in ("c10", "torch_cpu", "torch", "torch_python")]
SYSTEM_VERSIONS = ("@GLIBC_", "@GLIBCXX_", "@CXXABI_", "@GCC_")
# What the real flavour takes from torch_npu (csrc/npu/platform.h).
TORCH_NPU_API = {
    "c10_npu::getCurrentNPUStream(signed char)",
    "c10_npu::NPUStream::stream(bool) const",
    "at_npu::native::OpCommand::RunOpApiV2(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, "
    "std::function<int ()> const&, bool)",
}


def _nm(path, *flags) -> list[str]:
    out = subprocess.run(["nm", "-D", *flags, str(path)], check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def _undefined(path) -> set[str]:
    return {line.split()[-1] for line in _nm(path, "--undefined-only") if line.split()[0] == "U"}


def _defined(path) -> set[str]:
    return {line.split()[-1] for line in _nm(path, "--defined-only")}


def _demangle(symbols) -> set[str]:
    out = subprocess.run(["c++filt"], input="\n".join(symbols), check=True, capture_output=True, text=True).stdout
    return set(out.splitlines())


@pytest.fixture(scope="module")
def real():
    assert npu_binding.BINDING.is_file(), f"{npu_binding.BINDING} not built: `make twin` builds it once the SDK is fetched"
    assert LIBTORCH_NPU.is_file(), "run `python -m airfuse.offline` for the torch_npu SDK"
    return npu_binding.BINDING


def test_every_undefined_symbol_is_exported_by_torch_npu_torch_or_the_runtime(real):
    from_torch_npu = _undefined(real) & _defined(LIBTORCH_NPU)
    torch_exports = set().union(*(_defined(lib) for lib in TORCH_LIBS))
    unresolved = {s for s in _undefined(real) - from_torch_npu - torch_exports if not any(v in s for v in SYSTEM_VERSIONS)}
    assert not unresolved, f"not exported by libtorch_npu.so, torch or the C/C++ runtime: {sorted(_demangle(unresolved))}"
    assert {s for s in _demangle(from_torch_npu) if s.startswith(("c10_npu::", "at_npu::", "torch_npu::"))} == TORCH_NPU_API


def test_no_cann_library_is_linked(real):
    dynamic = subprocess.run(["readelf", "-d", str(real)], check=True, capture_output=True, text=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line}
    assert "libtorch_npu.so" in needed
    assert not {n for n in needed if n.startswith(("libascendcl", "libopapi", "libnnopbase", "libhccl", "libcust_opapi"))}


def test_emulated_flavour_takes_nothing_from_torch_npu():
    names = _demangle(_undefined(npu_binding.EMULATED_BINDING))
    assert not {n for n in names if "npu" in n.split("(")[0]}
