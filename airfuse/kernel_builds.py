"""The kernel builds CANN makes of airfuse's kernels, derived from the op definitions.

CANN compiles one kernel binary per chip and per dtype combination the op's OpDef declares for
that chip, with ``DTYPE_<NAME>`` defined to the C type of every IR input and output (op_host's
OpDef declares op.dtype_combos on 910B and, 310P having no bfloat16, the rest there:
op_host/opdef_common.h, checked by tests/kernels/test_consistency.py). The vendor check compiles
exactly these builds against CANN's headers (vendor_check/kernels.cmake reads them at configure
time):

    python -m airfuse.kernel_builds

prints one build a line: ``chip,kernel source,build name,DTYPE_X=float,DTYPE_GAMMA=half,...``.

The CPU twin (CMakeLists.txt) compiles each kernel once per dtype combination of its op, whatever the
chip, with the same macros; its entry symbol gets a suffix of the dtypes that tell the combinations
apart (``twin_name``), so that all coexist in one library and airfuse/twin.py finds them:

    python -m airfuse.kernel_builds --twin

prints one a line: ``kernel source,entry symbol,twin name,DTYPE_X=float,...``.

The vendor-API twin (twin/vendor_api) compiles the kernels against CANN's headers, whose branch
differs per chip, so it holds every chip's builds: 910B's under the home-made twin's names, every
other chip's under the twin name with the chip appended (``vendor_twin_name``):

    python -m airfuse.kernel_builds --vendor-twin

prints one a line: ``chip,kernel source,entry symbol,vendor twin name,DTYPE_X=float,...``.
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
    def twin_name(self) -> str:
        """The twin's name for this build: the entry symbol and the dtypes of ``twin_dtype_params``
        (airfuse_rms_norm__float16_float32 for x float16, gamma float32)."""
        return "__".join([self.op.kernel_symbol, "_".join(dtype_name(self.combo[p]) for p in twin_dtype_params(self.op))])

    @property
    def dtype_macros(self) -> list[str]:
        params = dict.fromkeys(p.name for p in self.op.inputs + self.op.outputs)
        return [f"DTYPE_{p.upper()}={KERNEL_C_TYPE[self.combo[p]]}" for p in params]


def twin_dtype_params(op: OpDefinition) -> list[str]:
    """The inputs, in IR order, whose dtype the earlier ones' dtypes do not fix across the op's
    combinations: enough to tell the combinations apart (x and gamma for rms_norm, x alone for add)."""
    chosen = []
    for name in op.tensor_args:
        dtype_given_chosen = {}
        for combo in op.dtype_combos:
            if dtype_given_chosen.setdefault(tuple(combo[p] for p in chosen), combo[name]) != combo[name]:
                chosen.append(name)
                break
    return chosen


def kernel_ops(ops) -> list[OpDefinition]:
    """The ops that have an Ascend C kernel (kernels/<IR base name>.cpp)."""
    return [op for op in ops if (KERNELS / f"{op.ir_base_name}.cpp").exists()]


def kernel_builds(ops) -> list[KernelBuild]:
    return [KernelBuild(chip, op, combo) for chip, combos_of in CHIP_DTYPE_COMBOS.items()
            for op in kernel_ops(ops) for combo in combos_of(op)]


# One twin library serves every chip it models: it holds 910B's builds, every combination of the op definition.
TWIN_BUILDS_CHIP = "ascend910b"


def twin_builds(ops) -> list[KernelBuild]:
    return [build for build in kernel_builds(ops) if build.chip == TWIN_BUILDS_CHIP]


def vendor_twin_name(twin_name: str, chip: str) -> str:
    """The vendor-API twin's name for the build of ``twin_name`` for ``chip`` (a compute unit:
    ascend910b, ascend310p): 910B's builds keep the twin name, the others end in ``__<chip>``
    (airfuse_add__float16__ascend310p)."""
    if chip not in CHIP_DTYPE_COMBOS:
        raise ValueError(f"kernel builds: unknown chip {chip!r} (known: {', '.join(CHIP_DTYPE_COMBOS)})")
    return twin_name if chip == TWIN_BUILDS_CHIP else f"{twin_name}__{chip}"


def main(argv=None) -> None:
    import argparse

    from .ops import ALL_OPS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    listing = parser.add_mutually_exclusive_group()
    listing.add_argument("--twin", action="store_true", help="the CPU twin's builds instead of CANN's")
    listing.add_argument("--vendor-twin", action="store_true", help="the vendor-API twin's builds: every chip's, named per chip")
    args = parser.parse_args(argv)
    if args.vendor_twin:
        for build in kernel_builds(ALL_OPS.values()):
            print(",".join([build.chip, build.source, build.op.kernel_symbol, vendor_twin_name(build.twin_name, build.chip),
                            *build.dtype_macros]))
        return
    if args.twin:
        for build in twin_builds(ALL_OPS.values()):
            print(",".join([build.source, build.op.kernel_symbol, build.twin_name, *build.dtype_macros]))
        return
    for build in kernel_builds(ALL_OPS.values()):
        print(",".join([build.chip, build.source, build.name, *build.dtype_macros]))


if __name__ == "__main__":
    main()
