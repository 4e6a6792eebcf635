"""Hugging Face transformers models (tiny configs, random weights) compiled with TorchAir's NPU
backend and run offline by the GE executor, against the same model run eagerly.

Each family runs with the attention Hugging Face picks by default (SDPA, decomposed offline by
``get_npu_backend``; Gemma2: eager, as transformers 5.23 refuses SDPA for it) and with eager
attention. Compiles dominate the time, so every (family, attention) pair gets one dynamic
run (three sequence lengths, no recompilation) and one static run, and the dtype and the KV cache
alternate between them so that each family covers float32 and bfloat16, static and dynamic, cache
on (the default call) and off:

    attention  dynamic (3 lengths)     static
    default    float32, cache on       bfloat16, cache off
    eager      bfloat16, cache off     float32, cache on

A compiled training step (default attention, float32, labels -> loss -> backward) is checked per
family too.
"""

import pytest
import torch

import airfuse
from airfuse.testing import CAUSAL_LM_FAMILIES, tiny_causal_lm

# Largest |compiled - eager| relative to max |eager|. float32: a few roundings (measured <= 1e-6).
# bfloat16: eager and the GE graph round intermediates at different points (SDPA's CPU kernel vs
# its decomposition, GE softmax/means in float32, ...), each rounding worth up to 2^-8 of a value
# (measured <= 5.3e-3, so about 4x headroom).
REL_TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2}
GRAD_REL_TOL = 1e-5  # float32 training step: measured <= 6.1e-7
SEQ_LENS = (5, 7, 11)  # none equals a model dim (see airfuse.testing), so none recompiles
BATCH = 2
RUNS = {
    # attention: ((dtype, use_cache) dynamic, (dtype, use_cache) static)
    "default": ((torch.float32, True), (torch.bfloat16, False)),
    "eager": ((torch.bfloat16, False), (torch.float32, True)),
}


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


@pytest.mark.parametrize("attention", RUNS)
@pytest.mark.parametrize("family", CAUSAL_LM_FAMILIES)
def test_dynamic_logits_equal_eager_without_recompiling(family, attention):
    dtype, use_cache = RUNS[attention][0]
    model = _model(family, attention, dtype)
    backend = CountingBackend()
    compiled = torch.compile(model, backend=backend, dynamic=True)
    _check_logits(family, model, compiled, SEQ_LENS[0], use_cache, dtype)
    first = backend.compiles
    for seq in SEQ_LENS[1:]:
        _check_logits(family, model, compiled, seq, use_cache, dtype)
    assert backend.compiles == first, f"{family}: a new sequence length recompiled"


@pytest.mark.parametrize("attention", RUNS)
@pytest.mark.parametrize("family", CAUSAL_LM_FAMILIES)
def test_static_logits_equal_eager(family, attention):
    dtype, use_cache = RUNS[attention][1]
    model = _model(family, attention, dtype)
    compiled = torch.compile(model, backend=airfuse.get_npu_backend(), dynamic=False)
    _check_logits(family, model, compiled, SEQ_LENS[1], use_cache, dtype)


def _training_step(model, run, ids):
    """``run`` (the model or its compiled form) on a next-token loss: the loss and every gradient."""
    model.zero_grad(set_to_none=True)
    loss = run(ids, labels=ids, use_cache=False).loss
    loss.backward()
    return {"loss": loss.detach(), **{name: p.grad for name, p in model.named_parameters()}}


@pytest.mark.parametrize("family", CAUSAL_LM_FAMILIES)
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
