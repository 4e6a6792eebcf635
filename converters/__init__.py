"""TorchAir converters, one module per op module of airfuse/ops, named alike: each maps a
torch.ops.airfuse schema to its GE IR node.

Installed as ``airfuse.converters``. The modules import torchair, so they are imported by
``register_all``, which ``airfuse.torchair_env`` calls once TorchAir is importable: every module of
this package except the private helpers (``_emit``).
"""

import importlib
import pkgutil


def register_all():
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
