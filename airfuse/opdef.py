"""Op definitions: the one place that says what each airfuse op is.

An ``OpDefinition`` holds the torch schema, the GE IR (type, inputs, outputs, attrs, in order) and
the dtype combinations the IR supports. Everything else is derived from it or checked against it:
the ``torch.library`` registration, the IR registry of offline TorchAir, the converters' checks,
op_host's OpDef (checked by a test) and the tests themselves.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

NAMESPACE = "airfuse"
IR_PREFIX = "Airfuse"

REQUIRED, OPTIONAL, DYNAMIC = "required", "optional", "dynamic"
BACKWARD_SUFFIX = "_backward"

# GE attribute type (the ``torchair.ge.attr`` builder name) -> the VT tag GE reports for it.
GE_ATTR_VT = {
    "Float": "VT_FLOAT",
    "Int": "VT_INT",
    "Bool": "VT_BOOL",
    "Str": "VT_STRING",
    "ListInt": "VT_LIST_INT",
}

# Schema type each GE attribute type takes on the torch side.
_SCHEMA_TYPE_OF_ATTR = {"Float": "float", "Int": "int", "Bool": "bool", "Str": "str", "ListInt": "List[int]"}

# The IR's floating dtypes. CPU kernels also accept float64 in every floating slot (the reference
# dtype, for gradcheck); the IR and the NPU kernels do not.
IR_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
REFERENCE_DTYPE = torch.float64


def _when_not_true(check):
    """``check`` (a ``torch._check*``) skipped when the condition is already the Python bool True.
    torch._check costs about a microsecond; every eager call and every fake call on static sizes
    passes plain bools, while SymBools (dynamic shapes) still go through ``check``, which records a
    runtime assertion rather than specializing."""

    def checked(condition, message):
        if condition is not True:
            check(condition, message)

    return checked


ensure = _when_not_true(torch._check)
ensure_type = _when_not_true(torch._check_type)
ensure_value = _when_not_true(torch._check_value)
ensure_index = _when_not_true(torch._check_index)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype kernels compute in: float32 for the IR dtypes (rounded once to the output's), as
    the NPU kernels do, and float64 for the float64 reference dtype."""
    return REFERENCE_DTYPE if dtype == REFERENCE_DTYPE else torch.float32


def _camel(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("_"))


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class IrParam:
    """An IR input or output: its name and whether it is required, optional or dynamic."""

    name: str
    kind: str = REQUIRED


@dataclass(frozen=True)
class IrAttr:
    """An IR attribute: its name, GE attr type (``torchair.ge.attr`` builder name) and default.
    ``choices`` lists every value a Str attr may take (e.g. rope's modes); the op refuses others."""

    name: str
    ge_type: str
    default: object
    choices: tuple = ()

    @property
    def vt(self) -> str:
        return GE_ATTR_VT[self.ge_type]


@dataclass(frozen=True)
class Layout:
    """How an op's tensors line up, which is all that splitting it across devices needs
    (``airfuse.distributed`` derives each op's DTensor sharding rule from it).

    Every tensor not named in ``per_feature`` has the first input's rank, and along each dim the
    first input's size or 1 (broadcast, as rope's cos/sin). ``whole_dim`` is the dim of the first
    input whose values the op mixes (the normalized dim, the rotated dim, swiglu's split dim): -1,
    or the name of the Int attr that gives it; None for elementwise ops. Every other dim can be
    split. ``per_feature`` tensors are 1-D along ``whole_dim`` (gamma, dgamma): an input one is
    read whole by every row, and an output one is a sum over every row. ``linear_in`` names the
    inputs every output is linear in, the others fixed (add's x and y, a backward's dy): partial
    sums of them give partial sums of the outputs."""

    whole_dim: int | str | None
    per_feature: tuple[str, ...] = ()
    linear_in: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpDefinition:
    """One airfuse op. ``name`` is the snake_case base name used in every folder."""

    name: str
    schema: str
    inputs: tuple[IrParam, ...]
    outputs: tuple[IrParam, ...]
    attrs: tuple[IrAttr, ...]
    # One dict per supported combination, keyed by IR input and output names.
    dtype_combos: tuple[dict, ...]
    layout: Layout | None = None

    def __post_init__(self):
        self._check_schema_matches_ir(torch._C.parse_schema(f"{self.qualname}{self.schema}"))
        self._check_dtype_combos()
        self._check_layout()

    @property
    def qualname(self) -> str:
        return f"{NAMESPACE}::{self.name}"

    @property
    def module_name(self) -> str:
        """The base name of the op's files in airfuse/ops, meta and converters: a backward op lives
        with its forward op (rms_norm_backward in rms_norm.py)."""
        return self.name.removesuffix(BACKWARD_SUFFIX)

    @property
    def ir_base_name(self) -> str:
        """snake_case name on the CANN side: a torch ``*_backward`` op is IR ``*Grad``, as in CANN."""
        if self.name.endswith(BACKWARD_SUFFIX):
            return self.name.removesuffix(BACKWARD_SUFFIX) + "_grad"
        return self.name

    @property
    def ir_type(self) -> str:
        return IR_PREFIX + _camel(self.ir_base_name)

    @property
    def aclnn_name(self) -> str:
        return "aclnn" + self.ir_type

    @property
    def kernel_symbol(self) -> str:
        return f"{NAMESPACE}_{self.ir_base_name}"

    @property
    def public_name(self) -> str:
        """How errors name the op: the way users call it."""
        return f"{NAMESPACE}.{self.name}"

    @property
    def tensor_args(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.inputs)

    def ir_def(self):
        """``get_registered_ir_def``'s answer for this IR: (status, inputs, outputs, attrs)."""
        return (
            "SUCCESS",
            [(p.name, p.kind) for p in self.inputs],
            [(p.name, p.kind) for p in self.outputs],
            [(a.name, a.vt) for a in self.attrs],
        )

    def allowed_dtypes(self, name: str, chosen: dict, *, reference: bool) -> list[torch.dtype]:
        """Dtypes ``name`` may take given the dtypes already ``chosen`` for other inputs."""
        allowed = []
        for combo in self.combos(reference=reference):
            if all(combo[k] == v for k, v in chosen.items()) and combo[name] not in allowed:
                allowed.append(combo[name])
        return allowed

    def combos(self, *, reference: bool) -> list[dict]:
        combos = list(self.dtype_combos)
        if reference:
            combos.append({k: REFERENCE_DTYPE if v in IR_FLOAT_DTYPES else v for k, v in self.dtype_combos[0].items()})
        return combos

    @functools.cached_property
    def _combo_by_input_dtypes(self) -> dict:
        """For reference=False/True: the combinations keyed by their input dtypes in IR order."""
        return {
            reference: {tuple(c[name] for name in self.tensor_args): c for c in self.combos(reference=reference)}
            for reference in (False, True)
        }

    def check_input_dtypes(self, tensors: dict, *, reference: bool = True) -> dict:
        """Raise TypeError naming the op and argument unless the input dtypes are a supported
        combination; return the matching combination (which also gives the output dtypes).
        Every eager call runs this: a supported combination is one table look-up, and only
        refused input pays for working out which argument to blame."""
        try:
            return self._combo_by_input_dtypes[reference][tuple(tensors[name].dtype for name in self.tensor_args)]
        except (AttributeError, KeyError, TypeError):
            return self._explain_input_dtypes(tensors, reference=reference)

    def _explain_input_dtypes(self, tensors: dict, *, reference: bool) -> dict:
        chosen = {}
        for name in self.tensor_args:
            check_is_tensor(self, name, tensors[name])
            dtype = tensors[name].dtype
            allowed = self.allowed_dtypes(name, chosen, reference=reference)
            given = ", ".join(f"{k}={dtype_name(v)}" for k, v in chosen.items())
            ensure_type(
                dtype in allowed,
                lambda: f"{self.public_name}: {name} has dtype {dtype_name(dtype)}{f' with {given}' if given else ''}; "
                f"expected one of {', '.join(dtype_name(d) for d in allowed)}",
            )
            chosen[name] = dtype
        return next(c for c in self.combos(reference=reference) if all(c[k] == v for k, v in chosen.items()))

    def _check_schema_matches_ir(self, parsed: torch._C.FunctionSchema):
        # Tensors first, then attrs, each in IR order and with IR names: TorchAir's positional
        # custom_op form and its auto-converter both rely on this order.
        args = parsed.arguments
        expected = [p.name for p in self.inputs] + [a.name for a in self.attrs]
        if [a.name for a in args] != expected:
            raise AssertionError(f"{self.qualname}: schema arguments {[a.name for a in args]} != IR {expected}")
        for arg in args[: len(self.inputs)]:
            if "Tensor" not in str(arg.type):
                raise AssertionError(f"{self.qualname}: IR input {arg.name} is not a Tensor in the schema")
        for arg, attr in zip(args[len(self.inputs):], self.attrs, strict=True):
            if str(arg.type) != _SCHEMA_TYPE_OF_ATTR[attr.ge_type]:
                raise AssertionError(f"{self.qualname}: attr {attr.name} is {arg.type} in the schema, IR says {attr.ge_type}")
            if not _same_default(arg.default_value, attr.default):
                raise AssertionError(f"{self.qualname}: attr {attr.name} default {arg.default_value} != IR {attr.default}")
            if (attr.ge_type == "Str") != bool(attr.choices) or (attr.choices and attr.default not in attr.choices):
                raise AssertionError(f"{self.qualname}: attr {attr.name} must list its choices (Str attrs only), default included")
        if [r.name for r in parsed.returns] != [p.name for p in self.outputs]:
            raise AssertionError(f"{self.qualname}: schema returns {[r.name for r in parsed.returns]} != IR outputs")

    def _check_dtype_combos(self):
        names = {p.name for p in self.inputs + self.outputs}
        for combo in self.dtype_combos:
            if set(combo) != names:
                raise AssertionError(f"{self.qualname}: dtype combination {combo} does not name exactly {sorted(names)}")


    def _check_layout(self):
        layout = self.layout
        if layout is None:
            return
        names = {p.name for p in self.inputs + self.outputs}
        if not set(layout.per_feature) <= names or not set(layout.linear_in) <= set(self.tensor_args):
            raise AssertionError(f"{self.qualname}: layout names tensors the op does not have: {layout}")
        if self.inputs[0].name in layout.per_feature:
            raise AssertionError(f"{self.qualname}: layout: the first input sets the rank and cannot be per_feature")
        if layout.per_feature and layout.whole_dim is None:
            raise AssertionError(f"{self.qualname}: layout: per_feature tensors lie along a whole_dim, and there is none")
        int_attrs = {a.name for a in self.attrs if a.ge_type == "Int"}
        if isinstance(layout.whole_dim, str) and layout.whole_dim not in int_attrs:
            raise AssertionError(f"{self.qualname}: layout: whole_dim {layout.whole_dim!r} is not an Int attr")


def _same_default(schema_default, ir_default) -> bool:
    if isinstance(ir_default, float):
        return schema_default is not None and math.isclose(schema_default, ir_default, rel_tol=1e-12)
    return schema_default == ir_default


def check_is_tensor(op: OpDefinition, name: str, value):
    # Anything with a torch dtype: tensors, fake tensors, and the converters' dtype-only views of GE tensors.
    ensure_type(
        isinstance(getattr(value, "dtype", None), torch.dtype),
        lambda: f"{op.public_name}: {name} must be a Tensor, got {type(value).__name__}",
    )


# The largest float32: a GE / NPU Float attr is float32, so a larger magnitude would become inf.
_FLOAT32_MAX = float(torch.finfo(torch.float32).max)


def check_attr_float(op: OpDefinition, name: str, value, *, minimum: float = 0.0):
    """Attrs such as epsilon: a real number >= ``minimum`` that is finite as a float32 (the IR's
    Float). Python and numpy bools are refused (True is not an epsilon); numpy floats and ints are
    taken as the numbers they are. Eager calls through ``torch.ops`` never reach this with a bool
    or a 0-d tensor: PyTorch's argument parser has already turned them into a float."""
    ensure_type(
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)),
        lambda: f"{op.public_name}: {name} must be a float, got {type(value).__name__}",
    )
    number = float(value)
    ensure_value(
        math.isfinite(number) and number >= minimum and abs(number) <= _FLOAT32_MAX,
        lambda: f"{op.public_name}: {name} must be a finite float32 number >= {minimum:g}, got {number}",
    )


def check_attr_int(op: OpDefinition, name: str, value):
    """Int attrs such as dim: a Python or numpy integer, not a bool."""
    ensure_type(
        isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)),
        lambda: f"{op.public_name}: {name} must be an int, got {type(value).__name__}",
    )


def check_same_shape(op: OpDefinition, tensors: dict):
    """Elementwise ops stream their inputs once on the NPU: shapes must match, no broadcasting."""
    first_name, first = next(iter(tensors.items()))
    for name, tensor in tensors.items():
        ensure(
            tensor.shape == first.shape,
            lambda: f"{op.public_name}: {name} must have {first_name}'s shape {list(first.shape)}, got {list(tensor.shape)} (no broadcasting)",
        )


def check_attr_choice(op: OpDefinition, name: str, value):
    """Str attrs such as rope's mode: one of the values the op definition lists for them."""
    [attr] = [a for a in op.attrs if a.name == name]
    ensure_type(isinstance(value, str), lambda: f"{op.public_name}: {name} must be a str, got {type(value).__name__}")
    ensure_value(
        value in attr.choices,
        lambda: f"{op.public_name}: {name} must be one of {', '.join(map(repr, attr.choices))}, got {value!r}",
    )


def check_same_device(op: OpDefinition, tensors: dict):
    first_name, first = next(iter(tensors.items()))
    for name, tensor in tensors.items():
        ensure(
            tensor.device == first.device,
            lambda: f"{op.public_name}: {name} is on {tensor.device} but {first_name} is on {first.device}",
        )


def check_not_empty(op: OpDefinition, tensors: dict):
    for name, tensor in tensors.items():
        ensure(tensor.numel() != 0, lambda: f"{op.public_name}: {name} is empty (shape {list(tensor.shape)})")

