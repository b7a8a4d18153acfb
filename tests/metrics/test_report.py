"""The run-directory report and run comparison on a synthetic run laid out per docs/run_directory.md."""

import shutil

import numpy as np
import pandas as pd
import pytest

from core.errors import DataError
from harness.run_directory import load_run
from metrics import compare, plots, report
from metrics.performance import metrics_row
from metrics.returns import daily_returns, portfolio_returns
from metrics.run_tables import efficiency_numbers, main_table, regime_confusions, return_markers
from metrics.significance import significance
from metrics.significance_tables import comparisons_table
from metrics.tables import format_ci, to_latex, to_markdown

TABLES = ("main", "portfolio", "significance", "seed_tests", "paper", "metrics", "seeds", "activity", "efficiency",
          "regime_scores", "regime_confusion")


@pytest.fixture(scope="module")
def reported(synthetic_run, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("reported") / "run"
    shutil.copytree(synthetic_run, run_dir)
    return report.write_report(run_dir, reps=200)


@pytest.mark.slow
def test_report_writes_every_table_and_plot(reported):
    run_dir = reported.parent
    for name in TABLES:
        assert (run_dir / "tables" / f"{name}.md").read_text().count("|") > 10
        assert "\\begin{tabular}" in (run_dir / "tables" / f"{name}.tex").read_text()
    for name in ("equity", "drawdowns", "pareto"):
        png = (run_dir / "plots" / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 20_000
    summary = reported.read_text()
    assert "## main" in summary and "Hansen SPA" in summary and "![pareto](plots/pareto.png)" in summary
    assert (run_dir / "tables" / "head_to_head.md").is_file()


def test_main_table_values_come_from_metrics_csv_with_cis(synthetic_run):
    run = load_run(synthetic_run)
    table = main_table(run, daily_returns(run), "buy_and_hold", reps=100)
    average = run.metrics.query("framework == 'momentum' and ticker == 'AVG'")
    for column, metric, scale in (("mean TR %", "TR", 100), ("mean ARR %", "ARR", 100), ("mean SR_ann", "SR_ann", 1)):
        cell = table.loc["momentum", column]
        point, interval = cell.split(" [")
        digits = len(point.split(".")[1]) if "." in point else 0
        assert point == f"{average[metric].item() * scale:.{digits}f}"
        low, high = (float(v) for v in interval.rstrip("]*").split(", "))
        assert low <= float(point) <= high


def test_returns_rebuild_the_runner_metrics(synthetic_run):
    run = load_run(synthetic_run)
    returns = daily_returns(run)
    episode = run.equity.query("framework == 'coin_flip' and ticker == 'BBB' and seed == 2")
    expected = metrics_row(episode["equity"], 0)
    recomputed = returns[("coin_flip", "BBB", 2)].dropna()
    assert len(recomputed) == len(episode) - 1
    assert np.prod(1 + recomputed) - 1 == pytest.approx(episode["equity"].iloc[-1] / episode["equity"].iloc[0] - 1)
    stored = run.metrics.query("framework == 'coin_flip' and ticker == 'BBB' and seed == 2")["SR_day"].item()
    assert stored == pytest.approx(expected["SR_day"])
    portfolio = portfolio_returns(returns)
    assert portfolio["coin_flip"].iloc[5] == pytest.approx(returns["coin_flip"].iloc[5].mean())


def test_flat_framework_has_a_point_ci_and_buy_and_hold_no_marker(synthetic_run):
    run = load_run(synthetic_run)
    table = main_table(run, daily_returns(run), "buy_and_hold", reps=100)
    assert table.loc["always_hold", "mean TR %"] == "0.0 [0.0, 0.0]"
    assert not table.loc["buy_and_hold", "mean TR %"].endswith("*")


def test_regime_confusion_counts_every_labelled_decision(synthetic_run):
    run = load_run(synthetic_run)
    matrices = regime_confusions(run)
    # 60 decision days per episode, 10 bars after the window: all labelled
    assert int(matrices["momentum"].to_numpy().sum()) == 3 * 60
    assert int(matrices["coin_flip"].to_numpy().sum()) == 3 * 3 * 60
    assert matrices["buy_and_hold"][["SELL", "HOLD"]].to_numpy().sum() == 0


def test_efficiency_numbers_per_decision(synthetic_run):
    numbers = efficiency_numbers(load_run(synthetic_run))
    assert numbers.loc["coin_flip", "tokens"] == 1020 and numbers.loc["coin_flip", "decisions"] == 540
    assert numbers.loc["momentum", "llm_calls"] == 0


def test_pareto_front():
    cost = pd.Series({"a": 0.0, "b": 0.0, "c": 10.0, "d": 20.0, "e": 5.0})
    value = pd.Series({"a": 1.0, "b": 3.0, "c": 5.0, "d": 4.0, "e": 3.0})
    assert plots.pareto_front(cost, value) == ["b", "c"]


def test_missing_file_and_column_are_named(synthetic_run, tmp_path):
    broken = tmp_path / "run"
    shutil.copytree(synthetic_run, broken)
    (broken / "trades.csv").unlink()
    with pytest.raises(DataError, match="trades.csv: missing"):
        load_run(broken)
    shutil.copy(synthetic_run / "trades.csv", broken / "trades.csv")
    pd.read_parquet(broken / "equity.parquet").drop(columns=["position"]).to_parquet(broken / "equity.parquet")
    with pytest.raises(DataError, match=r"equity.parquet: missing column\(s\) position"):
        load_run(broken)
    assert report.main([str(broken)]) == 2


def test_compare_reports_changed_metrics_and_decisions(synthetic_run, tmp_path, capsys):
    changed = tmp_path / "run"
    shutil.copytree(synthetic_run, changed)
    decisions = pd.read_parquet(changed / "decisions.parquet")
    flip = decisions.index[(decisions["framework"] == "momentum") & (decisions["action"] == "BUY")][:2]
    decisions.loc[flip, "action"] = "SELL"
    decisions.to_parquet(changed / "decisions.parquet")
    metrics = pd.read_csv(changed / "metrics.csv")
    metrics.loc[0, "ARR"] += 0.01
    metrics.to_csv(changed / "metrics.csv", index=False)
    config = changed / "config.yaml"
    config.write_text(config.read_text().replace("fee_bps: 10.0", "fee_bps: 20.0"))
    assert compare.main([str(synthetic_run), str(changed)]) == 1
    out = capsys.readouterr().out
    assert "config values that differ: 1\n  execution.fee_bps: 10.0 -> 20.0" in out
    assert "metrics rows that moved (> 1e-09): 1" in out
    assert "decisions compared: 1080; different: 2" in out
    assert compare.main([str(synthetic_run), str(synthetic_run)]) == 0
    assert "no change" in capsys.readouterr().out


def test_table_rendering():
    table = pd.DataFrame({"ARR %": [format_ci(0.1234, 0.01, 0.2, 100, 1, "*"), None]},
                         index=pd.Index(["a_b", "c"], name="framework"))
    markdown = to_markdown(table)
    assert markdown.splitlines()[2] == "| a_b | 12.3 [1.0, 20.0]* |" and "| c | -- |" in markdown
    latex = to_latex(table, "ARR in %, p < 0.05", "main")
    assert "a\\_b" in latex and "ARR in \\%, p \\textless{} 0.05" in latex and "\\label{tab:main}" in latex


def test_no_second_block_when_the_best_is_the_benchmark(synthetic_run):
    run = load_run(synthetic_run)
    returns = daily_returns(run)
    best = portfolio_returns(returns).mean().idxmax()
    result = significance(run, returns, benchmark=best, reps=100)
    assert result.best == best
    assert set(comparisons_table(result).index.get_level_values("against")) == {f"vs {best}"}
    assert result.spa is not None and 0.0 <= result.spa["consistent"] <= 1.0


def test_without_the_benchmark_the_comparisons_against_it_are_left_out(synthetic_run):
    run = load_run(synthetic_run)
    result = significance(run, daily_returns(run), benchmark="not_in_run", reps=100)
    assert result.spa is None and result.seed_comparisons.empty
    assert set(result.comparisons.index.get_level_values("against")) == {result.best}
    assert "*" not in "".join(main_table(run, daily_returns(run), "not_in_run", reps=50)["mean TR %"])


def test_markers_flag_a_real_difference_from_the_benchmark(synthetic_run):
    run = load_run(synthetic_run)
    returns = daily_returns(run)
    noise = np.random.default_rng(0)
    for ticker in run.tickers:
        benchmark = returns[("buy_and_hold", ticker, 0)]
        returns[("momentum", ticker, 0)] = benchmark + 0.005 + noise.normal(0, 0.002, len(benchmark))
    markers = return_markers(run, returns, "buy_and_hold")
    assert all(markers[("momentum", cell)] == "**" for cell in [*run.tickers, "AVG"])
    assert markers[("always_hold", "AVG")] in ("", "*")
    assert ("buy_and_hold", "AVG") not in markers
