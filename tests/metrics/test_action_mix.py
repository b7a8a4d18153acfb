"""Degenerate policies: the action mix of LLM frameworks, named in the verdict and marked head to head."""

import math
import shutil

import pandas as pd
import pytest

from harness.run_directory import load_run
from metrics.action_mix import DEGENERATE_SHARE, action_entropy, action_mix, constant_side, degenerate_sentence
from metrics.head_to_head import head_to_head, head_to_head_table
from metrics.returns import daily_returns
from metrics.significance import significance
from metrics.verdict import verdict


@pytest.fixture
def constant_llm_run(synthetic_run, tmp_path):
    """The synthetic run with always_hold counted as an LLM framework: a constant LLM policy beside coin_flip."""
    path = tmp_path / "run"
    shutil.copytree(synthetic_run, path)
    decisions = pd.read_parquet(path / "decisions.parquet")
    decisions.loc[decisions["framework"] == "always_hold", "llm_calls"] = 2
    decisions.to_parquet(path / "decisions.parquet")
    return load_run(path)


def test_entropy_is_zero_for_one_action_and_log2_3_for_three_equally_often():
    assert action_entropy(pd.Series(["SELL"] * 5)) == 0.0
    assert action_entropy(pd.Series(["BUY", "SELL", "HOLD"] * 4)) == pytest.approx(math.log2(3))
    p = [3 / 4, 1 / 4]
    assert action_entropy(pd.Series(["BUY"] * 3 + ["HOLD"])) == pytest.approx(-sum(q * math.log2(q) for q in p))


def test_the_mix_counts_each_frameworks_actions(constant_llm_run):
    mix = action_mix(constant_llm_run, ["always_hold", "coin_flip"])
    decisions = constant_llm_run.decisions
    flips = decisions.loc[decisions["framework"] == "coin_flip", "action"]
    assert mix.loc["always_hold", ["top_action", "top_count", "decisions"]].tolist() == ["HOLD", 180, 180]
    assert mix.loc["coin_flip", "top_count"] == flips.value_counts().iloc[0]
    assert mix.loc["coin_flip", "top_share"] == pytest.approx(flips.value_counts(normalize=True).iloc[0])
    assert mix.loc["coin_flip", "top_share"] < DEGENERATE_SHARE


def test_the_verdict_names_a_constant_llm_policy_in_words(constant_llm_run, synthetic_run):
    result = significance(constant_llm_run, daily_returns(constant_llm_run), reps=100)
    text = verdict(constant_llm_run, result, pd.DataFrame())
    assert text.startswith("always_hold answered HOLD on 180 of 180 decisions: its returns are a constant policy's")
    assert "coin_flip answered" not in text
    plain = load_run(synthetic_run)
    assert "answered" not in verdict(plain, significance(plain, daily_returns(plain), reps=100), pd.DataFrame())


def test_head_to_head_marks_pairs_with_a_constant_side(constant_llm_run):
    rows = head_to_head(constant_llm_run, daily_returns(constant_llm_run),
                        [("always_hold", "coin_flip"), ("coin_flip", "always_hold"), ("coin_flip", "momentum")])
    assert rows["constant"].tolist() == ["A: HOLD 180/180", "B: HOLD 180/180", ""]
    assert head_to_head_table(rows)["constant policy"].tolist() == ["A: HOLD 180/180", "B: HOLD 180/180", "-"]
    mix = action_mix(constant_llm_run, ["always_hold"])
    assert constant_side(mix, "always_hold", "always_hold") == "A: HOLD 180/180; B: HOLD 180/180"
    assert degenerate_sentence(mix.iloc[:0]) == ""
