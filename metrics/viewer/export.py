"""The viewer's data, read from a run directory and recomputing no decision.

Sources: the run's tables through `harness.run_directory.load_run` (decisions, equity, trades,
prices, run.json, config.yaml), the traces through the journal's reader
(`metrics.agent_rows.journal_entries`: the decisions of decisions.parquet under run.json's
journal keys), and the regime label of `market.regime` on prices.parquet's closes (H = 7,
eta = 0.8, theta = 1.5 %, as the report's regime tables).

Three kinds of data, each plain JSON:

* `meta`: the run's facts, its frameworks (index, name, whether it made LLM calls), tickers
  (with every bar date of prices.parquet), seeds and episodes; every page reads it;
* `index`: one column array per field of the decisions table, and per episode the series the
  charts draw (equity and position at each bar, fills); the price bars per ticker;
* one record per decision (`DecisionRecord`): the decision as journaled (every field, so newer fields
  such as portfolio weights show), its summary (action text, label, outcome, forward returns,
  fill, position), and its trace in reading order (`metrics.viewer.reading_order`).

A decision's label is the regime of its day; `hit` says whether its action is the regime's
action (BUY <-> bullish, SELL <-> bearish, HOLD <-> sideways), None without a label or an
action. The forward returns are close-to-close, p_{t+h} / p_t - 1 for h = 1 and 5 bars
(fractions; None past the bars of prices.parquet). A decision's fill is the trade of its
episode on the next bar (the simulator fills a decision on the bar after it), its position
the shares held at that bar's close.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
from omegaconf import OmegaConf

from harness.journal import JournalEntry
from harness.run_directory import Run
from market.regime import ACTION_OF_REGIME, regime_labels, regime_scores
from metrics.agent_rows import journal_entries
from metrics.viewer.reading_order import reading_order

FORWARD_BARS = (1, 5)
"""Horizons (bars) of the forward close-to-close returns shown beside a decision."""


def date_key(date: pd.Timestamp) -> str:
    """How a bar's date is written in the viewer's data and addresses: YYYY-MM-DD, with the
    time (THHMM) only for bars that are not at midnight (intraday data)."""
    return f"{date:%Y-%m-%d}" if date == date.normalize() else f"{date:%Y-%m-%dT%H%M}"


def _plain(value: Any) -> Any:
    """A value JSON can hold without NaN: numpy scalars as Python numbers, NaN and NaT as None."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value


def action_text(decision: dict[str, Any]) -> str:
    """What a decision asked for: its action, else its target exposure, else its weights."""
    if decision.get("action"):
        return str(decision["action"])
    if decision.get("target") is not None:
        return f"target {decision['target']:+.2f}"
    if decision.get("weights"):
        return "weights " + ", ".join(f"{k} {v:.2f}" for k, v in decision["weights"].items())
    return "none"


@dataclass(frozen=True)
class TickerBars:
    """One ticker's bars of prices.parquet with the regime label and score of each bar."""

    dates: list[str]
    close: list[float]
    label: list[str | None]
    score: list[float | None]
    position: dict[pd.Timestamp, int]

    @classmethod
    def of(cls, bars: pd.DataFrame) -> "TickerBars":
        close = bars.set_index("date")["close"]
        return cls(dates=[date_key(d) for d in close.index], close=[float(v) for v in close], label=[_plain(v) for v in regime_labels(close)],
                   score=[_plain(v) for v in regime_scores(close)],
                   position={d: i for i, d in enumerate(close.index)})

    def forward_return(self, at: int, bars: int) -> float | None:
        """p_{t+bars} / p_t - 1 from bar `at`; None past the last bar."""
        return self.close[at + bars] / self.close[at] - 1.0 if at + bars < len(self.close) else None


def _analyst_tools(run: Run) -> dict[str, dict[str, str]]:
    """Framework -> {tool name -> debate role} from config.yaml's `analyst_tools` (debate frameworks only)."""
    path = run.path / "config.yaml"
    if not path.is_file():
        return {}
    frameworks = OmegaConf.to_container(OmegaConf.load(path)).get("frameworks") or {}
    return {name: {tool: f"{analyst}_analyst" for analyst, tools in config["analyst_tools"].items() for tool in tools}
            for name, config in frameworks.items() if isinstance(config, dict) and "analyst_tools" in config}


@dataclass(frozen=True)
class DecisionRecord:
    """One decision's record and where it belongs: its framework's and ticker's numbers (their
    places in `meta`), its seed, and the bar of its day among the ticker's dates."""

    framework: int
    ticker: int
    seed: int
    bar: int
    record: dict[str, Any]


@dataclass
class ViewerData:
    """Everything the viewer writes: `meta`, `index`, and the decisions' records."""

    meta: dict[str, Any]
    index: dict[str, Any]
    decisions: list[DecisionRecord]


class _Episode:
    """One episode's bars (dates, equity, position) and its fills by date."""

    def __init__(self, equity: pd.DataFrame, trades: pd.DataFrame):
        self.dates = list(equity["date"])
        self.next_bar = dict(zip(self.dates, self.dates[1:]))
        self.equity = dict(zip(self.dates, equity["equity"].astype(float)))
        self.shares = dict(zip(self.dates, equity["position"].astype(float)))
        self.fills = {row.date: row for row in trades.itertuples(index=False)}


def _optional(row, column: str, default: float = 0.0) -> float:
    """A count or time of decisions.parquet that older run directories may lack (`default` then)."""
    value = _plain(getattr(row, column, None))
    return default if value is None else value


TABLE_COLUMNS = ("fw", "tk", "seed", "date", "action", "label", "hit", "fallback", "error", "failures", "lookahead",
                 "tools", "llm", "tokens", "latency", "wall", "fill")
"""The decisions table's columns in `index["decisions"]` (index.js reads them by these names)."""


def _summary(row, entry: JournalEntry | None, decision: dict[str, Any], bars: TickerBars, episode: _Episode) -> dict:
    """What a decision page shows above the trace (module docstring), from its decisions.parquet row."""
    at = bars.position[row.date]
    label, action = bars.label[at], decision.get("action")
    fill_day = episode.next_bar.get(row.date)
    fill = episode.fills.get(fill_day)
    return {
        "framework": row.framework, "ticker": row.ticker, "seed": int(row.seed), "date": date_key(row.date),
        "journal_key": entry.key if entry else None, "journaled": entry is not None,
        "action_text": action_text(decision), "label": label, "score": bars.score[at],
        "hit": None if label is None or action is None else action == ACTION_OF_REGIME[label],
        "forward": {str(h): bars.forward_return(at, h) for h in FORWARD_BARS},
        "fill": None if fill is None else {"date": date_key(fill.date), "side": fill.side, "shares": float(fill.shares),
                                           "price": float(fill.price), "fee": float(fill.fee)},
        "shares_after": episode.shares.get(fill_day), "equity": episode.equity.get(row.date),
        "wall_s": _plain(row.wall_s), "llm_calls": int(row.llm_calls),
        "prompt_tokens": int(row.prompt_tokens), "completion_tokens": int(row.completion_tokens),
    }


def _table_row(row, summary: dict[str, Any], trace: dict[str, Any], framework: int, ticker: int) -> dict[str, Any]:
    """One row of the decisions table, by `TABLE_COLUMNS`."""
    fill = summary["fill"]
    return {
        "fw": framework, "tk": ticker, "seed": summary["seed"], "date": summary["date"],
        "action": summary["action_text"], "label": summary["label"], "hit": summary["hit"],
        "fallback": bool(trace.get("fallback")), "error": _plain(getattr(row, "error", None)),
        "failures": len(trace.get("parse_failures", [])), "lookahead": int(_optional(row, "lookahead_calls")),
        "tools": int(_optional(row, "tool_calls")), "llm": summary["llm_calls"],
        "tokens": summary["prompt_tokens"] + summary["completion_tokens"],
        "latency": round(float(_optional(row, "llm_latency_s")), 3), "wall": round(float(summary["wall_s"] or 0.0), 4),
        "fill": None if fill is None else f"{fill['side']} {fill['shares']:g} @ {fill['price']:.2f}",
    }


def build(run: Run) -> ViewerData:
    """The viewer's data of one run directory (module docstring)."""
    frameworks, tickers = run.frameworks, run.tickers
    fw_index, tk_index = {f: i for i, f in enumerate(frameworks)}, {t: i for i, t in enumerate(tickers)}
    bars = {t: TickerBars.of(b) for t, b in run.prices.groupby("ticker", sort=False) if t in tk_index}
    entries: dict[tuple, JournalEntry] = {(e.framework, e.ticker, e.date, e.seed): e for e in journal_entries(run)}
    tool_roles = _analyst_tools(run)
    trades = dict(iter(run.trades.groupby(["framework", "ticker", "seed"], sort=False)))
    episodes = {key: _Episode(part, trades.get(key, run.trades.iloc[:0]))
                for key, part in run.equity.groupby(["framework", "ticker", "seed"], sort=False)}

    columns: dict[str, list] = {name: [] for name in TABLE_COLUMNS}
    records: list[DecisionRecord] = []
    for row in run.decisions.itertuples(index=False):
        entry = entries.get((row.framework, row.ticker, row.date, row.seed))
        decision = entry.decision.model_dump(mode="json") if entry else {"trace": None}
        trace = decision["trace"] or {}
        summary = _summary(row, entry, decision, bars[row.ticker], episodes[(row.framework, row.ticker, row.seed)])
        record = {"summary": summary, "decision": {k: v for k, v in decision.items() if k != "trace"},
                  "reading": reading_order(trace, tool_roles.get(row.framework))}
        records.append(DecisionRecord(fw_index[row.framework], tk_index[row.ticker], summary["seed"],
                                      bars[row.ticker].position[row.date], record))
        for name, value in _table_row(row, summary, trace, fw_index[row.framework], tk_index[row.ticker]).items():
            columns[name].append(value)
    _link_days(records)

    made_llm_calls = set(run.decisions.loc[run.decisions["llm_calls"] > 0, "framework"])
    meta = {
        "suite": run.info.get("suite", ""), "test_window": run.info.get("test_window"),
        "initial_cash": run.info.get("initial_cash"), "decisions": len(run.decisions),
        "frameworks": [{"index": i, "name": f, "llm": f in made_llm_calls} for i, f in enumerate(frameworks)],
        "tickers": [{"index": i, "name": t, "dates": bars[t].dates,
                     "first_decision": min(d for d, k in zip(columns["date"], columns["tk"]) if k == i)}
                    for i, t in enumerate(tickers)],
        "seeds": sorted({int(s) for s in run.equity["seed"]}),
        "episodes": [{"fw": fw_index[f], "tk": tk_index[t], "seed": int(s)} for f, t, s in episodes],
    }
    index = {
        "decisions": columns,
        "bars": {tk_index[t]: {"close": b.close, "label": b.label} for t, b in bars.items()},
        "episodes": [_series(episode, bars[t]) for (_, t, _), episode in episodes.items()],
    }
    return ViewerData(meta=meta, index=index, decisions=records)


def _link_days(records: list[DecisionRecord]) -> None:
    """Give each decision record the dates of its episode's previous and next decisions (None at the ends)."""
    by_episode: dict[tuple, list[dict[str, Any]]] = {}
    for decision in records:
        by_episode.setdefault((decision.framework, decision.ticker, decision.seed), []).append(decision.record)
    for mine in by_episode.values():
        mine.sort(key=lambda r: r["summary"]["date"])
        for before, record, after in zip([None, *mine[:-1]], mine, [*mine[1:], None]):
            record["prev"] = before["summary"]["date"] if before else None
            record["next"] = after["summary"]["date"] if after else None


def _series(episode: _Episode, bars: TickerBars) -> dict[str, Any]:
    """An episode's chart series: bar positions in its ticker's dates, equity, shares held, fills."""
    return {"bar": [bars.position[d] for d in episode.dates],
            "equity": [round(episode.equity[d], 2) for d in episode.dates],
            "shares": [episode.shares[d] for d in episode.dates],
            "fills": [[bars.position[f.date], f.side, float(f.shares), round(float(f.price), 4)]
                      for f in episode.fills.values()]}
