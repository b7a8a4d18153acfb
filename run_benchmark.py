"""Run a TradeDuel suite: frameworks × tickers × seeds on one market under one set of rules.

    python run_benchmark.py                       # the quick suite (embedded data, minutes)
    python run_benchmark.py +suite=smoke hydra.run.dir=out/smoke
    python run_benchmark.py +suite=paper          # the AlphaQuanter protocol
    python run_benchmark.py -m +suite=smoke execution.fee_bps=0,10   # a sweep

Outputs go to the Hydra run directory (docs/run_directory.md). Running the same command into
the same run directory again resumes from its decision journal. Bad data or configuration
stops the run with one `error:` line and exit code 2.
"""

from __future__ import annotations

import json
import sys
import time
from functools import partial
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from frameworks.registry import build_frameworks, instantiate_or_explain, register_plugins
from market.errors import ConfigError, DataError, one_line
from market.execution import ExecutionConfig
from market.journal import Journal
from market.outputs import write_episodes
from market.runner import EpisodeRunner, RunSpec
from market.splits import Splits
from metrics.episodes import episode_metrics
from metrics.report import write_report
from tools import ToolSet

DEFAULT_SUITE = "quick"


def run(cfg: DictConfig, run_dir: Path) -> Path:
    """Run the configured suite into `run_dir`; returns the path of metrics.csv."""
    splits = Splits.model_validate(OmegaConf.to_container(cfg.split, resolve=True))
    tickers = list(cfg.tickers)
    data = instantiate_or_explain(cfg.data, "data")
    for ticker in tickers:
        splits.check(data.frame(ticker).index)
    frameworks = build_frameworks(cfg.frameworks, {"data": cfg.data, "tools": cfg.tools}, cfg.execution)
    spec = RunSpec(tickers=tickers, seeds=list(cfg.seeds), start=splits.test.start, end=splits.test.end,
                   execution=ExecutionConfig(**OmegaConf.to_container(cfg.execution, resolve=True)),
                   batch_size=int(cfg.batch_size))
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    started = time.perf_counter()
    with Journal(run_dir / "journal.sqlite") as journal:
        tool_names = list(cfg.tools) if cfg.tools is not None else None
        runner = EpisodeRunner(data, spec, journal, toolset_factory=partial(ToolSet, names=tool_names),
                               progress=bool(cfg.progress))
        result = runner.run(frameworks)
    equity, trades = write_episodes(run_dir, result, data, tickers, spec.start, spec.end)
    table = episode_metrics(equity, trades, data.periods_per_year)
    table.to_csv(run_dir / "metrics.csv", index=False, float_format="%.10g")
    facts = {
        "suite": cfg.name, "tickers": tickers, "seeds": spec.seeds,
        "frameworks": {f.name: f.config_hash for f in frameworks},
        "configurations_tried": len(frameworks),
        "test_window": [str(spec.start.date()), str(spec.end.date())],
        "periods_per_year": data.periods_per_year, "initial_cash": spec.execution.initial_cash,
        "decisions_made": result.made, "decisions_reused": result.reused,
        "decisions_failed": result.failed, "wall_s": round(time.perf_counter() - started, 3),
    }
    (run_dir / "run.json").write_text(json.dumps(facts, indent=2) + "\n")
    if cfg.report:
        write_report(run_dir)
    else:
        averages = table[table["ticker"] == "AVG"].drop(columns="ticker")
        (run_dir / "summary.md").write_text(
            f"# {cfg.name}: {', '.join(tickers)}, {facts['test_window'][0]} .. {facts['test_window'][1]}\n\n"
            f"Averages over tickers (fractions; conventions in metrics/performance.py):\n\n"
            f"{averages.to_markdown(index=False, floatfmt='.4f')}\n\n"
            f"Per ticker:\n\n{table.to_markdown(index=False, floatfmt='.4f')}\n")
    print(f"{result.made} decisions made, {result.reused} reused from the journal, "
          f"{result.failed} failed; wrote {run_dir / 'metrics.csv'}")
    return run_dir / "metrics.csv"


@hydra.main(version_base="1.3", config_path="configs", config_name="config")
def main(cfg: DictConfig) -> None:
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        run(cfg, run_dir)
    except (DataError, ConfigError, ValueError) as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        sys.exit(2)


def with_default_suite(argv: list[str]) -> list[str]:
    """`argv` with `+suite=quick` appended unless a suite is named."""
    named = any(arg.lstrip("+~").startswith("suite=") for arg in argv[1:])
    return argv if named else [*argv, f"+suite={DEFAULT_SUITE}"]


if __name__ == "__main__":
    sys.argv = with_default_suite(sys.argv)
    register_plugins()
    main()
