"""The trace viewer of a real run, opened from disk in headless Chromium (Selenium).

The run: `run_benchmark.py` with the default duel frameworks (every rule baseline, the single
agent and the debate, both on the tiny model: traces of the same shape as SmolLM2's, in
seconds) on MSFT over three days, plus `HostileText`, a single-agent episode whose "model"
writes `<script>` and `<img onerror>` into its reasoning and a tool argument. The viewer is
the one the run wrote by default.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, support_env

from market.decision import Decision
from market.regime import regime_labels
from metrics.viewer.browser import executables, headless_chromium, page_url

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

if None in executables():
    if os.environ.get("CI"):
        pytest.fail("the viewer's browser tests need chromium and chromium-driver (.ci/run installs them)",
                    pytrace=False)
    pytest.skip("chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)",
                allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ready  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

DAYS = ("2020-06-01", "2020-06-02", "2020-06-03")
DUEL = ("buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi", "random", "single_agent", "multi_agent")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("duel")
    done = subprocess.run(benchmark_command(
        "tickers=MSFT", f"split.test.end={DAYS[-1]}", "llm@frameworks.single_agent.llm=tiny",
        "llm@frameworks.multi_agent.quick.llm=tiny", "+frameworks.hostile={_target_: support_frameworks.HostileText}",
        f"hydra.run.dir={out}"), cwd=ROOT, env=support_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].endswith(f"viewer/index.html (the trace viewer) in {out}")
    return out


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as driver:
        yield driver


def journaled(run_dir, framework: str, date: str) -> Decision:
    with sqlite3.connect(run_dir / "journal.sqlite") as db:
        (payload,) = db.execute("SELECT decision FROM decisions WHERE framework = ? AND date LIKE ?",
                                (framework, f"{date}%")).fetchone()
    return Decision.model_validate_json(payload)


def wait_for(browser, css: str):
    return WebDriverWait(browser, 30).until(ready.presence_of_element_located((By.CSS_SELECTOR, css)))


def errors(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_index_opens_from_disk_with_its_chart_and_every_decision(run_dir, browser):
    browser.get(page_url(run_dir / "viewer" / "index.html"))
    wait_for(browser, "#chart .main-svg")
    assert errors(browser) == []
    decisions = len(pd.read_parquet(run_dir / "decisions.parquet"))
    assert decisions == (len(DUEL) + 1) * len(DAYS)
    assert f"of {decisions} decisions" in browser.find_element(By.ID, "page-info").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#decisions tbody tr")) == decisions
    assert browser.find_element(By.CSS_SELECTOR, "#chart .gtitle").text == "single_agent · MSFT · seed 0"
    assert not browser.find_elements(By.CSS_SELECTOR, "script[src^='http']"), "nothing from the network"


def test_the_table_filters_by_framework_and_sorts_by_tokens(run_dir, browser):
    browser.get(page_url(run_dir / "viewer" / "index.html"))
    wait_for(browser, "#decisions tbody tr")
    Select(browser.find_element(By.CSS_SELECTOR, "[data-filter=fw]")).select_by_visible_text("multi_agent")
    rows = browser.find_elements(By.CSS_SELECTOR, "#decisions tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == ["multi_agent"] * len(DAYS)
    actions = [r.find_elements(By.TAG_NAME, "td")[4].text for r in rows]
    assert actions == [journaled(run_dir, "multi_agent", day).action.value for day in DAYS]
    Select(browser.find_element(By.CSS_SELECTOR, "[data-filter=fw]")).select_by_visible_text("all")
    browser.find_element(By.CSS_SELECTOR, "th[data-key=tokens]").click()  # numeric columns sort largest first
    first = browser.find_element(By.CSS_SELECTOR, "#decisions tbody tr td:nth-child(2)").text
    table = pd.read_parquet(run_dir / "decisions.parquet")
    tokens = table["prompt_tokens"] + table["completion_tokens"]
    assert first == table.loc[tokens.idxmax(), "framework"]


def test_from_the_index_to_a_decision_page_and_side_by_side(run_dir, browser):
    browser.get(page_url(run_dir / "viewer" / "index.html"))
    wait_for(browser, "#decisions tbody tr")
    Select(browser.find_element(By.CSS_SELECTOR, "[data-filter=fw]")).select_by_visible_text("single_agent")
    browser.find_element(By.CSS_SELECTOR, "#decisions tbody tr a.decision-link").click()
    wait_for(browser, ".reading")
    assert errors(browser) == []
    assert browser.find_element(By.TAG_NAME, "h1").text == f"single_agent · MSFT · {DAYS[0]} · seed 0"

    busiest = max(DAYS, key=lambda day: len(journaled(run_dir, "single_agent", day).trace.tool_calls))
    trace = journaled(run_dir, "single_agent", busiest).trace
    assert trace.tool_calls, "the tiny model calls tools on some day"
    for _ in range(DAYS.index(busiest)):
        browser.find_element(By.PARTIAL_LINK_TEXT, "next day").click()
        wait_for(browser, ".reading")
    assert browser.find_element(By.TAG_NAME, "h1").text == f"single_agent · MSFT · {busiest} · seed 0"
    said = [m["content"] for m in trace.messages if m["role"] == "assistant"]
    raw = [pre.get_attribute("textContent") for pre in browser.find_elements(By.CSS_SELECTOR, ".block.turn pre.raw")]
    assert raw == said, "every turn's raw text, character for character"
    calls = browser.find_elements(By.CSS_SELECTOR, ".block.turn .call code")
    assert [c.get_attribute("textContent") for c in calls] == [
        f"{r.name}({json.dumps(r.arguments, separators=(',', ':'))})" for r in trace.tool_calls]
    results = browser.find_elements(By.CSS_SELECTOR, ".block.turn pre.result-text")
    assert [r.get_attribute("textContent") for r in results] == [m["content"] for m in trace.messages
                                                                   if m["role"] == "tool"]
    outcome = browser.find_element(By.CSS_SELECTOR, ".block.outcome .badge.action").text
    assert outcome == journaled(run_dir, "single_agent", busiest).action.value

    closes = pd.read_parquet(run_dir / "prices.parquet").set_index("date")["close"]
    label = regime_labels(closes)[pd.Timestamp(busiest)]
    browser.find_element(By.ID, "compare-link").click()
    wait_for(browser, ".side-b .reading")
    assert errors(browser) == []
    assert browser.find_element(By.TAG_NAME, "h1").text == f"MSFT · {busiest} · single_agent vs multi_agent"
    assert label in browser.find_element(By.ID, "day").text
    debate = journaled(run_dir, "multi_agent", busiest).trace
    nodes = browser.find_elements(By.CSS_SELECTOR, ".side-b .block.node h3")
    assert [n.get_attribute("textContent") for n in nodes] == [m["role"].replace("_", " ") for m in debate.messages]
    stages = [h.get_attribute("textContent") for h in browser.find_elements(By.CSS_SELECTOR, ".side-b h2.stage")]
    assert stages == ["Analyst reports", "Bull / bear debate", "Research plan", "Trader proposal", "Risk debate",
                      "Final decision"]
    parsed = browser.find_elements(By.CSS_SELECTOR, ".side-b .block.node pre.raw-answer")
    assert [p.get_attribute("textContent") for p in parsed] == list(debate.extra["raw_answers"].values())


def test_model_text_with_markup_is_shown_as_text_and_runs_no_script(run_dir, browser):
    browser.get(page_url(run_dir / "viewer" / "decision.html", framework="hostile", ticker="MSFT",
                         date=DAYS[0], seed="0"))
    wait_for(browser, ".reading")
    text = browser.find_element(By.CLASS_NAME, "reading").text
    assert '<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">' in text
    assert '"ticker":"<script>window.__pwned = 3</script>"' in text
    assert "<b>bold?</b>" in text
    assert browser.execute_script("return window.__pwned") is None
    assert browser.find_elements(By.CSS_SELECTOR, ".reading script, .reading img, .reading b") == []
