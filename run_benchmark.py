"""Run a TradeDuel suite: frameworks × tickers × seeds on one market under one set of rules.

    python run_benchmark.py                       # the quick suite, the duel: rule baselines, the single
                                                  # agent and the debate (SmolLM2) on 2 embedded stocks x 6 days
    python run_benchmark.py +suite=rules          # the rule baselines: 4 embedded stocks, half a year
    python run_benchmark.py +suite=smoke hydra.run.dir=out/smoke
    python run_benchmark.py +suite=paper          # the AlphaQuanter protocol
    python run_benchmark.py -m +suite=smoke execution.fee_bps=0,10   # a sweep
    python run_benchmark.py +suite=smoke +probe=memorisation   # and the anonymised replay (docs/memorisation.md)
    python run_benchmark.py +suite=smoke overlay=walkthrough   # behind the risk overlays (docs/overlays.md)

Outputs go to the Hydra run directory, `outputs/<suite>/<date>_<time>/` by default
(docs/run_directory.md). Running the same command into the same run directory again resumes
from its decision journal; decisions whose inputs changed (config, framework fingerprint,
data) are made afresh, with one warning line. Bad data or configuration, including a config
key that nothing takes, stops the run with one `error:` line and exit code 2 (`core.errors`);
anything else is a bug and stops it with its traceback and exit code 1.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import hydra
import pandas as pd
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from configs import CONFIG_DIR, SEARCH_PATH
from configs.overrides import check_group_overrides
from core.config_keys import check_primary_keys, typed_config
from core.errors import ConfigError, exit_on_user_error
from frameworks.compute_match import deferred_builder
from frameworks.registry import build_frameworks, instantiate_or_explain, register_plugins
from frameworks.replay import MemorisationProbe, replay_entries
from frameworks.suite_rows import expand_rows
from harness.execution import ExecutionConfig
from harness.journal import Journal, journal_lock
from harness.overlay import OverlayConfig
from harness.resources import run_resources
from harness.run_directory import load_run, write_episodes
from harness.runner import (
    DeferredEntry,
    EpisodeRunner,
    FrameworkEntry,
    RunResult,
    RunSpec,
    ToolsetFactory,
    warn_on_stderr,
)
from harness.schema import REPLAY_DIRECTORY
from harness.tasks.registry import build_task, check_frameworks_take
from market.anonymise import AnonymisedMarket, anonymise
from market.data import MarketData
from market.splits import Splits
from metrics.agent_rows import agent_section, agent_warnings
from metrics.episodes import AVERAGE_TICKER, episode_metrics
from metrics.memorisation import memorisation_report
from metrics.overlay_rows import overlay_section
from metrics.paper_report import write_paper_report
from metrics.report import write_report
from metrics.role_rows import role_section
from metrics.viewer import write_viewer
from tools import ToolSet

DEFAULT_SUITE = "quick"

def listed(cfg: DictConfig, name: str, kind: type) -> list:
    """`cfg[name]` as a list of `kind` (a single value is a list of one: `tickers=NVDA`); the
    config is updated so that interpolations such as the data config's `${tickers}` see the list."""
    value = cfg[name]
    items = list(value) if isinstance(value, ListConfig) else [value]
    for item in items:
        if not isinstance(item, kind) or isinstance(item, bool):
            raise ConfigError(f"{name}: {item!r} is not {'a ticker name' if kind is str else 'an integer'}")
    cfg[name] = items
    return items


def check_top_level_keys(cfg: DictConfig) -> None:
    """Refuse a top-level key that configs/config.yaml does not declare (`+seed=1` for `seeds`)."""
    check_primary_keys(cfg, CONFIG_DIR / "config.yaml")


def require_values(cfg: DictConfig) -> None:
    """Raise one line naming the first mandatory value (`???`) left unset, e.g. `data.path`."""
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        raise ConfigError(f"{missing[0]} is not set: add {missing[0]}=VALUE to the command line")


def plain(node: DictConfig) -> dict:
    """A config node as plain, resolved Python containers."""
    return OmegaConf.to_container(node, resolve=True)


def build_overlay(node: DictConfig) -> tuple[OverlayConfig, object]:
    """The overlay config (docs/overlays.md) and its cold start's baseline framework (None unless the cold start is on)."""
    config = typed_config(OverlayConfig, plain(node), "overlay")
    if not (config.cold_start.enabled and config.cold_start.baseline is not None):
        return config, None
    return config, instantiate_or_explain(node.cold_start.baseline, "overlay.cold_start.baseline")


def write_metrics_summary(path: Path, title: str, table: pd.DataFrame) -> None:
    """summary.md without the report: the metrics table, averages over tickers first, then the
    agents' section (`metrics.agent_rows`) when LLM frameworks ran, the roles' section
    (`metrics.role_rows`) when one of them has several roles, the overlay section
    (`metrics.overlay_rows`) when a risk overlay was on, and the memorisation section
    (`metrics.memorisation`) when the probe ran."""
    averages = table[table["ticker"] == AVERAGE_TICKER].drop(columns="ticker")
    run = load_run(path.parent)
    tables = path.parent / "tables"
    agents = (agent_section(run, tables) + role_section(run, tables) + overlay_section(run, tables)
              + memorisation_report(run, tables)[1])
    path.write_text(f"# {title}\n\nAverages over tickers (fractions; conventions in metrics/performance.py):\n\n"
                    f"{averages.to_markdown(index=False, floatfmt='.4f')}\n\n"
                    f"Per ticker:\n\n{table.to_markdown(index=False, floatfmt='.4f')}\n\n{agents}")


def summarise(run_dir: Path, table: pd.DataFrame, title: str, report: bool, viewer: bool) -> str:
    """Write the report (or, without `report`, the metrics summary) and, with `viewer`, the trace
    viewer; returns what the run directory now holds, for the last line. The report says itself
    which statistics a short window is too short for."""
    if report:
        print("writing the report: statistics, tables and plots ...", flush=True)
        write_report(run_dir)
        written = "metrics.csv, summary.md, tables/ and plots/ (equity.png, drawdowns.png, pareto.png)"
    else:
        write_metrics_summary(run_dir / "summary.md", title, table)
        written = "metrics.csv and summary.md"
    if viewer and load_run(run_dir).info.get("task", "trading") != "trading":
        warn_on_stderr("the trace viewer shows trading-task runs only; viewer/ not written")
    elif viewer:
        write_viewer(run_dir)
        written += ", viewer/index.html (the trace viewer)"
    return written


def warn_about_agents(run_dir: Path) -> None:
    """Print the agents' warnings (knowledge cutoff, constrained decoding) on stderr."""
    for line in agent_warnings(load_run(run_dir)):
        warn_on_stderr(line)


def run_episodes(run_dir: Path, data: MarketData, spec: RunSpec, frameworks: list[FrameworkEntry | DeferredEntry],
                 toolset_factory: ToolsetFactory, progress: bool, suite: str, row_facts: dict,
                 warn: Callable[[str], None] = warn_on_stderr,
                 overlay: tuple[OverlayConfig, object] | None = None) -> tuple[dict, pd.DataFrame, RunResult]:
    """Every episode of `frameworks` into `run_dir` (journal.sqlite, the episode tables, metrics.csv),
    behind `overlay` (its config and its cold start's baseline framework) when given; returns the
    facts for run.json, the metrics table and the result."""
    started = time.perf_counter()
    overlay_config, baseline = overlay or (OverlayConfig(), None)
    with Journal(run_dir / "journal.sqlite") as journal:
        runner = EpisodeRunner(data, spec, journal, toolset_factory=toolset_factory, progress=progress, warn=warn,
                               overlay=overlay_config, baseline=baseline)
        result = runner.run(frameworks)
    frameworks = result.entries
    equity, trades = write_episodes(run_dir, result, data, spec.tickers, spec.start, spec.end)
    table = episode_metrics(equity, trades, data.periods_per_year)
    table.to_csv(run_dir / "metrics.csv", index=False, float_format="%.10g")
    facts = {
        "suite": suite, "task": spec.task.name, "tickers": spec.tickers, "seeds": spec.seeds,
        "frameworks": {f.name: f.config_hash for f in frameworks},
        "framework_facts": {f.name: described for f in frameworks if (described := f.framework.run_facts())},
        "framework_fingerprints": {f.name: f.fingerprint for f in frameworks},
        "rows": row_facts,
        "journal_keys": result.journal_keys,
        "configurations_tried": len(frameworks),
        "test_window": [str(spec.start.date()), str(spec.end.date())],
        "traded_windows": {t: [str(first.date()), str(last.date())] for t, (first, last) in runner.traded_windows.items()},
        "data_fingerprint": runner.data_fingerprint,
        "periods_per_year": data.periods_per_year, "calendar": data.calendar.describe(),
        "initial_cash": spec.task.config.initial_cash,
        "decisions_made": result.made, "decisions_reused": result.reused,
        "decisions_failed": result.failed, "failures_reused": result.failures_reused,
        "failures_retried": result.failures_retried,
        "failures": {name: vars(counts) for name, counts in result.failures.items()},
        "overlay": overlay_config.model_dump(),
        "wall_s": round(time.perf_counter() - started, 3),
        **run_resources(),
    }
    return facts, table, result


def run_replay(cfg: DictConfig, replay_dir: Path, data: MarketData, spec: RunSpec, frameworks: list[FrameworkEntry],
               toolset_factory: ToolsetFactory, row_facts: dict, anonymised: AnonymisedMarket,
               overlay: tuple[OverlayConfig, object] | None = None) -> None:
    """The memorisation probe's replay (docs/memorisation.md): every framework again on the same episodes,
    deciding on the anonymised market and simulated on the real prices, into `replay_dir`."""
    replay_dir.mkdir(exist_ok=True)
    entries = replay_entries(cfg, frameworks, anonymised, spec.end, toolset_factory)
    print("the memorisation probe: every framework again, on the anonymised market ...", flush=True)
    facts, _, result = run_episodes(replay_dir, data, spec, entries, toolset_factory, bool(cfg.progress), cfg.name,
                                    row_facts, warn=lambda line: warn_on_stderr(f"replay: {line}"), overlay=overlay)
    facts["anonymisation"] = anonymised.describe()
    (replay_dir / "run.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(f"anonymised replay: {result.made} decisions made, {result.reused} reused, {result.failed} failed, "
          f"text records withheld: {sum(anonymised.withheld.values())}, in {replay_dir}")


def failure_details(result: RunResult) -> str:
    """What the decision line adds about journaled failures: how many were decided again or kept."""
    parts = [f"{result.failures_retried} journaled failures decided again"] if result.failures_retried else []
    if result.failures_reused:
        parts.append(f"{result.failures_reused} journaled failures kept (retry_failed=false)")
    return f" ({'; '.join(parts)})" if parts else ""


def framework_entries(cfg: DictConfig, row_facts: dict, shared: dict, execution: DictConfig,
                      overlay: DictConfig | None = None) -> list[FrameworkEntry | DeferredEntry]:
    """Every configured framework built, then the compute-matched rows (`frameworks.compute_match`)
    deferred until the rows they are matched to have decided."""
    matched = {name: facts["compute_match"] for name, facts in row_facts.items() if facts.get("compute_match")}
    now = [name for name in cfg.frameworks if name not in matched]
    entries: list[FrameworkEntry | DeferredEntry] = \
        build_frameworks(cfg.frameworks, shared, execution, overlay, now) if now or not matched else []

    def build(name: str, row: DictConfig) -> FrameworkEntry:
        with open_dict(cfg):
            cfg.frameworks[name] = row  # in the run config, so that its interpolations resolve against the root
        return build_frameworks(cfg.frameworks, shared, execution, overlay, [name])[0]

    for name, match in matched.items():
        entries.append(DeferredEntry(name, deferred_builder(name, cfg.frameworks[name], match["row"], match["unit"],
                                                            row_facts[name], build)))
    return entries


def run(cfg: DictConfig, run_dir: Path) -> Path:
    """Run the configured suite into `run_dir`; returns the path of metrics.csv."""
    check_top_level_keys(cfg)
    require_values(cfg)
    tickers, seeds = listed(cfg, "tickers", str), listed(cfg, "seeds", int)
    splits = typed_config(Splits, plain(cfg.split), "split")
    task = build_task(plain(cfg.task), plain(cfg.execution))
    spec = RunSpec(tickers=tickers, seeds=seeds, start=splits.test.start, end=splits.test.end,
                   execution=typed_config(ExecutionConfig, plain(cfg.execution), "execution"),
                   batch_size=int(cfg.batch_size), retry_failed=cfg.retry_failed,
                   decision_timeout_s=cfg.decision_timeout_s, task=task)
    data = instantiate_or_explain(cfg.data, "data")
    for ticker in tickers:
        splits.check(data.frame(ticker).index, data.origin.get(ticker, ticker))
    rows, row_facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), seeds)
    with open_dict(cfg):
        cfg.frameworks = rows
    overlay = build_overlay(cfg.overlay)
    shared = {"data": cfg.data, "tools": cfg.tools} | ({} if task.name == "trading" else {"task": cfg.task})
    frameworks = framework_entries(cfg, row_facts, shared, cfg.execution if task.name == "trading" else cfg.task,
                                   cfg.overlay if overlay[0].enabled else None)
    check_frameworks_take(task, [e for e in frameworks if not isinstance(e, DeferredEntry)])
    probe = typed_config(MemorisationProbe, plain(cfg.probe), "probe") if cfg.probe is not None else None
    anonymised = anonymise(data, probe.seed, probe.aliases, probe.uncleanable) if probe is not None else None
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    tool_names = list(cfg.tools) if cfg.tools is not None else None
    toolset_factory = partial(ToolSet, names=tool_names)
    facts, table, result = run_episodes(run_dir, data, spec, frameworks, toolset_factory, bool(cfg.progress),
                                        cfg.name, row_facts, overlay=overlay)
    frameworks = result.entries
    facts["benchmark"] = str(cfg.benchmark) if cfg.benchmark is not None else task.benchmark
    if any(facts_.get("compute_match") for facts_ in row_facts.values()):  # the matched rows' k, now known
        (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    (run_dir / "run.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(f"{result.made} decisions made, {result.reused} reused from the journal, {result.failed} failed"
          f"{failure_details(result)}")
    if anonymised is not None:
        run_replay(cfg, run_dir / REPLAY_DIRECTORY, data, spec, frameworks, toolset_factory, row_facts, anonymised,
                   overlay)
        facts["memorisation_replay"] = REPLAY_DIRECTORY  # named once the replay is complete
        (run_dir / "run.json").write_text(json.dumps(facts, indent=2) + "\n")
    title = f"{cfg.name}: {', '.join(tickers)}, {spec.start.date()} .. {spec.end.date()}"
    print(f"wrote {summarise(run_dir, table, title, bool(cfg.report), bool(cfg.viewer))} in {run_dir}")
    if cfg.paper is not None:
        print(f"wrote the paper's tables beside ours in {write_paper_report(run_dir, plain(cfg.paper))}")
    warn_about_agents(run_dir)
    return run_dir / "metrics.csv"


@hydra.main(version_base="1.3", config_path=SEARCH_PATH, config_name="config")
def main(cfg: DictConfig) -> None:
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    with exit_on_user_error(), journal_lock(run_dir / "journal.sqlite"):  # a second run into run_dir stops here
        run(cfg, run_dir)


def with_default_suite(argv: list[str]) -> list[str]:
    """`argv` with `+suite=quick` appended unless a suite is named."""
    named = any(arg.lstrip("+~").startswith("suite=") for arg in argv[1:])
    return argv if named else [*argv, f"+suite={DEFAULT_SUITE}"]


def cli() -> None:
    """The command line (`python run_benchmark.py`, `python -m run_benchmark`, or the installed `tradeduel-run`):
    the default suite unless one is named, installed plugins registered, then the Hydra app."""
    sys.argv = with_default_suite(sys.argv)
    with exit_on_user_error():
        register_plugins()
        check_group_overrides(sys.argv[1:])
    main()


if __name__ == "__main__":
    cli()
