"""GRID card: schema-validated, provenance beside each score, rho_flip of every pairwise claim."""

import copy
import json

import pandas as pd
import pytest
import yaml

from bayesrank import datasets
from bayesrank.configflip.card import build_card, read_card, render_markdown, validate_card, write_card
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import pairwise_flips
from bayesrank.configflip.readers import read_lm_eval_dir, read_lm_eval_results
from bayesrank.errors import InputError

RAW = "eval_grid/lm_eval_harness_2023/raw/llama"


@pytest.fixture(scope="module")
def llama_gsm8k():
    rows = read_lm_eval_dir(datasets.path(RAW), pattern="*/*gsm8k*.json")
    rows = pd.concat([rows, read_lm_eval_dir(datasets.path(RAW), pattern="*/*mathematical_reasoning_*.json")])
    rows = rows[(rows.benchmark == "gsm8k") & (rows.metric == "acc")].reset_index(drop=True)
    rows["model"] = rows.source_file.str.extract(r"/llama/(llama-\d+B)/")[0]
    return rows


def test_card_from_real_lm_eval_outputs(llama_gsm8k, tmp_path):
    card = build_card(llama_gsm8k, ["num_fewshot"], title="llama gsm8k")
    assert len(card["entries"]) == 9                      # 3 models x few-shot {0, 5, 8}
    e = card["entries"][0]
    assert e["harness"] == "lm-evaluation-harness" and e["scoring_rule"] == "acc" and e["n_items"] == 1319
    assert e["source"].endswith(".json")
    # every claim's rho_flip equals pairwise_flips on the same grid
    g = EvalGrid.from_scores(llama_gsm8k, axes=["num_fewshot"])
    ref = pairwise_flips(g, "gsm8k").set_index(["player_a", "player_b"])
    assert len(card["claims"]) == 3
    for c in card["claims"]:
        assert c["rho_flip"] == pytest.approx(ref.loc[(c["model_a"], c["model_b"]), "rho_flip"])
        assert c["n_plus"] == ref.loc[(c["model_a"], c["model_b"]), "n_plus"]
    # the 2023 files record no harness version/commit, revision or seed: reported as disclosure gaps
    assert card["disclosure_gaps"]["harness_commit"] == 9 and card["disclosure_gaps"]["fewshot_seed"] == 9
    p = write_card(card, tmp_path / "card.yaml")
    assert read_card(p) == card and yaml.safe_load(p.read_text())["grid_card_version"] == "1.0"
    md = (tmp_path / "card.md").read_text()
    assert "| gsm8k |" in md and "ρ_flip" in md and "Disclosure gaps" in md


def test_card_records_v04_provenance(fixtures):
    rows = read_lm_eval_results(fixtures / "results_2024-05-01T12-00-00.123456.json")
    card = build_card(rows, ["metric"])
    e = card["entries"][0]
    assert (e["harness_version"], e["harness_commit"], e["model_revision"], e["num_fewshot"], e["fewshot_seed"]) == \
        ("0.4.2", "4f8195f", "step100000", 5, 1234)
    assert e["template_hash"] is not None and e["quantisation"] == "float16"


def test_schema_rejects_incomplete_cards(llama_gsm8k):
    card = build_card(llama_gsm8k, ["num_fewshot"])
    bad = copy.deepcopy(card)
    del bad["entries"][0]["harness_commit"]
    with pytest.raises(InputError, match="entries/0.*harness_commit"):
        validate_card(bad)
    bad = copy.deepcopy(card)
    bad["claims"][0]["rho_flip"] = 0.7                      # rho_flip cannot exceed 1/2
    with pytest.raises(InputError, match="claims/0/rho_flip"):
        validate_card(bad)
    json.dumps(card)  # plain JSON types only
    assert render_markdown(card).count("\n| gsm8k |") == 3
