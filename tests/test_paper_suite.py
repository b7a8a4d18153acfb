"""The paper suite end to end on constructed prices of the paper's five stocks (`data=files`):
the paper's columns beside ours, its SR convention, rows not run, and every table of paper/."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest
from bars import random_bars, write_csv
from cli_helpers import ROOT, benchmark_command, support_env
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

from configs import compose_option
from frameworks.suite_rows import expand_rows

from metrics.paper_reference import MAIN, paper_reference
from metrics.rolling import rolling_windows
from multi_agent.settings import DebateSettings

pytestmark = pytest.mark.slow  # one paper-suite run shared by the module, and a parallel sweep: minutes

PAPER_TICKERS = ["GOOGL", "META", "MSFT", "NVDA", "TSLA"]
TEST_END = "2025-01-17"
ROLLING_DAYS, ROLLING_STEP = 7, 2


@pytest.fixture(scope="module")
def prices(tmp_path_factory):
    """A folder of constructed daily bars of the paper's five stocks over its splits."""
    folder = tmp_path_factory.mktemp("prices")
    for seed, ticker in enumerate(PAPER_TICKERS):
        write_csv(random_bars(n=830, seed=seed, start="2022-06-01"), folder / f"{ticker}.csv")
    return folder


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory, prices):
    """The paper suite on `prices`: rule rows, SA and SC on the tiny model, the trained rows not run."""
    out = tmp_path_factory.mktemp("paper")
    result = subprocess.run(benchmark_command(
        "+suite=paper", "data=files", f"data.path={prices}", "~frameworks.finrl_a2c", "~frameworks.finrl_ppo",
        "backbones=[tiny]", "seeds=[0,1]", f"split.test.end={TEST_END}", "paper.cost_reference=[MA,SA]",
        "single_agent/protocol@rows.templates.single_agent.protocol=compact",   # the compact protocol and reward
        "single_agent/reward@rows.templates.single_agent.reward=compact",       # for SA and SC
        "rows.per_backbone.SA.overrides={constrained: true}",
        "rows.per_backbone.SC.overrides={constrained: true, temperature: 0.7}",
        "rows.per_backbone.MA.overrides.quick.max_new_tokens=24", "rows.per_backbone.MA.overrides.deep.max_new_tokens=32",
        "rows.per_backbone.MA.overrides.constrained=true", "rows.per_backbone.MA.overrides.max_tool_rounds=1",
        "rows.per_backbone.MA.overrides.first_tool_call=required", "+rows.per_backbone.MA.overrides.analysts=[market]",
        "+rows.per_backbone.MA.overrides.risk_team=false",
        f"paper.rolling={{months: null, days: {ROLLING_DAYS}, step_days: {ROLLING_STEP}}}", f"hydra.run.dir={out}",
    ), cwd=ROOT, capture_output=True, text=True, env=support_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def numbers(run_dir, name: str) -> pd.DataFrame:
    return pd.read_csv(run_dir / "paper" / "csv" / f"{name}.csv", index_col=0, keep_default_na=False,
                       na_values=[""])


def line(frame: pd.DataFrame, name: str, source: str, ticker: str, metric: str) -> float:
    """The value of framework `name` (or, for the paper's lines, of model `name`)."""
    column = "model" if source == "paper" else "framework"
    cells = frame[(frame[column] == name) & (frame["source"] == source) & (frame["ticker"] == ticker)
                  & (frame["metric"] == metric)]
    assert len(cells) == 1, (name, source, ticker, metric)
    return float(cells["value"].iloc[0])


def test_every_table_is_written_in_markdown_latex_and_csv(paper_run):
    for name in ("main", "head_to_head", "efficiency", "ablations", "rolling", "mcs", "provenance"):
        for path in (f"tables/{name}.md", f"tables/{name}.tex", f"csv/{name}.csv"):
            assert (paper_run / "paper" / path).is_file(), path
    summary = (paper_run / "paper" / "summary.md").read_text()
    assert "## main" in summary and "## provenance" in summary and (paper_run / "paper" / "equity.png").is_file()


def test_main_table_has_the_papers_columns_and_values_beside_ours(paper_run):
    table = (paper_run / "paper" / "tables" / "main.md").read_text()
    header = table.splitlines()[2]
    columns = [f"{t} ARR %" for t in PAPER_TICKERS] + ["AVG ARR %", "AVG SR", "AVG MDD %", "how"]
    positions = [header.index(f"| {c} ") for c in columns]
    assert positions == sorted(positions)
    beside = numbers(paper_run, "main")
    reference = paper_reference()
    paper_bh = reference[(reference["table"] == MAIN) & (reference["row"] == "B&H")]
    for ticker in [*PAPER_TICKERS, "AVG"]:
        expected = paper_bh[(paper_bh["ticker"] == ticker) & (paper_bh["metric"] == "ARR")]["value"].iloc[0]
        assert line(beside, "B&H", "paper", ticker, "ARR") == pytest.approx(expected)
        ours = line(beside, "buy_and_hold", "ours", ticker, "ARR")
        assert line(beside, "buy_and_hold", "Δ", ticker, "ARR") == pytest.approx(ours - expected)
    bh_lines = [row for row in table.splitlines() if "| B&H " in row]
    assert [row.split("|")[4].strip() for row in bh_lines] == ["paper", "ours", "Δ"]
    assert "[" in bh_lines[1]  # ours with its bootstrap CI


def test_sr_is_the_papers_annualised_convention(paper_run):
    equity = pd.read_parquet(paper_run / "equity.parquet")
    beside = numbers(paper_run, "main")
    sharpes = []
    for ticker in PAPER_TICKERS:
        curve = equity[(equity["framework"] == "buy_and_hold") & (equity["ticker"] == ticker)].sort_values("date")
        daily = curve["equity"].to_numpy()[1:] / curve["equity"].to_numpy()[:-1] - 1
        sharpes.append(daily.mean() / daily.std(ddof=1) * np.sqrt(252))
    assert line(beside, "buy_and_hold", "ours", "AVG", "SR_ann") == pytest.approx(np.mean(sharpes))


def test_rows_without_checkpoints_are_shown_not_run_with_their_training_command(paper_run):
    table = (paper_run / "paper" / "tables" / "main.md").read_text()
    aq = [row for row in table.splitlines() if "| AlphaQuanter-7b " in row]
    assert len(aq) == 1 and "not run" in aq[0] and "python train_single_agent.py train=paper" in aq[0]
    ablations = (paper_run / "paper" / "tables" / "ablations.md").read_text()
    for name in ("AlphaQuanter-7b-wo-rformat", "AlphaQuanter-7b-wo-rtool", "AlphaQuanter-7b-theta200bp",
                 "AlphaQuanter-7b-theta100bp"):
        row = next(r for r in ablations.splitlines() if f"| {name} " in r)
        assert "not run" in row
    provenance = numbers(paper_run, "provenance")
    assert provenance.loc["AlphaQuanter-3b", "status"].startswith("not run: no checkpoint for seed 0, 1 (")
    assert provenance.loc["SA-tiny", "decoding"].startswith("greedy, constrained to the protocol grammar")
    facts = json.loads((paper_run / "run.json").read_text())["rows"]["SC-tiny"]
    decisions = pd.read_parquet(paper_run / "decisions.parquet")
    tokens = (decisions["prompt_tokens"] + decisions["completion_tokens"]).groupby(decisions["framework"]).mean()
    assert facts["samples"] == max(1, round(tokens["MA-tiny"] / tokens["SA-tiny"])), "k from this run's MA / SA tokens"
    assert facts["k_from"].startswith("measured: MA-tiny ")
    assert f"self-consistency k = {facts['samples']}" in provenance.loc["SC-tiny", "decoding"]
    assert "budgets: quick 24 / deep 32 new tokens" in provenance.loc["MA-tiny", "decoding"]
    efficiency = (paper_run / "paper" / "tables" / "efficiency.md").read_text()
    assert facts["k_from"] in next(row for row in efficiency.splitlines() if "| SC-tiny " in row)
    assert provenance.loc["SA-tiny", "seeds"] == "0" and provenance.loc["SC-tiny", "seeds"] == "0, 1"
    assert provenance.loc["macd", "kind"] == "rule" and provenance.loc["SA-tiny", "fingerprint"] != "-"


def test_head_to_head_efficiency_rolling_and_mcs(paper_run):
    h2h = numbers(paper_run, "head_to_head")
    assert list(zip(h2h.index, h2h["B"])) == [("SA-tiny", "MA-tiny"), ("SC-tiny", "MA-tiny"), ("SC-tiny", "SA-tiny")]
    efficiency = numbers(paper_run, "efficiency")
    decisions = pd.read_parquet(paper_run / "decisions.parquet")
    tokens = (decisions["prompt_tokens"] + decisions["completion_tokens"]).groupby(decisions["framework"]).mean()
    assert line(efficiency, "SC-tiny", "ours", "AVG", "tokens") == pytest.approx(tokens["SC-tiny"])
    assert line(efficiency, "SC-tiny", "ours", "AVG", "relative_cost") == pytest.approx(tokens["SC-tiny"] / tokens["MA-tiny"])
    assert line(efficiency, "MA-tiny", "ours", "AVG", "relative_cost") == pytest.approx(1.0)
    rolling = numbers(paper_run, "rolling")
    windows = rolling_windows("2025-01-01", TEST_END, step_days=ROLLING_STEP, days=ROLLING_DAYS)
    caption = (paper_run / "paper" / "tables" / "rolling.md").read_text().splitlines()[0]
    assert f"{len(windows)} windows of {ROLLING_DAYS} days" in caption
    assert set(rolling.loc[rolling["source"] == "ours", "framework"]) == {"buy_and_hold", "macd", "zmr", "SA-tiny", "SC-tiny", "MA-tiny"}
    mcs = numbers(paper_run, "mcs")
    assert set(mcs.index) == {"buy_and_hold", "macd", "zmr", "SA-tiny", "SC-tiny", "MA-tiny"}
    assert set(mcs["in MCS (90 %)"]) <= {"yes", "no"} and (mcs["in MCS (90 %)"] == "yes").any()


def test_a_parallel_sweep_over_seeds_writes_one_paper_report_per_job(tmp_path, prices):
    command = benchmark_command(
        "+suite=paper", "data=files", f"data.path={prices}", "~frameworks.finrl_a2c", "~frameworks.finrl_ppo",
        "backbones=tiny", "~rows.per_backbone.SC", "seeds=[0],[1]", "split.test.end=2025-01-03",
        "single_agent/protocol@rows.templates.single_agent.protocol=compact",
        "single_agent/reward@rows.templates.single_agent.reward=compact", "rows.per_backbone.SA.overrides={constrained: true}",
        "paper.rolling={months: null, days: 2, step_days: 1}",
        "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={tmp_path}",
    )
    command.insert(2, "-m")  # the flag before the overrides
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=support_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Joblib.Parallel(n_jobs=2" in result.stdout + result.stderr
    for job, seed in (("0", 0), ("1", 1)):
        provenance = numbers(tmp_path / job, "provenance")
        assert provenance.loc["AlphaQuanter-7b", "status"].startswith(f"not run: no checkpoint for seed {seed} ")
        assert provenance.loc["SA-tiny", "status"] == "run"
        mcs = (tmp_path / job / "paper" / "tables" / "mcs.md").read_text()
        assert "not computed: fewer than 10 days" in mcs


@pytest.fixture(scope="module")
def rule_rows_only(tmp_path_factory, prices):
    """The paper suite without LLM weights, as a first run makes it: `backbones=[]` (no SA, SC or MA rows),
    the trained rows without checkpoints, FinRL left out to keep it cheap."""
    out = tmp_path_factory.mktemp("paper_no_llm")
    result = subprocess.run(benchmark_command(
        "+suite=paper", "data=files", f"data.path={prices}", "~frameworks.finrl_a2c", "~frameworks.finrl_ppo",
        "backbones=[]", "seeds=[0]", f"split.test.end={TEST_END}",
        f"paper.rolling={{months: null, days: {ROLLING_DAYS}, step_days: {ROLLING_STEP}}}", f"hydra.run.dir={out}",
    ), cwd=ROOT, capture_output=True, text=True, env=support_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.mark.slow
def test_a_run_without_llm_rows_writes_every_table_with_its_rows_not_run(rule_rows_only):
    for name in ("main", "head_to_head", "efficiency", "ablations", "rolling", "mcs", "provenance"):
        assert (rule_rows_only / "paper" / "tables" / f"{name}.md").is_file(), name
    efficiency = (rule_rows_only / "paper" / "tables" / "efficiency.md").read_text()
    assert "no LLM row ran (backbones: none)" in efficiency
    aq = next(row for row in efficiency.splitlines() if "| AlphaQuanter-7b " in row)
    assert aq.count("not run") == 4, "tokens, relative cost, ARR and k of a row not run"
    beside = numbers(rule_rows_only, "efficiency")
    assert set(beside["source"]) == {"paper"}, "the paper's lines, none of ours with numbers"
    summary = (rule_rows_only / "paper" / "summary.md").read_text()
    assert "## efficiency" in summary and "## provenance" in summary


def composed_rows(suite: str) -> dict:
    """The rows `+suite=<suite>` builds (as `run_benchmark.py` does), by name, as plain configs."""
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"+suite={suite}"])
    frameworks, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), list(cfg.seeds))
    with open_dict(cfg):
        cfg.frameworks = frameworks
    return {name: OmegaConf.to_container(cfg.frameworks[name], resolve=True) for name in facts if name in frameworks}


def debate_settings(row: dict) -> DebateSettings:
    return DebateSettings.model_validate({k: v for k, v in row.items() if not k.startswith("_")})


def test_the_paper_suites_ma_rows_run_at_the_papers_scale_with_free_decoding():
    rows = composed_rows("paper")
    ma = {name: debate_settings(row) for name, row in rows.items() if name.startswith("MA-")}
    assert set(ma) == {"MA-qwen2.5-3b", "MA-qwen2.5-7b"}
    for name, settings in ma.items():
        assert settings.quick.max_new_tokens >= 1024 and settings.deep.max_new_tokens >= 2048, name
        assert not settings.constrained and settings.grammar_chars is None, "free decoding, like SA"
        assert settings.answer_chars >= 1000 and settings.max_tool_rounds == 8 and settings.first_tool_call == "auto"
        assert settings.quick.temperature == settings.deep.temperature == 0.0
        assert rows[name.replace("MA-", "SA-")]["constrained"] is False


def test_the_offline_paper_suite_keeps_laptop_budgets_and_says_so():
    (name, row), = [(n, r) for n, r in composed_rows("paper_offline").items() if n.startswith("MA-")]
    settings = debate_settings(row)
    laptop = debate_settings(compose_option("framework", "multi_agent"))
    assert (settings.quick.max_new_tokens, settings.deep.max_new_tokens, settings.answer_chars, settings.max_tool_rounds,
            settings.constrained) == (laptop.quick.max_new_tokens, laptop.deep.max_new_tokens, laptop.answer_chars,
                                      laptop.max_tool_rounds, laptop.constrained)
    assert settings.budgets.startswith(f"quick {laptop.quick.max_new_tokens} / deep {laptop.deep.max_new_tokens}")
