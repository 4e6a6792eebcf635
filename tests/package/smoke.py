"""The installed airfuse wheel, used from outside the source tree (`make wheel-smoke`, part of `make test`).

Run by the wheel's venv's Python in isolated mode (``python -I``, so neither the working directory
nor this script's folder is on sys.path) from a directory outside the checkout: airfuse must come
from the venv's site-packages, its CPU kernels from the package's ``lib/``, TorchAir offline from
airfuse's cache, and ``python -m airfuse.build_npu`` must find the package's C++ sources and refuse
clearly on this host, which has neither CANN nor torch_npu.
"""

import importlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import torch
from torch import nn

import airfuse
from airfuse import cpu_kernels
from airfuse.ops.rms_norm import rms_norm_reference
from airfuse.ops.silu_mul import silu_mul_reference

package = Path(airfuse.__file__).resolve().parent
site_packages = Path(sysconfig.get_paths()["platlib"]).resolve()
assert package == site_packages / "airfuse", f"airfuse imported from {package}, not from {site_packages}"
for module in ("airfuse.meta", "airfuse.converters", "airfuse.patching", "airfuse.fusion", "airfuse.offline"):
    origin = Path(importlib.import_module(module).__file__).resolve()
    assert package in origin.parents, f"{module} imported from {origin}, not from the package"

# The CPU kernels: compiled against this torch, loaded from the package, every variant this CPU runs.
assert cpu_kernels.LIBRARY == package / "lib" / "libairfuse_cpu.so", cpu_kernels.LIBRARY
assert cpu_kernels._loaded, "the packaged CPU kernels were not loaded"
build_info = json.loads((package / "lib" / "build_info.json").read_text())
assert build_info == {"torch": torch.__version__.split("+")[0], "cxx11_abi": torch._C._GLIBCXX_USE_CXX11_ABI}, build_info
capabilities = cpu_kernels.capabilities()
assert cpu_kernels.capability() in capabilities, (cpu_kernels.capability(), capabilities)

# Eager ops against the Python references, in every variant.
torch.manual_seed(0)
x = torch.randn(6, 96, dtype=torch.bfloat16)
gamma = torch.randn(96, dtype=torch.bfloat16)
a, b = torch.randn(2, 6, 96)
for variant in capabilities:
    with cpu_kernels.use_capability(variant):
        y, rstd = torch.ops.airfuse.rms_norm(x, gamma, 1e-6)
        expected_y, expected_rstd = rms_norm_reference(x, gamma, 1e-6)
        torch.testing.assert_close(y, expected_y)
        torch.testing.assert_close(rstd, expected_rstd)
        torch.testing.assert_close(torch.ops.airfuse.silu_mul(a, b), silu_mul_reference(a, b))


class DecoderMlp(nn.Module):
    """Hugging Face's Llama RMSNorm and SiLU-gated MLP written with torch ops, for fusion to find."""

    def __init__(self, hidden=64, inner=128):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.gate, self.up = nn.Linear(hidden, inner, bias=False), nn.Linear(hidden, inner, bias=False)
        self.down = nn.Linear(inner, hidden, bias=False)

    def forward(self, hidden_states):
        variance = hidden_states.float().pow(2).mean(-1, keepdim=True)
        normed = self.weight * (hidden_states.float() * torch.rsqrt(variance + 1e-6)).to(hidden_states.dtype)
        return hidden_states + self.down(nn.functional.silu(self.gate(normed)) * self.up(normed))


# One compiled model through offline TorchAir (the GE graph run by airfuse's CPU executor), forward
# and backward, against eager.
model = DecoderMlp()
inputs = torch.randn(2, 5, 64)
capture = airfuse.capture_ge_graph(model, inputs)
assert capture.op_types()["AirfuseRmsNorm"] == 1 and capture.op_types()["AirfuseSiluMul"] == 1, capture.op_types()
compiled = torch.compile(model, backend=airfuse.get_npu_backend(), fullgraph=True)
eager_in, compiled_in = inputs.clone().requires_grad_(), inputs.clone().requires_grad_()
eager_out, compiled_out = model(eager_in), compiled(compiled_in)
torch.testing.assert_close(compiled_out, eager_out, rtol=1e-5, atol=1e-5)
compiled_out.sum().backward()
eager_out.sum().backward()
torch.testing.assert_close(compiled_in.grad, eager_in.grad, rtol=1e-5, atol=1e-5)
assert airfuse.torchair_env.is_offline()

# The NPU build command: the package's own sources, and a clear refusal without CANN and torch_npu.
result = subprocess.run([sys.executable, "-I", "-m", "airfuse.build_npu"], capture_output=True, text=True, timeout=300)
assert result.returncode != 0, result
assert f"sources {package / 'native'}" in result.stdout, result.stdout
for needed in ("no CANN toolkit", "torch_npu is not installed"):
    assert needed in result.stderr, result.stderr
for rel in ("CMakeLists.txt", "csrc/npu/binding.cpp", "csrc/cpu/kernels.cmake", "op_host/cann/package.cmake", "kernels/rms_norm.cpp"):
    assert (package / "native" / rel).is_file(), rel

print(f"wheel smoke test passed: airfuse {package}, CPU kernels for torch {build_info['torch']} ({', '.join(capabilities)}), "
      f"compiled model offline: {sum(capture.op_types().values())} GE nodes")
