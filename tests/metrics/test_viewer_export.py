"""`metrics.viewer`: the data it exports from a real run directory, the files it writes, its
command line and its server (the pages themselves are tested in Chromium, test_viewer_browser.py).
The tests that read the module's run are slow: the run takes a few seconds."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import urllib.request

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, support_env

from harness.run_directory import load_run
from market.regime import ACTION_OF_REGIME, regime_labels
from metrics.viewer.__main__ import main
from metrics.viewer.export import DecisionRecord, build
from metrics.viewer.serve import make_server
from metrics.viewer.site import CHUNK_BYTES, MAX_CHUNK, as_json, chunk_path, chunk_sizes, data_script, write_viewer

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The smoke suite's rule baselines and `HostileText` on MSFT over 6 days, with viewer=false."""
    out = tmp_path_factory.mktemp("rules")
    done = subprocess.run(benchmark_command(
        "+suite=smoke", "tickers=MSFT", "split.test.end=2020-01-09", "viewer=false",
        "+frameworks.hostile={_target_: support_frameworks.HostileText}", f"hydra.run.dir={out}"),
        cwd=ROOT, env=support_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "viewer" not in done.stdout
    return out


@pytest.fixture(scope="module")
def data(run_dir):
    return build(load_run(run_dir))


def read_data_file(path) -> tuple[str, object]:
    """(name, data) of a data file `TD.put(name, data);`."""
    text = path.read_text(encoding="ascii")
    assert text.startswith("TD.put(") and text.endswith(");\n")
    name, _, payload = text[len("TD.put("):-len(");\n")].partition(",")
    return json.loads(name), json.loads(payload)


@pytest.mark.slow
def test_viewer_false_writes_no_viewer(run_dir):
    assert (run_dir / "summary.md").is_file() and not (run_dir / "viewer").exists()


@pytest.mark.slow
def test_the_table_has_one_row_per_decision_of_decisions_parquet(run_dir, data):
    table = pd.read_parquet(run_dir / "decisions.parquet")
    columns = data.index["decisions"]
    assert {len(values) for values in columns.values()} == {len(table)}
    names = [f["name"] for f in data.meta["frameworks"]]
    assert [names[i] for i in columns["fw"]] == list(table["framework"])
    assert columns["action"] == list(table["action"])
    assert columns["date"] == [f"{d:%Y-%m-%d}" for d in table["date"]]
    assert columns["tokens"] == list(table["prompt_tokens"] + table["completion_tokens"])
    hostile = [f["llm"] for f in data.meta["frameworks"] if f["name"] == "hostile"]
    assert hostile == [True], "its episode books one LLM call per turn"


@pytest.mark.slow
def test_labels_outcomes_and_forward_returns_come_from_prices_parquet(run_dir, data):
    closes = pd.read_parquet(run_dir / "prices.parquet").set_index("date")["close"]
    labels = regime_labels(closes)
    for decision in data.decisions:
        record = decision.record
        summary, day = record["summary"], pd.Timestamp(record["summary"]["date"])
        label = labels[day] if isinstance(labels[day], str) else None
        assert summary["label"] == label
        assert summary["hit"] == (None if label is None else record["decision"]["action"] == ACTION_OF_REGIME[label])
        at = closes.index.get_loc(day)
        assert summary["forward"]["1"] == pytest.approx(closes.iloc[at + 1] / closes.iloc[at] - 1)
        assert summary["forward"]["5"] == pytest.approx(closes.iloc[at + 5] / closes.iloc[at] - 1)


@pytest.mark.slow
def test_a_decisions_fill_is_its_episodes_trade_on_the_next_bar(run_dir, data):
    trades = pd.read_csv(run_dir / "trades.csv", parse_dates=["date"])
    equity = pd.read_parquet(run_dir / "equity.parquet")
    bought = trades[trades["framework"] == "buy_and_hold"]
    records = [d.record for d in data.decisions if d.record["summary"]["framework"] == "buy_and_hold"]
    days = sorted(equity.loc[equity["framework"] == "buy_and_hold", "date"])
    filled = [r for r in records if r["summary"]["fill"] is not None]
    assert len(filled) == len(bought) > 0
    for record in filled:
        fill = record["summary"]["fill"]
        day = days[days.index(pd.Timestamp(record["summary"]["date"])) + 1]
        trade = bought[bought["date"] == day].iloc[0]
        assert (fill["date"], fill["side"], fill["shares"], fill["price"]) == (
            f"{day:%Y-%m-%d}", trade["side"], trade["shares"], pytest.approx(trade["price"]))
        held = equity[(equity["framework"] == "buy_and_hold") & (equity["date"] == day)]["position"].item()
        assert record["summary"]["shares_after"] == held


@pytest.mark.slow
def test_the_viewer_files_every_decision_under_its_date_in_its_chunk_and_keeps_the_index_small(run_dir, tmp_path,
                                                                                                   data):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    index = write_viewer(copy)
    folder = index.parent
    assert sorted(p.name for p in folder.iterdir()) == ["assets", "compare.html", "data", "decision.html", "index.html"]
    assert index.stat().st_size < 20_000, "the data lives in data/, not in the page"
    meta = read_data_file(folder / "data/run.js")[1]
    assert all(1 <= f["chunk"] <= MAX_CHUNK for f in meta["frameworks"])
    names = set()
    for decision in data.decisions:
        chunk = meta["frameworks"][decision.framework]["chunk"]
        name = chunk_path(decision.framework, decision.ticker, decision.seed, decision.bar // chunk)
        stored = read_data_file(folder / name)
        assert stored[0] == name
        assert stored[1][decision.record["summary"]["date"]] == json.loads(json.dumps(decision.record))
        names.add(name)
    assert sorted(str(p.relative_to(folder)) for p in folder.glob("data/decisions/*/*/*.js")) == sorted(names)
    assert (folder / "assets/plotly.min.js").stat().st_size > 1_000_000
    html = index.read_text()
    assert "https://" not in html and "http://" not in html


def test_data_files_are_ascii_javascript_and_keep_model_text_whole():
    text = "<script>alert(1)</script> “quoted” \u2028 \x07"
    script = data_script("data/x.js", as_json({"text": text}))
    assert script.isascii()
    assert json.loads(script[len('TD.put("data/x.js",'):-len(");\n")]) == {"text": text}


def test_a_framework_with_large_records_gets_fewer_per_file():
    def dumped(framework: int, size: int, count: int):
        return [(DecisionRecord(framework, 0, 0, bar, {}), "x" * size) for bar in range(count)]

    sizes = chunk_sizes(dumped(0, 100, 10) + dumped(1, CHUNK_BYTES // 4, 10) + dumped(2, 2 * CHUNK_BYTES, 3), 4)
    assert sizes == [MAX_CHUNK, 4, 1, MAX_CHUNK]


@pytest.mark.slow
def test_each_decision_links_its_episodes_previous_and_next_day(data):
    mine = [d.record for d in data.decisions if d.record["summary"]["framework"] == "macd"]
    dates = [r["summary"]["date"] for r in mine]
    assert [r["prev"] for r in mine] == [None, *dates[:-1]]
    assert [r["next"] for r in mine] == [*dates[1:], None]


@pytest.mark.slow
def test_the_command_line_writes_the_viewer_and_names_a_bad_run_directory(run_dir, tmp_path, capsys):
    assert main([str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nowhere'}: not a run directory\n"
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "journal.sqlite").unlink()
    assert main([str(copy)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {copy / 'journal.sqlite'}: missing")
    shutil.copy(run_dir / "journal.sqlite", copy / "journal.sqlite")
    assert main([str(copy)]) == 0
    assert capsys.readouterr().out == f"wrote {copy / 'viewer' / 'index.html'} (open it from disk, no server needed)\n"


@pytest.mark.slow
def test_the_server_serves_the_viewer_on_the_loopback(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    folder = write_viewer(copy).parent
    server = make_server(folder, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as reply:
            assert reply.status == 200 and b"<title>TradeDuel" in reply.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/run.js", timeout=10) as reply:
            assert reply.read().startswith(b'TD.put("data/run.js",')
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
