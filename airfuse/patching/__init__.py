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

LLAMA_NORM, GEMMA_NORM = "llama", "gemma"
GATED_MLP, MERGED_MLP, ACTIVATION_MLP = "gate_proj/up_proj", "gate_up_proj", "act"


@dataclass(frozen=True)
class Family:
    """Where a model family's modules live and which form each fused target takes in it.
    ``norm`` / ``attention`` are None where the family has no RMSNorm / RoPE."""

    name: str
    module: str
    norm: str | None
    attention: str | None
    mlp: str
    mlp_form: str
    norm_form: str = LLAMA_NORM


def _family(name, prefix, *, module=None, norm_form=LLAMA_NORM, mlp_form=GATED_MLP, rope=True, norm=True):
    module = module or name
    return Family(
        name=name,
        module=f"transformers.models.{module}.modeling_{module}",
        norm=f"{prefix}RMSNorm" if norm else None,
        attention=f"{prefix}Attention" if rope else None,
        mlp=f"{prefix}MLP",
        mlp_form=mlp_form,
        norm_form=norm_form,
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
    )
}

_NORM_FORWARDS = {LLAMA_NORM: forwards.llama_rms_norm_forward, GEMMA_NORM: forwards.gemma_rms_norm_forward}


def patch(model: nn.Module, *, rms_norm: bool = True, rope: bool = True, mlp: bool = True) -> nn.Module:
    """Patch ``model`` (a Hugging Face model of a supported family) in place and return it.

    - ``rms_norm``: every RMSNorm -> ``airfuse.rms_norm`` (Gemma's ``1 + weight`` form included,
      Qwen3's and Gemma3's q/k norms included).
    - ``rope``: the attention's ``apply_rotary_pos_emb`` -> ``airfuse.rope`` (mode "half").
    - ``mlp``: SiLU-gated MLPs -> ``airfuse.silu_mul`` (separate gate/up) or ``airfuse.swiglu``
      (Phi-3's merged gate_up); tanh-GELU activations (GPT-2, Gemma) -> ``airfuse.gelu``.
    """
    family = _family_of(model)
    modeling = importlib.import_module(family.module)
    for module in model.modules():
        cls = type(module)
        if rms_norm and family.norm and cls is getattr(modeling, family.norm):
            _set_forward(module, _NORM_FORWARDS[family.norm_form])
        elif rope and family.attention and cls is getattr(modeling, family.attention):
            _set_forward(module, _with_airfuse_rope(cls.forward))
        elif mlp and cls is getattr(modeling, family.mlp):
            _patch_mlp(module, family)
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

    activation_attr = {GATED_MLP: "act_fn", MERGED_MLP: "activation_fn", ACTIVATION_MLP: "act"}[family.mlp_form]
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


def _set_forward(module, forward):
    module.__class__ = _patched_class(type(module), forward)


@functools.cache
def _patched_class(cls, forward):
    return type(f"Airfuse{cls.__name__}", (cls,), {"forward": forward, "__module__": cls.__module__})


@functools.cache
def _with_airfuse_rope(forward):
    """The attention's own forward, its code unchanged, with the name ``apply_rotary_pos_emb``
    bound to airfuse's: Hugging Face calls it as a module global, so patching the module would
    change every model of the family, and copying the forward would drift from transformers'."""
    namespace = {**forward.__globals__, "apply_rotary_pos_emb": forwards.apply_rotary_pos_emb}
    patched = types.FunctionType(forward.__code__, namespace, forward.__name__, forward.__defaults__, forward.__closure__)
    patched.__kwdefaults__ = forward.__kwdefaults__
    patched.__doc__ = forward.__doc__
    return patched
