"""Bad input gets a clear message: too few comparisons, rank too large, disconnected graphs, no judge column."""

import pandas as pd
import pytest

from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.errors import InputError
from bayesrank.hja.data import JudgePairCounts
from bayesrank.hja.model import HJA
from bayesrank.hja.simulate import simulate_panel, to_comparisons_frame


@pytest.fixture(scope="module")
def frame():
    return to_comparisons_frame(simulate_panel(300, seed=0, n_judges=3, n_items=5, rank=1).counts)


def test_judge_with_too_few_comparisons(frame):
    extra = pd.DataFrame({"model_a": ["item00"] * 3, "model_b": ["item01"] * 3, "outcome": ["a"] * 3,
                          "judge": ["lazy"] * 3, "weight": [1.0] * 3})
    df = pd.concat([frame, extra], ignore_index=True)
    with pytest.raises(InputError, match=r"too few comparisons.*'lazy' \(3\)"):
        HJA(read_comparisons(df), rank=0)


def test_rank_too_large(frame):
    with pytest.raises(InputError, match=r"rank 3 is too large for 3 judges and 5 items.*min\(K−1, N−2\) = 2"):
        HJA(read_comparisons(frame), rank=3)


def test_rank_with_more_parameters_than_cells():
    # incomplete star design (as in the bundled AlpacaEval subset): j0 rates items 1-4 against item0,
    # j1 only items 1-2, j2 only items 3-4: 4 + 2 + 2 = 8 (judge, pair) cells
    seen = {"j0": [1, 2, 3, 4], "j1": [1, 2], "j2": [3, 4]}
    rows = [("item0", f"item{i}", o, j) for j, items in seen.items() for i in items for o in "ab" * 15]
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "outcome", "judge"])
    HJA(read_comparisons(df), rank=0)  # 5 + 3 − 2 = 6 parameters: fine
    with pytest.raises(InputError, match=r"rank 1 needs 10 free parameters but the data have only 8 distinct"):
        HJA(read_comparisons(df), rank=1)


def test_disconnected_judge_graph(frame):
    # judge 'split' compares only {item00, item01} and {item02, item03}: two components
    rows = [("item00", "item01", "a"), ("item00", "item01", "b"), ("item02", "item03", "a"), ("item02", "item03", "b")]
    extra = pd.DataFrame([(a, b, o, "split", 10.0) for a, b, o in rows],
                         columns=["model_a", "model_b", "outcome", "judge", "weight"])
    df = pd.concat([frame, extra], ignore_index=True)
    with pytest.raises(InputError, match=r"judge 'split': its comparison graph is disconnected \(2 components"):
        HJA(read_comparisons(df), rank=0)


def test_disconnected_pooled_graph():
    rows = [(a, b, o, j) for j in ("x", "y") for a, b in (("p", "q"), ("r", "s"), ("p", "t")) for o in "ab" * 10]
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "outcome", "judge"])
    with pytest.raises(InputError, match=r"pooled comparison graph has 2 disconnected components \(sizes \[3, 2\]\)"):
        HJA(read_comparisons(df), rank=0)


def test_no_judge_column_and_cli_exit_code(tmp_path, frame, capsys):
    path = tmp_path / "nojudge.csv"
    frame.drop(columns="judge").to_csv(path, index=False)
    with pytest.raises(InputError, match="HJA needs a judge column"):
        HJA(read_comparisons(path), rank=0)
    assert main(["hja", str(path)]) == 2
    assert "judge column" in capsys.readouterr().err
    assert main(["hja", str(path), "--judge-col", "nope"]) == 2
    assert main(["hja", "llmfao", "--rank", "two"]) == 2
    assert "--rank must be an integer or 'auto'" in capsys.readouterr().err


def test_single_judge_rejected():
    c = simulate_panel(200, seed=0, n_judges=2, n_items=4, rank=0).counts
    one = JudgePairCounts(c.judges[:1], c.items, c.k[c.k == 0], c.i[c.k == 0], c.j[c.k == 0], c.y[c.k == 0],
                          c.n[c.k == 0])
    with pytest.raises(InputError, match="at least 2 judges"):
        HJA(one, rank=0)
