"""Helpers for testing models with airfuse.

Graph-capture regression tests compare a capture's GE summary with a golden JSON file:

    capture = airfuse.capture_ge_graph(model, x)
    assert_matches_golden(capture, "tests/golden/my_model.json")

Set ``AIRFUSE_UPDATE_GOLDEN=1`` to (re)write the golden files instead of comparing; review the
diff before committing it.

``tiny_causal_lm("llama")`` builds a Hugging Face transformers model of that family from a tiny
config with random weights (no download), for checking graph mode on real model code quickly.
"""

import difflib
import json
import os
from pathlib import Path

import torch

UPDATE_ENV = "AIRFUSE_UPDATE_GOLDEN"


def assert_matches_golden(capture, path, **summary_options):
    path = Path(path)
    actual = _dump(capture.summary(**summary_options))
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    if not path.is_file():
        raise AssertionError(f"golden file {path} does not exist; run with {UPDATE_ENV}=1 to create it")
    expected = path.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(path), "captured"))
        raise AssertionError(f"GE graph differs from {path} (rerun with {UPDATE_ENV}=1 if intended):\n{diff}")


def _dump(summary) -> str:
    return json.dumps(summary, indent=1, sort_keys=False) + "\n"


# Tiny but complete: grouped-query attention (4 query heads, 2 KV heads), head_dim 8, every
# family's own features (Qwen2's QKV bias, Qwen3's q/k norms, Gemma's scaled embedding and
# GELU, Mistral's sliding window, Gemma2's soft-capping and alternating sliding/full attention, which needs two layers,
# the MoE families' routed experts).
# Test sequence lengths should differ from the model dims: TorchAir's view optimization
# (optimize_view in its continguous.py) guards on the sequence length differing from head_dim, so
# a length equal to it recompiles a dynamic graph.
_TINY = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
             max_position_embeddings=64)
_FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(num_hidden_layers=1)),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(num_hidden_layers=1, sliding_window=3)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(num_hidden_layers=1)),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(num_hidden_layers=1)),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", dict(num_hidden_layers=1)),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(num_hidden_layers=2, sliding_window=3)),
    # Mixture of experts: 4 experts, 2 per token (transformers' default grouped-matmul experts).
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", dict(num_hidden_layers=1, num_local_experts=4, num_experts_per_tok=2)),
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM", dict(num_hidden_layers=1, num_experts=4, num_experts_per_tok=2,
                                                                 moe_intermediate_size=16, shared_expert_intermediate_size=32)),
    "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM", dict(num_hidden_layers=1, num_experts=4, num_experts_per_tok=2,
                                                                 moe_intermediate_size=16)),
}
MOE_FAMILIES = ("mixtral", "qwen2_moe", "qwen3_moe")
CAUSAL_LM_FAMILIES = tuple(_FAMILIES)


def tiny_causal_lm(family, *, attn_implementation=None, dtype=torch.float32, seed=0, **config):
    """A random-weight transformers causal LM of ``family`` (one of ``CAUSAL_LM_FAMILIES``) from
    a tiny config (``config`` overrides it), in eval mode. ``attn_implementation=None`` keeps the
    attention Hugging Face picks by default (SDPA)."""
    import transformers

    if family not in _FAMILIES:
        raise ValueError(f"tiny_causal_lm: family must be one of {CAUSAL_LM_FAMILIES}, got {family!r}")
    config_name, model_name, family_config = _FAMILIES[family]
    options = {**_TINY, **family_config, **config}
    if attn_implementation is not None:
        options["attn_implementation"] = attn_implementation
    torch.manual_seed(seed)
    model = getattr(transformers, model_name)(getattr(transformers, config_name)(**options))
    return model.to(dtype).eval()
