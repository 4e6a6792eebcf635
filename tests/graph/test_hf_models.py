"""Hugging Face transformers models (tiny configs, random weights) compiled with TorchAir's NPU
backend and run offline by the GE executor, against the same model run eagerly.

Each family runs with the attention Hugging Face picks by default (SDPA, decomposed offline by
``get_npu_backend``; Gemma2: eager, as transformers 5.23 refuses SDPA for it) and with eager
attention. A dynamic run compiles once and checks three sequence lengths with no recompilation; a
static run compiles once per length. Compiles dominate the time, so ``make test`` covers every axis
per (family, attention) rather than their cross product: the dtype and the KV cache alternate
between the dynamic and the static run, so each family covers float32 and bfloat16, static and
dynamic, cache on (the default call) and off:

    attention  dynamic (3 lengths)     static (3 lengths)
    default    float32, cache on       bfloat16, cache off
    eager      bfloat16, cache off     float32, cache on

``make hf-matrix`` (``AIRFUSE_HF_MATRIX=full``) runs the whole cross product: every family x
attention x {float32, bfloat16} x {cache on, off} x {dynamic, static}.

A compiled training step (default attention, float32, labels -> loss -> backward) is checked per
family too. The MoE families (Mixtral, Qwen2-MoE, Qwen3-MoE) run transformers' default grouped-matmul
experts, their data-dependent routing (top-k, sort, histc, grouped matmuls over the per-expert
counts) in one graph with static shapes (``airfuse.torchair_gaps``): no graph break. Their compiles
are the slowest, so ``make test`` runs Mixtral's training step only (and each family's static
forward in tests/fusion/test_more_families.py); ``make hf-matrix`` all three on every axis.
"""

import os

import pytest
import torch

import airfuse
from airfuse.opdef import dtype_name
from airfuse.testing import CAUSAL_LM_FAMILIES, MOE_FAMILIES, tiny_causal_lm

# Largest |compiled - eager| relative to max |eager|. float32: a few roundings (measured <= 1e-6).
# bfloat16: eager and the GE graph round intermediates at different points (SDPA's CPU kernel vs
# its decomposition, GE softmax/means in float32, ...), each rounding worth up to 2^-8 of a value
# (measured <= 5.3e-3, so about 4x headroom).
REL_TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2}
GRAD_REL_TOL = 1e-5  # float32 training step: measured <= 6.1e-7
SEQ_LENS = (5, 7, 11)  # none equals a model dim (see airfuse.testing), so none recompiles
BATCH = 2
DTYPES = (torch.float32, torch.bfloat16)
FULL_MATRIX = os.environ.get("AIRFUSE_HF_MATRIX") == "full"


def _runs(family):
    """(attention, dynamic, dtype, use_cache) to check for ``family``."""
    if FULL_MATRIX:
        # Gemma2's default attention is eager: its "eager" runs would repeat its "default" ones.
        attentions = ("default",) if family == "gemma2" else ("default", "eager")
        return [
            (attention, dynamic, dtype, use_cache)
            for attention in attentions
            for dynamic in (True, False)
            for dtype in DTYPES
            for use_cache in (True, False)
        ]
    if family in MOE_FAMILIES:
        # Their compiles are the slowest (Mixtral's dynamic run with the cache took 206 s on a loaded
        # 2-core host): make test compiles each statically in tests/fusion/test_more_families.py.
        return []
    return [
        ("default", True, torch.float32, True),
        ("default", False, torch.bfloat16, False),
        ("eager", True, torch.bfloat16, False),
        ("eager", False, torch.float32, True),
    ]


def _family_runs():
    return [
        pytest.param(family, run, id=f"{family}-{_run_id(run)}") for family in CAUSAL_LM_FAMILIES for run in _runs(family)
    ]


def _run_id(run):
    attention, dynamic, dtype, use_cache = run
    return f"{attention}-{'dynamic' if dynamic else 'static'}-{dtype_name(dtype)}-cache_{'on' if use_cache else 'off'}"


class CountingBackend:
    """airfuse's default backend, counting the graphs Dynamo hands it (one per (re)compilation)."""

    def __init__(self):
        self.backend = airfuse.get_npu_backend()
        self.compiles = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        return self.backend(gm, example_inputs)


def _relative_error(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape, expected.shape)
    scale = expected.float().abs().max().clamp_min(1e-30)
    return ((actual.float() - expected.float()).abs().max() / scale).item()


def _ids(seq):
    return torch.randint(0, 128, (BATCH, seq))


def _model(family, attention, dtype):
    return tiny_causal_lm(family, attn_implementation=None if attention == "default" else attention, dtype=dtype)


def _check_logits(family, model, compiled, seq, use_cache, dtype):
    ids = _ids(seq)
    call = {} if use_cache else {"use_cache": False}  # the default call keeps Hugging Face's cache on
    with torch.no_grad():
        got, want = compiled(ids, **call), model(ids, **call)
    assert (got.past_key_values is not None) == use_cache
    error = _relative_error(got.logits, want.logits)
    assert error <= REL_TOL[dtype], f"{family} {dtype} seq={seq} cache={use_cache}: relative error {error:.3g}"


def test_default_attention_is_sdpa_except_gemma2():
    """What "default" attention means below."""
    defaults = {family: tiny_causal_lm(family).config._attn_implementation for family in CAUSAL_LM_FAMILIES}
    assert defaults == {family: "eager" if family == "gemma2" else "sdpa" for family in CAUSAL_LM_FAMILIES}


@pytest.mark.parametrize("family, run", _family_runs())
def test_logits_equal_eager(family, run):
    """Dynamic: the graphs compiled for the first length serve the other two. Static: each length
    compiles graphs of its own (so the run really is static)."""
    attention, dynamic, dtype, use_cache = run
    model = _model(family, attention, dtype)
    backend = CountingBackend()
    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
    for index, seq in enumerate(SEQ_LENS):
        before = backend.compiles
        _check_logits(family, model, compiled, seq, use_cache, dtype)
        if dynamic and index > 0:
            assert backend.compiles == before, f"{family}: sequence length {seq} recompiled a dynamic graph"
        if not dynamic:
            assert backend.compiles > before, f"{family}: sequence length {seq} reused a static graph"


def _training_step(model, run, ids):
    """``run`` (the model or its compiled form) on a next-token loss: the loss and every gradient."""
    model.zero_grad(set_to_none=True)
    loss = run(ids, labels=ids, use_cache=False).loss
    loss.backward()
    return {"loss": loss.detach(), **{name: p.grad for name, p in model.named_parameters()}}


@pytest.mark.parametrize("family", [f for f in CAUSAL_LM_FAMILIES if FULL_MATRIX or f not in MOE_FAMILIES or f == "mixtral"])
def test_training_step_gradients_equal_eager(family):
    model = _model(family, "default", torch.float32).train()
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), dynamic=False)
    ids = _ids(SEQ_LENS[1])
    got, want = _training_step(model, compiled, ids), _training_step(model, model, ids)
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] is not None, f"{family}: compiled step left {name} without a gradient"
        error = _relative_error(got[name], want[name])
        assert error <= GRAD_REL_TOL, f"{family} {name}: relative error {error:.3g}"
