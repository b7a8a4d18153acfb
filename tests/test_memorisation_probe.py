"""The memorisation probe end to end (`+probe=memorisation`, docs/memorisation.md): the smoke suite
with a framework that cheats (it looks up the real future by ticker and date), the rule baselines'
gap of exactly zero, the cutoff split, the verdict line, results without the probe unchanged, and
text it cannot clean."""

from __future__ import annotations

import json
import re
import subprocess

import pandas as pd
import pytest
from bars import random_bars, write_csv
from cli_helpers import ROOT, benchmark_command, support_env
from memorised import write_future_returns

from harness.run_directory import load_run
from metrics import compare
from metrics.memorisation import ALL, AFTER, BEFORE, memorisation_numbers
from metrics.report import write_report
from market.sources.embedded import load_embedded

SCALE_FREE_BASELINES = ["buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi"]


def frameworks(table) -> tuple[str, ...]:
    return (f"+frameworks.cheat={{_target_: memorised.FutureLookup, table: '{table}'}}",
            f"+frameworks.cheat_to_feb={{_target_: memorised.FutureLookup, table: '{table}', knowledge_cutoff: '2020-02'}}",
            "+frameworks.named={_target_: memorised.ReadsItsTickers, tickers: '${tickers}'}")


def run(*overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(benchmark_command(*overrides), cwd=ROOT, env=support_env(), capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The smoke suite plus the cheats, with the probe and without it."""
    out = tmp_path_factory.mktemp("probe")
    table = write_future_returns(load_embedded(["MSFT", "NVDA"]), ["MSFT", "NVDA"], out / "future_returns.csv")
    probed, plain = out / "probed", out / "plain"
    for folder, extra in ((probed, ("+probe=memorisation",)), (plain, ())):
        done = run("+suite=smoke", *frameworks(table), *extra, f"hydra.run.dir={folder}")
        assert done.returncode == 0, done.stderr[-3000:]
    return probed, plain


@pytest.fixture(scope="module")
def numbers(runs):
    probed, _ = runs
    return memorisation_numbers(load_run(probed), load_run(probed / "anonymised"))


@pytest.mark.slow
def test_the_probe_writes_the_memorisation_table_for_every_row(runs, numbers):
    probed, _ = runs
    table = (probed / "tables" / "memorisation.md").read_text()
    rows = pd.read_csv(probed / "metrics.csv")["framework"].unique()
    assert set(numbers.xs(ALL, level="window").index) == set(rows)
    assert all(f"| {name} | all |" in table for name in rows)
    assert (probed / "tables" / "memorisation.tex").is_file() and "## memorisation" in (probed / "summary.md").read_text()


@pytest.mark.slow
def test_results_without_the_probe_are_the_same(runs):
    probed, plain = runs
    assert compare.main([str(plain), str(probed)]) == 0
    assert not (plain / "anonymised").exists() and "memorisation" not in (plain / "summary.md").read_text()


@pytest.mark.slow
def test_every_scale_free_rule_baseline_has_exactly_zero_gap(numbers):
    rows = numbers.xs(ALL, level="window").loc[SCALE_FREE_BASELINES]
    assert (rows["dmean"] == 0.0).all() and (rows["real"] == rows["anonymised"]).all()
    assert (rows["agree"] == rows["decisions"]).all() and (rows["decisions"] == 2 * 62).all()
    assert (rows["p_mean"] == 1.0).all()


@pytest.mark.slow
def test_the_cheat_beats_buy_and_hold_on_real_data_and_the_probe_catches_it(runs, numbers):
    probed, _ = runs
    metrics = pd.read_csv(probed / "metrics.csv").query("ticker == 'AVG'").set_index("framework")
    assert metrics.loc["cheat", "TR"] > metrics.loc["buy_and_hold", "TR"] + 0.5
    replayed = pd.read_parquet(probed / "anonymised" / "decisions.parquet").query("framework == 'cheat'")
    assert (replayed["action"] == "HOLD").all() and len(replayed) == 2 * 62  # no key found under codes and moved dates
    cheat = numbers.loc[("cheat", ALL)]
    assert cheat["dmean"] > 50e-4 and cheat["p_mean"] < 0.01 and cheat["p_mean_holm"] < 0.05
    assert cheat["a_right"] > cheat["b_right"] and cheat["p_mcnemar"] < 0.05  # a 1-day look-ahead, a 7-day label


@pytest.mark.slow
def test_a_window_that_spans_the_cutoff_is_reported_on_both_sides(numbers):
    whole, before, after = (numbers.loc[("cheat_to_feb", side)] for side in (ALL, BEFORE, AFTER))
    assert whole["cutoff"] == "2020-02"
    assert whole["decisions_before"] == before["decisions"] == 2 * 40 and after["decisions"] == 2 * 22
    assert before["agree"] < before["decisions"] and after["agree"] == after["decisions"]  # after it, both HOLD
    assert before["p_mean"] < 0.01 and before["dmean"] > 0
    assert ("cheat", BEFORE) not in numbers.index  # no cutoff: one row


@pytest.mark.slow
def test_a_framework_configured_with_the_tickers_is_rebuilt_for_the_replay(runs):
    probed, _ = runs
    facts = json.loads((probed / "anonymised" / "run.json").read_text())
    assert facts["decisions_failed"] == 0
    codes = facts["anonymisation"]["codes"]
    assert set(codes) == {"MSFT", "NVDA"} and not set(codes.values()) & {"MSFT", "NVDA"}


@pytest.mark.slow
def test_the_verdict_names_the_cheat_and_only_the_cheats(runs):
    probed, _ = runs
    summary = write_report(probed, reps=50).read_text()
    verdict = summary.split("**Verdict.**", 1)[1].split("\n", 1)[0]
    line = verdict.split("Memorisation probe: ", 1)[1]
    cheat = re.match(r"cheat: \+(\d+\.\d) bp/day on real names vs anonymised, p = (0\.\d{3}) \(Holm 0\.0\d\d\)", line)
    assert cheat is not None and float(cheat.group(1)) > 50 and float(cheat.group(2)) < 0.01
    assert "— its result may rest on memory" in line
    assert not any(f"{name}:" in line for name in [*SCALE_FREE_BASELINES, "random", "named", "cheat_to_feb"])
    assert "6 of 9 decide identically on both" in line


def record_market(folder, headline: str):
    """A bars folder with ticker AAA and a news file with one headline about it."""
    bars = folder / "bars"
    bars.mkdir()
    write_csv(random_bars(250, start="2019-06-03"), bars / "AAA.csv")
    news = folder / "news.jsonl"
    news.write_text(json.dumps({"ticker": "AAA", "available_at": "2020-01-10 09:00", "headline": headline,
                                "source": "Wire", "sentiment": 0.5}) + "\n")
    return ("+suite=smoke", "tickers=[AAA]", "data=files_with_records", f"data.data.path={bars}",
            f"+data.files.news={news}", "+probe=memorisation")


@pytest.mark.slow
def test_a_record_the_renamer_cannot_clean_stops_the_run_with_one_line_naming_it(tmp_path):
    done = run(*record_market(tmp_path, "Why #AAAgang keeps buying"), f"hydra.run.dir={tmp_path / 'out'}")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: news record 1 (AAA, published 2020-01-10 09:00): headline 'Why #AAAgang keeps buying' still names "
        "'AAA' after anonymisation; add that form to probe.aliases, correct the record, or set "
        "probe.uncleanable=withhold to leave such records out of the replay (they are counted in the report)")
    assert not (tmp_path / "out" / "metrics.csv").exists()  # stopped before a decision was made


@pytest.mark.slow
def test_withheld_records_are_counted_in_the_report(tmp_path):
    out = tmp_path / "out"
    done = run(*record_market(tmp_path, "Why #AAAgang keeps buying"), "probe.uncleanable=withhold",
               f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((out / "anonymised" / "run.json").read_text())["anonymisation"]["withheld_records"] == {"news": 1}
    assert "1 text record could not be cleaned and were left out of the replay (news 1)" in \
        (out / "tables" / "memorisation.md").read_text()
    assert "text records withheld: 1," in done.stdout


@pytest.mark.slow
def test_the_single_agent_on_the_synthetic_market_shows_no_significant_gap(tmp_path):
    out = tmp_path / "out"
    done = run("+suite=synthetic", "tickers=[ALFA,BRVO]", "seeds=[0]", "split.test.end=2020-01-31",
               "+framework@frameworks.single_agent=single_agent", "llm@frameworks.single_agent.llm=tiny",
               "+framework@frameworks.expert=scripted_expert", "+probe=memorisation", f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = memorisation_numbers(load_run(out), load_run(out / "anonymised")).xs(ALL, level="window")
    agent, expert = rows.loc["single_agent"], rows.loc["expert"]
    assert agent["decisions"] == 2 * 22 and agent["agree"] < agent["decisions"]  # it reads the names it is shown
    assert agent["p_mean"] > 0.05
    assert expert["dmean"] == 0.0 and expert["agree"] == expert["decisions"]  # sentiment and bars carry over exactly
