"""TorchAir converters, one module per op: each maps a torch.ops.airfuse schema to its GE IR node.

Installed as ``airfuse.converters``. The modules import torchair, so they are imported by
``register_all``, which ``airfuse.torchair_env`` calls once TorchAir is importable.
"""

import importlib

_MODULES = ("add", "add_rms_norm", "gelu", "rms_norm", "rope", "silu_mul", "swiglu")


def register_all():
    for name in _MODULES:
        importlib.import_module(f"{__name__}.{name}")
