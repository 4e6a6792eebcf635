"""airfuse ops, one module per op: definition, input checks, autograd, and the Python math that
the fused C++ CPU kernels (csrc/cpu) replaced, kept as ``*_reference`` for the tests.

Importing a module defines its ops as ``torch.ops.airfuse.*``; importing this package then loads
the C++ kernels (airfuse/cpu_kernels.py).
"""

from .. import cpu_kernels
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

cpu_kernels.load()
