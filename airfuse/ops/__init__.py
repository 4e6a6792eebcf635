"""airfuse ops, one module per op: definition, input checks, autograd, and the Python math that
the fused C++ CPU kernels (csrc/cpu) replaced, kept as ``*_reference`` for the tests.

Importing a module defines its ops as ``torch.ops.airfuse.*``. This package imports every module in
it, so an op exists by being defined in ``airfuse/ops/<name>.py`` (its backward op beside it), and
then loads the C++ kernels (airfuse/cpu_kernels.py).
"""

import importlib
import pkgutil

from .. import cpu_kernels
from ..opdef import OpDefinition


def _discover() -> dict[str, OpDefinition]:
    """Every OpDefinition of this package's modules, by op name, each from the module named after
    it (a module may also import another's definitions)."""
    found = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, OpDefinition):
                found.setdefault(value.name, {})[module_info.name] = value
    ops = {}
    for name, by_module in sorted(found.items()):
        op = next(iter(by_module.values()))
        if by_module.get(op.module_name) is not op:
            raise ImportError(f"airfuse op {name}: its definition must be in airfuse/ops/{op.module_name}.py "
                              f"(found in {', '.join(f'airfuse/ops/{m}.py' for m in by_module)})")
        ops[name] = op
    return ops


ALL_OPS = _discover()
OPS_BY_IR_TYPE = {op.ir_type: op for op in ALL_OPS.values()}

cpu_kernels.load()
