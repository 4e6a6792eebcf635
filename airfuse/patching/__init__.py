"""``airfuse.patch(model)``: route a Hugging Face model's norms, RoPE and MLP activations through
airfuse ops, in place.

A patched module keeps its parameters, buffers and attributes; only its class changes, to a
subclass of the original whose ``forward`` calls airfuse ops. State dicts, ``isinstance`` checks
and hooks are unaffected, and patching twice changes nothing more.
"""

import functools
import importlib
import types
from dataclasses import dataclass

from torch import nn

from . import forwards

LLAMA_NORM, GEMMA_NORM, OLMO_NORM = "llama", "gemma", "olmo"
GATED_MLP, MERGED_MLP, ACTIVATION_MLP = "gate_proj/up_proj", "gate_up_proj", "act"
HALF_ROPE, INTERLEAVED_ROPE = "half", "interleave"


@dataclass(frozen=True)
class Family:
    """Where a model family's modules live and which form each fused target takes in it.
    ``norm`` / ``attention`` / ``mlp`` / ``experts`` are None where the family has no RMSNorm /
    RoPE / dense MLP / MoE experts."""

    name: str
    module: str
    norm: str | None
    attention: str | None
    mlp: str | None
    mlp_form: str
    norm_form: str = LLAMA_NORM
    rope_form: str = HALF_ROPE
    activation: str = "act_fn"
    experts: str | None = None


def _family(name, prefix, *, module=None, norm_form=LLAMA_NORM, mlp_form=GATED_MLP, rope=True, norm=True, mlp=True,
            rope_form=HALF_ROPE, activation=None, experts=False):
    module = module or name
    return Family(
        name=name,
        module=f"transformers.models.{module}.modeling_{module}",
        norm=f"{prefix}RMSNorm" if norm else None,
        attention=f"{prefix}Attention" if rope else None,
        mlp=f"{prefix}MLP" if mlp else None,
        mlp_form=mlp_form,
        norm_form=norm_form,
        rope_form=rope_form,
        activation=activation or {GATED_MLP: "act_fn", MERGED_MLP: "activation_fn", ACTIVATION_MLP: "act"}[mlp_form],
        experts=f"{prefix}Experts" if experts else None,
    )


# Keyed by ``config.model_type``.
FAMILIES = {
    family.name: family
    for family in (
        _family("llama", "Llama"),
        _family("mistral", "Mistral"),
        _family("qwen2", "Qwen2"),
        _family("qwen3", "Qwen3"),
        _family("gemma", "Gemma", norm_form=GEMMA_NORM),
        _family("gemma2", "Gemma2", norm_form=GEMMA_NORM),
        _family("gemma3_text", "Gemma3", module="gemma3", norm_form=GEMMA_NORM),
        _family("phi3", "Phi3", mlp_form=MERGED_MLP),
        _family("gpt2", "GPT2", mlp_form=ACTIVATION_MLP, rope=False, norm=False),
        # Llama's norm, RoPE and SiLU-gated MLP, beside their own extras (multipliers, q/k norms,
        # layers without RoPE, ...), which stay as they are.
        _family("granite", "Granite"),
        _family("smollm3", "SmolLM3"),
        _family("hunyuan_v1_dense", "HunYuanDenseV1"),
        _family("ministral", "Ministral"),
        _family("seed_oss", "SeedOss"),
        _family("exaone4", "Exaone4"),
        _family("olmo2", "Olmo2", norm_form=OLMO_NORM),
        _family("olmo3", "Olmo3", norm_form=OLMO_NORM),
        _family("helium", "Helium", norm_form=OLMO_NORM, rope_form=INTERLEAVED_ROPE),
        _family("ernie4_5", "Ernie4_5", rope_form=INTERLEAVED_ROPE),
        _family("glm4", "Glm4", mlp_form=MERGED_MLP, rope_form=INTERLEAVED_ROPE),
        # Phi-1/2: LayerNorm (not fused), partial RoPE (the attention splits it off), GELU MLP.
        _family("phi", "Phi", norm=False, mlp_form=ACTIVATION_MLP, activation="activation_fn"),
        # Mixture of experts: the routed experts' gate (transformers' ``_apply_gate``) -> swiglu,
        # the shared / dense MLPs as their dense relatives.
        _family("mixtral", "Mixtral", mlp=False, experts=True),
        _family("qwen2_moe", "Qwen2Moe", experts=True),
        _family("qwen3_moe", "Qwen3Moe", experts=True),
        _family("olmoe", "Olmoe", experts=True),
        _family("hunyuan_v1_moe", "HunYuanMoEV1", experts=True),
        _family("ernie4_5_moe", "Ernie4_5_Moe", rope_form=INTERLEAVED_ROPE, experts=True),
    )
}

_NORM_FORWARDS = {
    LLAMA_NORM: forwards.llama_rms_norm_forward,
    GEMMA_NORM: forwards.gemma_rms_norm_forward,
    OLMO_NORM: forwards.olmo_rms_norm_forward,
}
_ROPES = {HALF_ROPE: forwards.apply_rotary_pos_emb, INTERLEAVED_ROPE: forwards.apply_interleaved_rotary_pos_emb}


def patch(model: nn.Module, *, rms_norm: bool = True, rope: bool = True, mlp: bool = True) -> nn.Module:
    """Patch ``model`` (a Hugging Face model of a supported family) in place and return it.

    - ``rms_norm``: every RMSNorm -> ``airfuse.rms_norm`` (Gemma's ``1 + weight`` form included,
      Qwen3's and Gemma3's q/k norms included).
    - ``rope``: the attention's ``apply_rotary_pos_emb`` -> ``airfuse.rope`` (mode "half").
    - ``mlp``: SiLU-gated MLPs -> ``airfuse.silu_mul`` (separate gate/up) or ``airfuse.swiglu``
      (Phi-3's and GLM-4's merged gate_up, MoE experts' gate); tanh-GELU activations (GPT-2, Gemma,
      Phi) -> ``airfuse.gelu``.
    """
    family = _family_of(model)
    modeling = importlib.import_module(family.module)
    for module in model.modules():
        cls = type(module)
        if rms_norm and family.norm and cls is getattr(modeling, family.norm):
            _set_forward(module, _NORM_FORWARDS[family.norm_form])
        elif rope and family.attention and cls is getattr(modeling, family.attention):
            _set_forward(module, _with_airfuse_rope(cls.forward, _ROPES[family.rope_form]))
        elif mlp and family.mlp and cls is getattr(modeling, family.mlp):
            _patch_mlp(module, family)
        elif mlp and family.experts and cls is getattr(modeling, family.experts):
            _patch_experts(module)
    return model


def supported_families() -> list:
    return sorted(FAMILIES)


def _family_of(model) -> Family:
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    if model_type not in FAMILIES:
        raise ValueError(
            f"airfuse.patch: {type(model).__name__} (config.model_type {model_type!r}) is not supported; "
            f"supported Hugging Face model types: {', '.join(supported_families())}"
        )
    return FAMILIES[model_type]


def _patch_mlp(module, family):
    from transformers.activations import GELUTanh, NewGELUActivation, SiLUActivation

    activation_attr = family.activation
    activation = getattr(module, activation_attr)
    is_silu = isinstance(activation, (SiLUActivation, nn.SiLU))
    if is_silu and family.mlp_form == GATED_MLP:
        _set_forward(module, forwards.silu_gated_mlp_forward)
    elif is_silu and family.mlp_form == MERGED_MLP:
        _set_forward(module, forwards.silu_merged_mlp_forward)
    elif isinstance(activation, (GELUTanh, NewGELUActivation)) and family.mlp_form != MERGED_MLP:
        _set_forward(activation, forwards.tanh_gelu_forward)
    else:
        raise ValueError(
            f"airfuse.patch: {type(module).__name__}.{activation_attr} is {type(activation).__name__}; airfuse fuses "
            "SiLU-gated MLPs and tanh-approximated GELU only (pass mlp=False to patch the rest of the model)"
        )


def _patch_experts(module):
    """MoE experts with transformers' experts interface: their gate, applied to every routed
    token's concatenated gate/up projection, becomes ``swiglu``."""
    from transformers.activations import SiLUActivation

    name = type(module).__name__
    if not isinstance(getattr(module, "act_fn", None), (SiLUActivation, nn.SiLU)):
        raise ValueError(f"airfuse.patch: {name}.act_fn is {type(getattr(module, 'act_fn', None)).__name__}; airfuse fuses "
                         "SiLU-gated experts only (pass mlp=False to patch the rest of the model)")
    if not (getattr(module, "has_gate", False) and getattr(module, "is_concatenated", False)):
        raise ValueError(f"airfuse.patch: {name} has no concatenated gate/up projection; airfuse's swiglu takes "
                         "[gate | up] halves (pass mlp=False to patch the rest of the model)")
    module.__class__ = _patched_class(type(module), "_apply_gate", forwards.experts_swiglu_gate)


def _set_forward(module, forward):
    module.__class__ = _patched_class(type(module), "forward", forward)


@functools.cache
def _patched_class(cls, method, function):
    return type(f"Airfuse{cls.__name__}", (cls,), {method: function, "__module__": cls.__module__})


@functools.cache
def _with_airfuse_rope(forward, rope):
    """The attention's own forward, its code unchanged, with the name ``apply_rotary_pos_emb``
    bound to airfuse's: Hugging Face calls it as a module global, so patching the module would
    change every model of the family, and copying the forward would drift from transformers'."""
    namespace = {**forward.__globals__, "apply_rotary_pos_emb": rope}
    patched = types.FunctionType(forward.__code__, namespace, forward.__name__, forward.__defaults__, forward.__closure__)
    patched.__kwdefaults__ = forward.__kwdefaults__
    patched.__doc__ = forward.__doc__
    return patched
