"""airfuse: fused LLM operators for Ascend NPUs, eager and in TorchAir graph mode.

``import airfuse`` registers every op as ``torch.ops.airfuse.*`` (schema, CPU kernel, fake impl,
autograd), where torch_npu imports the NPU eager kernels (``airfuse.npu_binding``) and, where
TorchAir is installed natively, the TorchAir converters, and where torch.distributed is built, the
ops' DTensor sharding rules (``airfuse.distributed``). Without an NPU,
``get_npu_backend`` and ``capture_ge_graph`` run TorchAir offline (``airfuse.offline``).
"""

import torch

from . import ops
from . import meta  # noqa: F401  (registers the fake impls)
from . import modules, offline, testing  # public modules, usable as airfuse.<module> after `import airfuse`
from .aclgraph_capture import AclCapture, AclGraphCapture, capture_aclgraph
from .capture import GeCapture, GeNode, capture_ge_graph
from .npu_binding import load_where_torch_npu_imports
from .patching import patch
from .torchair_env import default_decompositions, get_npu_backend, import_torchair, native_torchair_available

__all__ = [
    "AclCapture", "AclGraphCapture", "GeCapture", "GeNode", "capture_aclgraph", "capture_ge_graph", "default_decompositions", "get_npu_backend", "modules", "offline", "ops",
    "patch", "testing",
]

load_where_torch_npu_imports()
if torch.distributed.is_available():
    from .distributed import register_sharding_rules

    register_sharding_rules()
if native_torchair_available():
    import_torchair()
