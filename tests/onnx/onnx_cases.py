"""One module calling every forward airfuse op in every case the ONNX translations distinguish,
for each dtype, so that each form is exported once for all of them (an export costs seconds).

Inputs have a symbolic batch (dim 0) and sequence dim; the models are exported at one size and run
at another. RoPE tables are real rotation tables (each angle repeated for its pair), which is what
ONNX's RotaryEmbedding takes.
"""

from dataclasses import dataclass
from typing import Callable

import torch

from airfuse._library import overload
from airfuse.ops import ALL_OPS

BATCH, SEQ = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=64)
EXPORT_SIZE, RUN_SIZE = (2, 5), (3, 7)
HIDDEN, HEADS, HEAD_DIM = 16, 4, 8
_F32 = torch.float32


@dataclass(frozen=True)
class Case:
    name: str
    op: str
    # (dtype, batch, seq, generator) -> the op's tensor inputs
    inputs: Callable
    # per input: which dims are (batch, seq), as (batch dim, seq dim) or None for a fixed-size input
    dynamic: tuple
    attrs: tuple = ()
    # only for 16-bit dtypes (a float32 gamma or float32 tables)
    half_only: bool = False


def _randn(shape, dtype, generator, scale=1.0):
    return (torch.randn(shape, generator=generator) * scale).to(dtype)


def _tables(shape, dtype, mode, generator):
    """cos and sin of random angles, each angle repeated for the two members of its pair."""
    angles = torch.rand((*shape[:-1], shape[-1] // 2), generator=generator) * 6.0
    full = torch.cat((angles, angles), -1) if mode == "half" else angles.repeat_interleave(2, -1)
    return full.cos().to(dtype), full.sin().to(dtype)


def _rope_inputs(x_shape, table_shape, mode, table_dtype=None):
    def make(dtype, b, s, g):
        x = _randn(x_shape(b, s), dtype, g)
        return (x, *_tables(table_shape(b, s), table_dtype or dtype, mode, g))

    return make


_BS = (0, 1)
_BHSD = (0, 2)
CASES = (
    Case("rms_norm", "rms_norm", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g, 3.0), _randn((HIDDEN,), dt, g)),
         (_BS, None), (1e-5,)),
    Case("rms_norm_f32_gamma", "rms_norm", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g), _randn((HIDDEN,), _F32, g)),
         (_BS, None), (1e-6,), half_only=True),
    Case("add_rms_norm", "add_rms_norm",
         lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g), _randn((b, s, HIDDEN), dt, g), _randn((HIDDEN,), dt, g)),
         (_BS, _BS, None), (1e-6,)),
    Case("add", "add", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g), _randn((b, s, HIDDEN), dt, g)), (_BS, _BS)),
    Case("silu_mul", "silu_mul", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g, 3.0), _randn((b, s, HIDDEN), dt, g)),
         (_BS, _BS)),
    Case("swiglu", "swiglu", lambda dt, b, s, g: (_randn((b, s, 2 * HIDDEN), dt, g, 3.0),), (_BS,), (-1,)),
    Case("gelu_tanh", "gelu", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g, 3.0),), (_BS,), ("tanh",)),
    Case("gelu_erf", "gelu", lambda dt, b, s, g: (_randn((b, s, HIDDEN), dt, g, 3.0),), (_BS,), ("none",)),
) + tuple(
    case
    for mode in ("half", "interleave")
    for case in (
        # (batch, heads, seq, head) with per-batch tables: RotaryEmbedding's 4-D form
        Case(f"rope_bhsd_{mode}", "rope",
             _rope_inputs(lambda b, s: (b, HEADS, s, HEAD_DIM), lambda b, s: (b, 1, s, HEAD_DIM), mode),
             (_BHSD, _BHSD, _BHSD), (mode,)),
        # (batch, seq, heads, head): the 3-D form with num_heads
        Case(f"rope_bshd_{mode}", "rope",
             _rope_inputs(lambda b, s: (b, s, HEADS, HEAD_DIM), lambda b, s: (b, s, 1, HEAD_DIM), mode),
             (_BS, _BS, _BS), (mode,)),
        # tables shared by the batch: broadcast (Expand) to the cache's batch
        Case(f"rope_shared_{mode}", "rope",
             _rope_inputs(lambda b, s: (b, HEADS, s, HEAD_DIM), lambda b, s: (1, 1, s, HEAD_DIM), mode),
             (_BHSD, (None, 2), (None, 2)), (mode,)),
        # rank 3: no RotaryEmbedding layout, written with Mul/Add
        Case(f"rope_rank3_{mode}", "rope",
             _rope_inputs(lambda b, s: (b, s, HEAD_DIM), lambda b, s: (1, s, HEAD_DIM), mode),
             (_BS, (None, 1), (None, 1)), (mode,)),
        Case(f"rope_f32_tables_{mode}", "rope",
             _rope_inputs(lambda b, s: (b, HEADS, s, HEAD_DIM), lambda b, s: (b, 1, s, HEAD_DIM), mode, _F32),
             (_BHSD, _BHSD, _BHSD), (mode,), half_only=True),
    )
)


def cases_for(dtype):
    return [c for c in CASES if dtype != _F32 or not c.half_only]


class AllOps(torch.nn.Module):
    """Calls each case's op on its slice of the inputs; returns every output of every call."""

    def __init__(self, plan):
        super().__init__()
        self.plan = plan  # [(case, number of inputs)]

    def forward(self, *inputs):
        outputs, start = [], 0
        for case, count in self.plan:
            result = overload(ALL_OPS[case.op])(*inputs[start:start + count], *case.attrs)
            outputs.extend(result if isinstance(result, tuple) else (result,))
            start += count
        return tuple(outputs)


def build(dtypes, size, seed=0):
    """(module, inputs, dynamic shapes, input names, output names) for ``dtypes``."""
    generator = torch.Generator().manual_seed(seed)
    plan, inputs, dynamic, input_names, output_names = [], [], [], [], []
    for dtype in dtypes:
        tag = str(dtype).removeprefix("torch.")
        for case in cases_for(dtype):
            tensors = case.inputs(dtype, *size, generator)
            plan.append((case, len(tensors)))
            opdef = ALL_OPS[case.op]
            for param, tensor, dims in zip(opdef.inputs, tensors, case.dynamic, strict=True):
                inputs.append(tensor)
                dynamic.append(None if dims is None else {d: dim for d, dim in zip(dims, (BATCH, SEQ)) if d is not None})
                input_names.append(f"{case.name}.{tag}.{param.name}")
            output_names += [f"{case.name}.{tag}.{p.name}" for p in opdef.outputs]
    return AllOps(plan), tuple(inputs), tuple(dynamic), input_names, output_names
