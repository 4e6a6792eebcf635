"""The kernel builds CANN makes of airfuse's kernels, derived from the op definitions.

CANN compiles one kernel binary per chip and per dtype combination the op's OpDef declares for
that chip, with ``DTYPE_<NAME>`` defined to the C type of every IR input and output (op_host's
OpDef declares op.dtype_combos on 910B and, 310P having no bfloat16, the rest there:
op_host/opdef_common.h, checked by tests/kernels/test_consistency.py). The vendor check compiles
exactly these builds against CANN's headers (vendor_check/kernels.cmake reads them at configure
time):

    python -m airfuse.kernel_builds

prints one build a line: ``chip,kernel source,build name,DTYPE_X=float,DTYPE_GAMMA=half,...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from .opdef import OpDefinition, dtype_name

KERNELS = Path(__file__).resolve().parent.parent / "kernels"

# The SoC families op_host's OpDef declares an AI Core config for, and the dtype combinations of
# the op definition each one takes.
CHIP_DTYPE_COMBOS = {
    "ascend910b": lambda op: list(op.dtype_combos),
    "ascend310p": lambda op: [c for c in op.dtype_combos if torch.bfloat16 not in c.values()],
}

# The C type a kernel sees for each IR dtype (DTYPE_<NAME>).
KERNEL_C_TYPE = {torch.float32: "float", torch.float16: "half", torch.bfloat16: "bfloat16_t"}


@dataclass(frozen=True)
class KernelBuild:
    chip: str
    op: OpDefinition
    combo: dict

    @property
    def source(self) -> str:
        return f"{self.op.ir_base_name}.cpp"

    @property
    def name(self) -> str:
        """Unique per chip: the kernel's entry symbol and the dtypes in IR order."""
        params = [p.name for p in self.op.inputs + self.op.outputs]
        return "__".join([self.op.kernel_symbol, "_".join(dtype_name(self.combo[p]) for p in params)])

    @property
    def dtype_macros(self) -> list[str]:
        params = dict.fromkeys(p.name for p in self.op.inputs + self.op.outputs)
        return [f"DTYPE_{p.upper()}={KERNEL_C_TYPE[self.combo[p]]}" for p in params]


def kernel_ops(ops) -> list[OpDefinition]:
    """The ops that have an Ascend C kernel (kernels/<IR base name>.cpp)."""
    return [op for op in ops if (KERNELS / f"{op.ir_base_name}.cpp").exists()]


def kernel_builds(ops) -> list[KernelBuild]:
    return [KernelBuild(chip, op, combo) for chip, combos_of in CHIP_DTYPE_COMBOS.items()
            for op in kernel_ops(ops) for combo in combos_of(op)]


def main() -> None:
    from .ops import ALL_OPS

    for build in kernel_builds(ALL_OPS.values()):
        print(",".join([build.chip, build.source, build.name, *build.dtype_macros]))


if __name__ == "__main__":
    main()
