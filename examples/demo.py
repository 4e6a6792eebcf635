"""airfuse demo: a small RMSNorm model: eager numerics, its TorchAir GE graph, and the compiled
model run (on an NPU, or offline on the CPU through airfuse's GE executor).

    make demo
"""

import torch
from torch import nn

import airfuse
from airfuse.modules import RMSNorm
from airfuse.torchair_env import is_offline


class TinyBlock(nn.Module):
    """norm -> projection -> residual, the shape of every pre-norm transformer sub-layer."""

    def __init__(self, hidden, dtype):
        super().__init__()
        self.norm = RMSNorm(hidden, eps=1e-5, dtype=dtype)
        self.proj = nn.Linear(hidden, hidden, bias=False, dtype=dtype)

    def forward(self, x):
        return x + self.proj(self.norm(x))


def eager_numerics():
    print("== eager: torch.ops.airfuse.rms_norm on the CPU vs a float64 reference ==")
    torch.manual_seed(0)
    x64 = torch.randn(8, 4096, dtype=torch.float64)
    gamma64 = torch.rand(4096, dtype=torch.float64) + 0.5
    reference = x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + 1e-5) * gamma64
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        y, rstd = torch.ops.airfuse.rms_norm(x64.to(dtype), gamma64.to(dtype), 1e-5)
        error = (y.double() - reference).abs().max().item()
        print(f"  {str(dtype):15} y {str(y.dtype):15} rstd {str(rstd.dtype):14} max |error| = {error:.3e}")


def _tiny_block():
    torch.manual_seed(0)
    return TinyBlock(256, torch.float16).requires_grad_(False)


def graph_capture():
    print("\n== graph mode: the GE graph TorchAir builds for TinyBlock ==")
    model = _tiny_block()
    x = torch.randn(4, 16, 256, dtype=torch.float16)
    capture = airfuse.capture_ge_graph(model, x, dynamic=True)
    print(f"  TorchAir: {'offline (no NPU)' if is_offline() else 'native'}; graph breaks: {capture.graph_breaks}")
    print("  GE op types:", dict(sorted(capture.op_types().items())))
    for node in capture.nodes("AirfuseRmsNorm"):
        attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
        print(f"  node {node.name}: type {node.type}, inputs {list(node.inputs)}, attrs {attrs}, "
              f"outputs {list(node.output_names)} {list(node.output_dtypes)}")


def compiled_run():
    print("\n== graph mode: torch.compile(TinyBlock, backend=airfuse.get_npu_backend()) vs eager ==")
    model = _tiny_block()
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), dynamic=True, fullgraph=True)
    for batch, seq in ((4, 16), (3, 40)):
        x = torch.randn(batch, seq, 256, dtype=torch.float16)
        error = (compiled(x).float() - model(x).float()).abs().max().item()
        print(f"  x {list(x.shape)} float16: max |compiled - eager| = {error:.3e}")


if __name__ == "__main__":
    eager_numerics()
    graph_capture()
    compiled_run()
