"""Tiny random-weight Hugging Face models, one per family airfuse.patch supports (no hub access)."""

import os

import torch

SIZES = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
             bos_token_id=1, eos_token_id=2, pad_token_id=0)

MOE = dict(num_local_experts=4, num_experts=4, moe_num_experts=4, num_experts_per_tok=2, moe_k=2, moe_topk=2,
           moe_intermediate_size=16, shared_expert_intermediate_size=32, decoder_sparse_step=1, mlp_only_layers=[],
           moe_layer_start_index=0, moe_num_shared_experts=0, num_shared_expert=0)

CONFIGS = {
    "llama": SIZES,
    "mistral": {**SIZES, "sliding_window": None},
    "qwen2": SIZES,
    "qwen3": SIZES,
    "gemma": SIZES,
    "gemma2": {**SIZES, "sliding_window": 3},
    "gemma3_text": {**SIZES, "sliding_window": 3},
    "phi3": {**SIZES, "num_key_value_heads": 4},
    "gpt2": dict(vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=1, eos_token_id=2),
    **{family: SIZES for family in ("granite", "smollm3", "hunyuan_v1_dense", "ministral", "seed_oss", "exaone4", "olmo2",
                                    "olmo3", "helium", "ernie4_5", "glm4", "phi")},
    # 4 experts, 2 per token; every layer sparse; Qwen2-MoE's shared expert too.
    **{family: {**SIZES, **MOE} for family in ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "hunyuan_v1_moe", "ernie4_5_moe")},
}

FAMILIES = tuple(CONFIGS)
# Supported families that are not named in issue 32 and are like one that is: their tests run with
# `make hf-matrix` (AIRFUSE_HF_MATRIX=full) only, to keep `make test` short.
FULL_MATRIX_ONLY = ("olmo3", "helium", "ministral", "seed_oss", "exaone4", "olmoe", "hunyuan_v1_moe", "ernie4_5_moe")
FULL_MATRIX = os.environ.get("AIRFUSE_HF_MATRIX") == "full"
TESTED_FAMILIES = tuple(family for family in FAMILIES if FULL_MATRIX or family not in FULL_MATRIX_ONLY)


def tiny_model(model_type: str, dtype=torch.float32, seed=0, layers=2, attention="eager", **config):
    """A causal LM of ``model_type`` with random weights and ``layers`` decoder layers (``config``
    overrides the family's settings): ``attention`` (eager by default), in eval mode (dropout off), in ``dtype``.
    Norm weights are randomised too (Gemma initialises them to zeros, which would hide its ``1 +``)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    layer_key = "n_layer" if model_type == "gpt2" else "num_hidden_layers"
    config = AutoConfig.for_model(model_type, **{**CONFIGS[model_type], layer_key: layers, **config})
    config._attn_implementation = attention
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation=attention).to(dtype).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name and parameter.dim() == 1:
                parameter.normal_(0.0, 0.5)
    return model


def token_ids(batch=2, seq=7, seed=1):
    """Token ids; the sequence length equals no model dim (a size shared with head_dim, say, would
    let Dynamo and TorchAir treat the two as one)."""
    return torch.randint(0, 64, (batch, seq), generator=torch.Generator().manual_seed(seed))
