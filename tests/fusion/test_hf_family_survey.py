"""The README's lists of Hugging Face causal-LM types that do not run in transformers are the survey's
(``benchmarks/hf_family_survey.py``, which writes ``benchmarks/results/hf_family_survey.json``), for
the installed transformers; a few cheap ones are tried again: each still fails at the stage listed,
and a type the survey gives its own sizes still needs them."""

import importlib.util
import json
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
RESULTS = json.loads((ROOT / "benchmarks" / "results" / "hf_family_survey.json").read_text())
FAILING_TABLE = "| model type | fails at | why |"
DEFAULT_CONFIG_TABLE = "| model type | its default config fails at | runs given |"


@pytest.fixture(scope="module")
def survey():
    spec = importlib.util.spec_from_file_location("hf_family_survey", ROOT / "benchmarks" / "hf_family_survey.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_table(header):
    """{model type: stage} from the README table under ``header`` (first two cells of each row)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index(header) + 2  # the header and its |---| line
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        model_type, stage = (cell.strip() for cell in line.strip("|").split("|")[:2])
        rows[model_type.strip("`")] = stage
    return rows


def test_results_are_for_the_installed_transformers():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    assert (RESULTS["transformers"], RESULTS["types"]) == (transformers.__version__, len(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)), \
        "rerun python benchmarks/hf_family_survey.py and update the README's lists"


def test_readme_lists_the_types_that_fail_in_transformers_at_their_stage():
    assert _readme_table(FAILING_TABLE) == {t: failure["stage"] for t, failure in RESULTS["failed"].items()}
    assert _readme_table(DEFAULT_CONFIG_TABLE) == {t: failure["stage"] for t, failure in RESULTS["default_config_fails"].items()}


@pytest.mark.parametrize("model_type", ["dbrx", "musicgen", "gemma4_assistant"])
def test_a_listed_type_still_fails_where_listed(survey, model_type):
    failure = survey.try_type(model_type, with_settings=True)
    recorded = RESULTS["failed"][model_type]
    assert failure is not None and (failure["stage"], failure["exception"]) == (recorded["stage"], recorded["exception"])


@pytest.mark.parametrize("model_type, listed", [("dots1", True), ("codegen", False)])
def test_a_type_given_its_settings_runs_and_fails_without(survey, model_type, listed):
    """dots1's default config lacks its expert counts (listed in the README); codegen's rotary_dim
    exceeds the tiny head_dim (only the shared sizes: not listed)."""
    failure = survey.try_type(model_type, with_settings=False)
    assert failure is not None and (model_type in RESULTS["default_config_fails"]) == listed
    if listed:
        assert failure["stage"] == RESULTS["default_config_fails"][model_type]["stage"]
    assert survey.try_type(model_type, with_settings=True) is None
