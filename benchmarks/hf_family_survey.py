"""Every causal-LM model type transformers registers, built tiny and run eagerly: which run, and
at which stage and why the others fail.

Each type of transformers' ``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`` is tried with the tiny sizes
tests/fusion builds its families with (``tiny_hf_models.SIZES`` and ``MOE``): its config
(``AutoConfig.for_model``), its model (``AutoModelForCausalLM.from_config``, eager attention) and one
forward without grad on 2 x 7 token ids. A type that fails is tried again with its own settings
(``FAMILY_SETTINGS``: the sizes it requires, its sub-configs scaled down, values its default config
lacks). What fails even so is a failure of transformers itself, recorded with the stage, the
exception and the line that raised it. The model is first built on the meta device: one that would
still have more than ``MAX_PARAMETERS`` parameters fails at ``build`` without allocating them.

Prints one line per type and the counts, and writes the failing types to ``RESULTS`` (the
README's lists of failing families are checked against it by tests/fusion/test_hf_family_survey.py).

    .venv/bin/python benchmarks/hf_family_survey.py [model_type ...]   # a subset: prints, writes nothing
"""

import json
import resource
import sys
import traceback
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fusion"))
from tiny_hf_models import MOE, SIZES, token_ids  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "hf_family_survey.json"
MAX_PARAMETERS = 50_000_000  # the tiny models that run have well under 1M
STAGES = ("config", "build", "forward")
# Sizes removed from the shared ones when a family's settings give this value.
UNSET = object()

_HEADS_4 = dict(encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                encoder_layers=2, decoder_layers=2)
# Multi-head latent attention: ranks and per-part head dims scaled down; head_dim is the RoPE part's.
_LATENT = dict(q_lora_rank=16, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, head_dim=8,
               num_key_value_heads=4, n_group=1, topk_group=1, index_head_dim=16, index_n_heads=2, index_topk=4)
_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4, depth=1, num_heads=4,
               embed_dim=32, out_hidden_size=32, adapter_in_dim=32, adapter_input_size=32, adapter_out_dim=32)
# Sizes some sub-configs have beside the shared ones (per-layer embeddings, a byte model's global
# width, Gemma 4's wider full-attention heads per layer, Qwen4-Exp's token indexer).
_SUB_CONFIG_SIZES = dict(hidden_size_global=32, vocab_size_per_layer_input=64, hidden_size_per_layer_input=8)
_INDEXER = dict(indexer_n_heads=2, indexer_kv_heads=1, indexer_head_dim=8, indexer_budget=4, indexer_compress_ratio=2)


def _shared_sizes():
    return {**SIZES, **MOE}


def _linear_then_full(linear="linear_attention", full="full_attention"):
    # Hybrids put their first attention layer several layers in: with two layers they would have
    # none, and the cache then has no attention layer to take its length from.
    return dict(layer_types=[linear, full])


# Per family: (why the shared tiny sizes do not fit it, its settings). "sizes": the family needs
# other sizes or dims than the shared ones; "default": its default config lacks a value the model
# needs (a checkpoint's config has it).
FAMILY_SETTINGS = {
    **{family: ("sizes", _LATENT) for family in ("deepseek_v2", "deepseek_v3", "deepseek_v32", "axk1", "axk2",
                                                 "glm4_moe_lite", "glm_moe_dsa", "youtu", "longcat_flash", "minicpm3")},
    **{family: ("sizes", _linear_then_full()) for family in ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text")},
    **{family: ("sizes", {**_LATENT, **_linear_then_full()}) for family in ("bailing_hybrid", "kimi_linear")},
    "qwen4_exp_text": ("default", {**_INDEXER, **_linear_then_full(full="indexed_attention")}),
    "bamba": ("sizes", dict(mamba_n_heads=8, mamba_d_head=8, mamba_n_groups=1, attn_layer_indices=[1])),
    "granitemoehybrid": ("sizes", dict(mamba_n_heads=8, mamba_d_head=8, mamba_n_groups=1,
                                       **_linear_then_full())),
    "jamba": ("sizes", dict(attn_layer_period=2, attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1)),
    "lfm3": ("sizes", _linear_then_full("conv")),
    "recurrent_gemma": ("sizes", dict(block_types=["recurrent", "attention"])),
    # Its hybrid layers share one transformer block, tied from the second on: it needs two.
    "zamba": ("sizes", dict(num_hidden_layers=3, layer_types=["linear_attention", "hybrid", "hybrid"])),
    "zamba2": ("sizes", {**_linear_then_full(full="hybrid"), "hybrid_layer_ids": [1]}),
    "mamba2": ("sizes", dict(num_heads=8, head_dim=8, n_groups=1)),
    "gpt_neo": ("sizes", dict(attention_types=[[["global", "local"], 1]])),
    **{family: ("sizes", dict(rotary_dim=4)) for family in ("codegen", "gptj")},
    "dots3_note_text": ("sizes", dict(num_key_value_heads=4)),  # no grouped-query attention
    "zaya": ("sizes", dict(num_experts_per_tok=1)),
    # Encoder-decoder families' decoders: layer and head counts are per side.
    **{family: ("sizes", _HEADS_4) for family in ("bart", "bigbird_pegasus", "blenderbot", "blenderbot-small", "marian",
                                                  "mbart", "mvp", "pegasus", "plbart", "whisper")},
    "prophetnet": ("sizes", dict(num_hidden_layers=UNSET, num_encoder_layers=2, num_decoder_layers=2)),
    "falcon": ("sizes", dict(head_dim=UNSET)),  # derived from the hidden size, not settable
    "gemma3n_text": ("sizes", dict(num_kv_shared_layers=0, vocab_size_per_layer_input=64, hidden_size_per_layer_input=8)),
    "gemma4_text": ("sizes", dict(vocab_size_per_layer_input=64, hidden_size_per_layer_input=8)),
    "reformer": ("sizes", dict(is_decoder=True, attn_layers=["local", "lsh"], axial_pos_shape=[8, 8],
                               axial_pos_embds_dim=[16, 16], local_attn_chunk_length=4, lsh_attn_chunk_length=4)),
    "xmod": ("default", dict(default_language="en_XX")),
    # Its cache rounds the q/k and v widths up to multiples of 64, its layers do not.
    "xlstm": ("sizes", dict(hidden_size=128, embedding_dim=128, num_heads=4)),
    "xlnet": ("sizes", dict(max_position_embeddings=UNSET, d_head=8)),  # no position limit, refuses one
    "dots1": ("default", dict(n_routed_experts=4, n_shared_experts=1)),
    "lfm2_moe": ("default", dict(layer_types=["conv", "full_attention"])),
    # Its attention reads rope_theta from attn_config, a field DbrxAttentionConfig does not declare;
    # given it, the forward fails on the default clip_qkv (None), the failure recorded.
    "dbrx": ("default", dict(attn_config=dict(rope_theta=10000.0, kv_n_heads=2),
                             ffn_config=dict(ffn_hidden_size=64, moe_num_experts=4, moe_top_k=2))),
    # Draft models: a Gemma 4 text config without per-layer inputs, MoE or wide MLP, as they require.
    **{family: ("default", dict(backbone_hidden_size=32, text_config={
        **_shared_sizes(), "model_type": "gemma4_text", "hidden_size_per_layer_input": 0, "vocab_size_per_layer_input": 0,
        "enable_moe_block": False, "use_double_wide_mlp": False, "layer_types": ["sliding_attention", "full_attention"]}))
       for family in ("gemma4_assistant", "gemma4_unified_assistant")},
    "cohere_compass_text": ("default", dict(rope_parameters={"full_attention": dict(rope_type="default", rope_theta=10000.0)})),
    # Multimodal and byte-level families: their sub-configs keep full sizes unless scaled too.
    **{family: ("sizes", dict(sub_configs=True)) for family in ("emu3", "gemma3", "gemma4", "gemma4_unified", "mllama",
                                                                 "qwen3_5", "qwen3_5_moe", "llama4", "git", "got_ocr2",
                                                                 "moss_transcribe_diarize", "phi4_multimodal")},
    "blt": ("sizes", dict(sub_configs=True, encoder_hash_byte_group_vocab=64)),
    "qwen4_exp": ("default", dict(sub_configs=True)),
    # Its sliding-window layers' head_dim is the latent attention's q/k head dim (nope + rope).
    "dots3_note": ("sizes", dict(sub_configs=True, **{**_LATENT, "head_dim": 16})),
}


def _scaled_sub_configs(model_type, sizes):
    """The type's default sub-configs with every size it shares with ``sizes`` (or ``_VISION``, for a
    vision one) set to it."""
    from transformers import AutoConfig, PretrainedConfig

    default = AutoConfig.for_model(model_type)
    scaled = {}
    for name in getattr(default, "sub_configs", {}) or {}:
        sub = getattr(default, name, None)
        if not isinstance(sub, PretrainedConfig):
            continue
        own = sub.to_dict()
        tiny = _VISION if any(kind in name for kind in ("vision", "vq", "audio")) else {**sizes, **_SUB_CONFIG_SIZES, **_INDEXER}
        own.update({key: value for key, value in {**tiny, "per_layer_config": {}}.items() if key in own})
        layers = own.get("num_hidden_layers", 2)
        for key, kinds in own.items():
            if key.endswith("layer_types") and isinstance(kinds, list) and kinds:
                # A layer of each of its first kinds (a hybrid's linear and full attention).
                own[key] = (list(dict.fromkeys(kinds)) * layers)[:layers]
        scaled[name] = own
    return scaled


def family_options(model_type, with_settings):
    """The config options a type is tried with: the shared tiny sizes, and its own settings on top."""
    options = _shared_sizes()
    if with_settings and model_type in FAMILY_SETTINGS:
        settings = dict(FAMILY_SETTINGS[model_type][1])
        if settings.pop("sub_configs", False):
            # The family's settings hold for its sub-configs too (where they have that key).
            for name, sub in _scaled_sub_configs(model_type, options).items():
                options[name] = {**sub, **{key: value for key, value in settings.items() if key in sub}}
        options.update(settings)
    return {key: value for key, value in options.items() if value is not UNSET}


def _where(error):
    """The innermost frame of a model's own code in transformers that raised, else of any installed
    code (transformers' shared code, huggingface_hub, torch)."""
    frames = traceback.extract_tb(error.__traceback__)
    installed = [frame for frame in frames if "site-packages" in frame.filename]
    own = [frame for frame in installed if "/transformers/models/" in frame.filename]
    frame = (own or installed or frames)[-1]
    return f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}"


def try_type(model_type, with_settings):
    """``None`` if the type builds and runs a forward, else its failure: stage, exception, gist, where."""
    from transformers import AutoConfig, AutoModelForCausalLM

    stage = "config"
    try:
        config = AutoConfig.for_model(model_type, **family_options(model_type, with_settings))
        stage = "build"
        with torch.device("meta"):
            parameters = sum(p.numel() for p in AutoModelForCausalLM.from_config(config, attn_implementation="eager").parameters())
        if parameters > MAX_PARAMETERS:
            raise MemoryError(f"{parameters / 1e6:.0f}M parameters: sizes the shared ones do not reach "
                              "(sub-configs, per-layer embeddings) keep their full values")
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()
        stage = "forward"
        with torch.no_grad():
            model(token_ids())
    except Exception as error:  # noqa: BLE001 - every failure of transformers is a result here
        gist = " ".join(str(error).split())[:160]
        return dict(stage=stage, exception=type(error).__name__, gist=gist, where=_where(error))
    return None


def survey(model_types):
    """Per type: ``shared``, its failure with the shared sizes (``None``: it ran); ``settings``, why
    its own settings were tried (``None``: not tried); ``failure``, its failure in the end."""
    outcomes = {}
    for model_type in model_types:
        shared = try_type(model_type, with_settings=False)
        retried = shared is not None and model_type in FAMILY_SETTINGS
        failure = try_type(model_type, with_settings=True) if retried else shared
        outcomes[model_type] = dict(shared=shared, settings=FAMILY_SETTINGS[model_type][0] if retried else None, failure=failure)
    return outcomes


def counts(outcomes):
    """The survey's figures, as printed."""
    def by_stage(failures):
        return ", ".join(f"{sum(f['stage'] == stage for f in failures)} at {stage}" for stage in STAGES)

    shared = [o["shared"] for o in outcomes.values() if o["shared"] is not None]
    fixed = [o["settings"] for o in outcomes.values() if o["settings"] is not None and o["failure"] is None]
    failed = [o["failure"] for o in outcomes.values() if o["failure"] is not None]
    return (f"{len(outcomes)} types; with the shared tiny sizes {len(outcomes) - len(shared)} ran, {len(shared)} failed "
            f"({by_stage(shared)});\nwith their own settings {len(fixed)} of those ran ({fixed.count('sizes')} needed other "
            f"sizes, {fixed.count('default')} a value their default config lacks); {len(failed)} fail in transformers "
            f"({by_stage(failed)})")


def main(model_types):
    from transformers import __version__ as transformers_version
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    from transformers.utils import logging

    # A type whose size the meta build misjudges must not take the machine's memory: fail instead.
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    logging.set_verbosity(logging.CRITICAL)
    warnings.filterwarnings("ignore")
    everything = not model_types
    outcomes = survey(model_types or list(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES))
    for model_type, outcome in outcomes.items():
        shared, failure = outcome["shared"], outcome["failure"]
        if shared is None:
            line = "ran"
        elif failure is None:
            line = f"ran with its settings ({outcome['settings']}); shared sizes: {_describe(shared)}"
        else:
            line = f"FAILED {_describe(failure)}"
        print(f"{model_type:26} {line}", flush=True)
    print(counts(outcomes))
    if everything:
        RESULTS.write_text(json.dumps({"transformers": transformers_version, **results(outcomes)}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {RESULTS}")


def results(outcomes):
    """What ``RESULTS`` holds besides the version: the types that fail in transformers (their
    failure) and those whose default config fails but that run given the value it lacks (their
    failure with the shared sizes)."""
    return {
        "types": len(outcomes),
        "failed": {t: o["failure"] for t, o in outcomes.items() if o["failure"] is not None},
        "default_config_fails": {t: o["shared"] for t, o in outcomes.items()
                                 if o["settings"] == "default" and o["failure"] is None},
    }


def _describe(failure):
    return f"at {failure['stage']}: {failure['exception']}: {failure['gist'][:100]} ({failure['where']})"


if __name__ == "__main__":
    main(sys.argv[1:])
