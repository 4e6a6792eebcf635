"""The composites the backend replaces by airfuse ops, as search and replacement functions.

Each search function is written the way the models write it (Hugging Face's code, ``torch.nn.functional``);
it is traced the same way as the graph it is matched against (``retrace.trace_aten``), so it matches
exactly those aten nodes, with the same dtypes, dims and constants: the pattern matcher retraces it
with the matched nodes' own shapes and dtypes and compares again, so a norm over another dim, a
missing cast or a moved epsilon is not a match. Only a norm's epsilon is a free scalar.
"""

import math

import torch
import torch.nn.functional as F

from ..opdef import IR_FLOAT_DTYPES
from ..ops.gelu import check_gelu
from ..ops.rms_norm import check_rms_norm
from ..ops.rope import check_rope
from ..ops.silu_mul import check_silu_mul
from ..ops.swiglu import check_swiglu

airfuse = torch.ops.airfuse


# -- RMSNorm ------------------------------------------------------------------------------------

def hf_rms_norm(x, weight, eps):
    """Llama's form (also Mistral, Qwen2/3, Phi-3): x * rstd rounded to x's dtype, then * weight."""
    h = x.to(torch.float32)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(variance + eps)
    return weight * h.to(x.dtype)


def hf_rms_norm_replacement(x, weight, eps):
    y = airfuse.rms_norm(x, weight, eps)[0]
    out_dtype = torch.promote_types(x.dtype, weight.dtype)
    return y if y.dtype == out_dtype else y.to(out_dtype)


def gemma_rms_norm(x, gamma, eps):
    """Gemma's form: x * rstd * gamma in float32, rounded once; gamma is ``1 + weight`` there, and
    stays in the graph as it is computed."""
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return (h * gamma).type_as(x)


def rms_norm_replacement(x, gamma, eps):
    return airfuse.rms_norm(x, gamma, eps)[0]


def functional_rms_norm(x, weight, eps):
    return F.rms_norm(x, [x.shape[-1]], weight, eps)


# -- RoPE ---------------------------------------------------------------------------------------

def _rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_rope(x, cos, sin):
    """Hugging Face's ``apply_rotary_pos_emb`` for one tensor, cos and sin already unsqueezed."""
    return (x * cos) + (_rotate_half(x) * sin)


def rope_replacement(x, cos, sin):
    return airfuse.rope(x, cos, sin, "half")


# -- gated MLP activations ----------------------------------------------------------------------

def silu_times(a, b):
    return F.silu(a) * b


def times_silu(a, b):
    return b * F.silu(a)


def silu_mul_replacement(a, b):
    return airfuse.silu_mul(a, b)


def chunked_silu_times(x):
    """Gate and up as the halves of one projection (Phi-3's gate_up_proj), in either product order."""
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


def chunked_times_silu(x):
    gate, up = x.chunk(2, dim=-1)
    return up * F.silu(gate)


def swiglu_replacement(x):
    return airfuse.swiglu(x, -1)


# -- GELU ---------------------------------------------------------------------------------------

def tanh_gelu_formula(x):
    """GPT-2's ``gelu_new``, written out."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def functional_tanh_gelu(x):
    return F.gelu(x, approximate="tanh")


def gelu_replacement(x):
    return airfuse.gelu(x, "tanh")


# -- when the airfuse op takes the matched tensors ----------------------------------------------

def accepts(check, *args) -> bool:
    """True if the airfuse op's own input check passes and every tensor is in an IR dtype (the
    CPU kernels also take float64, the NPU kernels do not)."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if any(t.dtype not in IR_FLOAT_DTYPES for t in tensors):
        return False
    try:
        check(*args)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


# (name, search, replacement, example inputs as (shape, dtype), op check taking the search arguments).
# Casts to a tensor's own dtype are dropped from graphs and patterns alike, so a norm's pattern is
# registered for a float32 input (no casts) and for a half-precision one (both casts).
_F32, _BF16 = torch.float32, torch.bfloat16
_X, _VEC, _HEADS = (2, 3, 8), (8,), (2, 2, 3, 8)
RMS_NORM_EPS = {"eps": 1e-6}  # the example value the matcher traces a norm's free epsilon with


def _functional_rms_norm_check(x, weight, eps):
    # F.rms_norm's output has x's dtype only when the weight's is x's too.
    return weight.dtype == x.dtype and check_rms_norm(x, weight, eps)


PATTERNS = tuple(
    entry
    for x_dtype in (_F32, _BF16)
    for entry in (
        ("hf_rms_norm", hf_rms_norm, hf_rms_norm_replacement, ((_X, x_dtype), (_VEC, x_dtype)), check_rms_norm),
        ("gemma_rms_norm", gemma_rms_norm, rms_norm_replacement, ((_X, x_dtype), (_VEC, _F32)), check_rms_norm),
    )
) + (
    ("functional_rms_norm", functional_rms_norm, rms_norm_replacement, ((_X, _F32), (_VEC, _F32)),
     _functional_rms_norm_check),
    ("rotate_half_rope", rotate_half_rope, rope_replacement, ((_HEADS, _F32), ((2, 1, 3, 8), _F32), ((2, 1, 3, 8), _F32)),
     lambda x, cos, sin: check_rope(x, cos, sin, "half")),
    ("chunked_silu_times", chunked_silu_times, swiglu_replacement, (((2, 3, 16), _F32),), lambda x: check_swiglu(x, -1)),
    ("chunked_times_silu", chunked_times_silu, swiglu_replacement, (((2, 3, 16), _F32),), lambda x: check_swiglu(x, -1)),
    ("tanh_gelu_formula", tanh_gelu_formula, gelu_replacement, ((_X, _F32),), lambda x: check_gelu(x, "tanh")),
    ("functional_tanh_gelu", functional_tanh_gelu, gelu_replacement, ((_X, _F32),), lambda x: check_gelu(x, "tanh")),
)

# Matched after PATTERNS, so that a SiLU product of two chunk halves becomes swiglu, not silu_mul.
LATE_PATTERNS = (
    ("silu_times", silu_times, silu_mul_replacement, ((_X, _F32), (_X, _F32)), check_silu_mul),
    ("times_silu", times_silu, silu_mul_replacement, ((_X, _F32), (_X, _F32)), check_silu_mul),
)
