"""``python -m airfuse.offline``: fetch offline TorchAir into the cache (once per machine)."""

from .fetch import TORCH_NPU_VERSION, fetch

print(f"offline TorchAir {TORCH_NPU_VERSION}: {fetch()}")
