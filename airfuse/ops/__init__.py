"""airfuse ops, one module per op: definition, input checks, CPU kernel, autograd.

Importing a module defines its ops as ``torch.ops.airfuse.*``.
"""

from .add import ADD
from .add_rms_norm import ADD_RMS_NORM
from .gelu import GELU, GELU_BACKWARD
from .rms_norm import RMS_NORM, RMS_NORM_BACKWARD
from .rope import ROPE, ROPE_BACKWARD
from .silu_mul import SILU_MUL, SILU_MUL_BACKWARD
from .swiglu import SWIGLU, SWIGLU_BACKWARD

ALL_OPS = {
    op.name: op
    for op in (
        RMS_NORM, RMS_NORM_BACKWARD, ADD, ADD_RMS_NORM, SILU_MUL, SILU_MUL_BACKWARD, SWIGLU, SWIGLU_BACKWARD,
        ROPE, ROPE_BACKWARD, GELU, GELU_BACKWARD,
    )
}
OPS_BY_IR_TYPE = {op.ir_type: op for op in ALL_OPS.values()}
