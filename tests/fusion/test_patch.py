"""airfuse.patch on tiny random-weight Hugging Face models: every target routed through airfuse,
outputs equal to the unpatched model's within per-dtype tolerances, state dicts unchanged."""

import copy

import pytest
import torch

import airfuse
from airfuse_op_counter import airfuse_op_counts
from tiny_hf_models import CONFIGS, FAMILIES, TESTED_FAMILIES, tiny_model, token_ids

pytest.importorskip("transformers")

LAYERS = 2

# airfuse ops one forward of each family's tiny model dispatches once patched (2 layers).
# Llama-like: 2 norms per layer + the final norm; rope on q and k per layer; one gated MLP per layer.
_LLAMA_LIKE = {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS, "silu_mul": LAYERS}
EXPECTED_OPS = {
    "llama": _LLAMA_LIKE,
    "mistral": _LLAMA_LIKE,
    "qwen2": _LLAMA_LIKE,
    "qwen3": {**_LLAMA_LIKE, "rms_norm": 4 * LAYERS + 1},  # + q_norm, k_norm
    "gemma": {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS, "gelu": LAYERS},
    # + pre/post feed-forward norms (Gemma2), + q/k norms (Gemma3)
    "gemma2": {"rms_norm": 4 * LAYERS + 1, "rope": 2 * LAYERS, "gelu": LAYERS},
    "gemma3_text": {"rms_norm": 6 * LAYERS + 1, "rope": 2 * LAYERS, "gelu": LAYERS},
    "phi3": {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "gpt2": {"gelu": LAYERS},
    **{family: _LLAMA_LIKE for family in ("granite", "smollm3", "ministral", "seed_oss", "helium", "ernie4_5")},
    # + q/k norms (HunYuan, EXAONE 4, OLMo 2/3: over all heads), + post-attention/MLP norms (GLM-4)
    **{family: {**_LLAMA_LIKE, "rms_norm": 4 * LAYERS + 1} for family in ("hunyuan_v1_dense", "exaone4", "olmo2", "olmo3")},
    "glm4": {"rms_norm": 4 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "phi": {"rope": 2 * LAYERS, "gelu": LAYERS},  # LayerNorm: unchanged
    # MoE: the routed experts' gate -> swiglu; a shared expert (Qwen2-MoE, HunYuan-MoE) -> silu_mul.
    "mixtral": {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "ernie4_5_moe": {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "qwen2_moe": {**_LLAMA_LIKE, "swiglu": LAYERS},
    "qwen3_moe": {"rms_norm": 4 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "olmoe": {"rms_norm": 4 * LAYERS + 1, "rope": 2 * LAYERS, "swiglu": LAYERS},
    "hunyuan_v1_moe": {**_LLAMA_LIKE, "rms_norm": 4 * LAYERS + 1, "swiglu": LAYERS},
}

# max |patched - unpatched| over max |unpatched| for the logits. float32 differs only by summation
# order; in half precision Hugging Face's Llama-form norm rounds x * rstd to the input dtype before
# the weight multiply where airfuse rounds once, and that one rounding travels through the layers.
RELATIVE_TOLERANCE = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 2e-2}


def _logits(model, ids):
    return model(ids).logits.float()


def test_the_tiny_models_cover_every_supported_family():
    assert sorted(FAMILIES) == airfuse.patching.supported_families() == sorted(EXPECTED_OPS)


@pytest.mark.parametrize("family", TESTED_FAMILIES)
def test_patched_model_dispatches_airfuse_ops_for_every_target(family):
    model = tiny_model(family)
    ids = token_ids()
    assert airfuse_op_counts(model, ids) == {}
    assert airfuse.patch(model) is model
    assert airfuse_op_counts(model, ids) == EXPECTED_OPS[family]


@pytest.mark.parametrize("dtype", RELATIVE_TOLERANCE, ids=str)
@pytest.mark.parametrize("family", TESTED_FAMILIES)
def test_patched_logits_match_unpatched(family, dtype):
    model = tiny_model(family, dtype)
    patched = airfuse.patch(copy.deepcopy(model))
    ids = token_ids()
    expected, actual = _logits(model, ids), _logits(patched, ids)
    error = (actual - expected).abs().max() / expected.abs().max()
    assert error <= RELATIVE_TOLERANCE[dtype], f"{family} {dtype}: relative error {error:.2e}"


@pytest.mark.parametrize("family", ["llama", "qwen3", "gemma3_text", "phi3", "gpt2"])
def test_patched_gradients_match_unpatched(family):
    model = tiny_model(family)  # eval: GPT-2's dropout would make the two runs differ
    patched = airfuse.patch(copy.deepcopy(model))
    ids = token_ids()
    for m in (model, patched):
        m(ids, labels=ids).loss.backward()
    for (name, expected), actual in zip(model.named_parameters(), patched.parameters(), strict=True):
        torch.testing.assert_close(actual.grad, expected.grad, rtol=1e-4, atol=1e-6, msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("family", ["llama", "gemma2", "phi3"])
def test_state_dict_round_trips_between_patched_and_unpatched(family, tmp_path):
    model = tiny_model(family)
    keys = list(model.state_dict())
    patched = airfuse.patch(tiny_model(family, seed=7))
    assert list(patched.state_dict()) == keys

    torch.save(model.state_dict(), tmp_path / "unpatched.pt")
    patched.load_state_dict(torch.load(tmp_path / "unpatched.pt"))
    ids = token_ids()
    torch.testing.assert_close(_logits(patched, ids), _logits(model, ids), rtol=1e-5, atol=1e-6)

    torch.save(patched.state_dict(), tmp_path / "patched.pt")
    reloaded = tiny_model(family, seed=9)
    reloaded.load_state_dict(torch.load(tmp_path / "patched.pt"))
    for name, tensor in model.state_dict().items():
        assert torch.equal(reloaded.state_dict()[name], tensor), name


@pytest.mark.parametrize(
    ("flags", "dropped"),
    [({"rms_norm": False}, "rms_norm"), ({"rope": False}, "rope"), ({"mlp": False}, "silu_mul")],
)
def test_each_target_has_its_flag(flags, dropped):
    model = airfuse.patch(tiny_model("qwen3"), **flags)
    expected = {op: n for op, n in EXPECTED_OPS["qwen3"].items() if op != dropped}
    assert airfuse_op_counts(model, token_ids()) == expected


def test_patching_twice_changes_nothing_more():
    model = airfuse.patch(airfuse.patch(tiny_model("gemma")))
    assert airfuse_op_counts(model, token_ids()) == EXPECTED_OPS["gemma"]


def test_unpatched_models_of_the_family_are_left_alone():
    airfuse.patch(tiny_model("llama"))
    assert airfuse_op_counts(tiny_model("llama"), token_ids()) == {}


def test_unsupported_model_names_the_supported_families():
    from transformers import AutoConfig, AutoModel

    bert = AutoModel.from_config(AutoConfig.for_model("bert", hidden_size=32, num_hidden_layers=1,
                                                      num_attention_heads=2, intermediate_size=64, vocab_size=64))
    with pytest.raises(ValueError, match=r"BertModel \(config.model_type 'bert'\) is not supported.*ernie4_5, "
                                         r"ernie4_5_moe, exaone4, gemma, gemma2, gemma3_text, glm4, gpt2, granite, .*qwen3_moe, "
                                         r"seed_oss, smollm3"):
        airfuse.patch(bert)
    with pytest.raises(ValueError, match="model_type None"):
        airfuse.patch(torch.nn.Linear(2, 2))


def test_unsupported_activation_is_named_and_mlp_false_patches_the_rest(monkeypatch):
    monkeypatch.setitem(CONFIGS, "llama", {**CONFIGS["llama"], "hidden_act": "relu"})
    with pytest.raises(ValueError, match=r"LlamaMLP.act_fn is ReLU.*mlp=False"):
        airfuse.patch(tiny_model("llama"))
    model = airfuse.patch(tiny_model("llama"), mlp=False)
    assert airfuse_op_counts(model, token_ids()) == {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS}


def test_moe_experts_with_another_activation_are_refused_by_name(monkeypatch):
    monkeypatch.setitem(CONFIGS, "mixtral", {**CONFIGS["mixtral"], "hidden_act": "gelu"})
    with pytest.raises(ValueError, match=r"MixtralExperts.act_fn is GELUActivation.*mlp=False"):
        airfuse.patch(tiny_model("mixtral"))
    model = airfuse.patch(tiny_model("mixtral"), mlp=False)
    assert airfuse_op_counts(model, token_ids()) == {"rms_norm": 2 * LAYERS + 1, "rope": 2 * LAYERS}
