"""Fake-tensor (meta) implementations, one module per op module of airfuse/ops, named alike;
importing this package imports every module in it, which registers them.

Installed as ``airfuse.meta`` (setup.py maps this top-level folder into the package).
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
