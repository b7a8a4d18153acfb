"""The unseen-regime claim: does routing to the conservative policy cut the maximum drawdown against the
unrouted ensemble in a test window with a regime that training never saw?

    python -m comparators.fineft.claim --runs DIR --seeds 0 1 2 --out FOLDER [OVERRIDES]

For every seed's checkpoint (`DIR/seed-<seed>/checkpoint`) and for the test window of the suite's
split, with the crash `INJECTION` forced on the synthetic market (`market.synthetic.intraday`'s
`inject`; the bars before it are the training data unchanged) and without it, each routing —
`vae` (FineFT), `dynamics` (no conservative policy), `ensemble` (unrouted) — plays the test bars
through the futures task (`evaluation.play`). Per run: MDD, total return, liquidations, the share
of steps on the conservative policy (overall and inside the injected window), SR_ann at the data's
periods per year (24/7 minutes: 525,600) and FineFT's ASR (`metrics.paper_conventions`).
The test: per seed d = MDD(ensemble) − MDD(vae), over the whole test window and over the injection's
window alone; the mean of d, a paired t-test and a Wilcoxon
signed-rank test (scipy) over the seeds, written to FOLDER/claim.csv and FOLDER/claim_test.csv.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.utils import instantiate
from omegaconf import OmegaConf
from scipy import stats

from comparators.fineft.checkpoint_io import FineFTCheckpoint
from comparators.fineft.evaluation import play, summary
from comparators.fineft.state import LOOKBACK, state_table
from comparators.fineft.steps import step_bars
from comparators.fineft.train import CHECKPOINT_DIR, compose_suite, window_end
from core.errors import MissingFileError, exit_on_user_error
from harness.tasks.futures import FuturesConfig, funding_rates
from market.splits import Window
from metrics.paper_conventions import fineft_asr
from metrics.performance import max_drawdown, sharpe_ratio_annual, simple_returns

INJECTION = {"start": "2024-02-24", "bars": 2880, "drift": -2e-4, "vol_scale": 4.0}
"""Two days of crash inside the intraday test weeks: drift −2e-4 per minute (≈ −44 % over the window
before noise) at 4× the base volatility, both beyond every training regime (bear: −2.5e-5, 1.6×)."""
ROUTINGS = ("vae", "dynamics", "ensemble")


def injection_override() -> str:
    """`INJECTION` as a Hydra override of the data config."""
    return "data.inject={" + ", ".join(f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}"
                                       for k, v in INJECTION.items()).replace("'", '"') + "}"


def measure(checkpoint: FineFTCheckpoint, suite: str, overrides: list[str], injected: bool) -> list[dict]:
    """One row per routing on the test window of the (injected) market."""
    cfg = compose_suite(suite, overrides + ([injection_override()] if injected else []))
    task = FuturesConfig(**{k: v for k, v in OmegaConf.to_container(cfg.task, resolve=True).items() if k != "name"})
    market = instantiate(cfg.data)
    ticker = str(cfg.tickers[0])
    minute_bars = market.frame(ticker)
    rates = funding_rates(market, ticker)
    window = Window.model_validate(dict(cfg.split.test))
    start, end = window.start, window_end(window, market.calendar.daily)
    steps = step_bars(minute_bars, checkpoint.config["step_minutes"])
    table = state_table(steps, checkpoint.config["funding_hours"])
    inside = (steps.index >= start) & (steps.index <= end)
    inside[:LOOKBACK] = False
    test_steps = steps.index[inside]
    x = checkpoint.standardiser.transform(table[inside])
    model = checkpoint.model
    tables = model.tables(x)
    bars = minute_bars.loc[:end]
    window_start = pd.Timestamp(INJECTION["start"])
    window_stop = window_start + pd.Timedelta(minutes=INJECTION["bars"])
    crash = (test_steps >= window_start) & (test_steps < window_stop)
    rows = []
    for routing in ROUTINGS:
        path, dynamic = model.path(tables, routing)
        result = play(bars, rates, task, test_steps, model.grid.numpy()[path])
        equity = result.equity.reset_index()
        during = result.equity["equity"].loc[window_start:window_stop]
        rows.append({"routing": routing, "injected": injected, **summary(result),
                     "max_drawdown_in_window": max_drawdown(simple_returns(during)),
                     "SR_ann": sharpe_ratio_annual(simple_returns(equity["equity"]), market.calendar.periods_per_year),
                     "ASR_fineft": fineft_asr(equity), "conservative_share": float((dynamic < 0).mean()),
                     "conservative_share_in_window": float((dynamic[crash] < 0).mean()) if crash.any() else np.nan,
                     "mean_abs_leverage": float(np.abs(model.grid.numpy()[path]).mean())})
    return rows


def paired_test(frame: pd.DataFrame) -> pd.DataFrame:
    """Per `injected` and measure (the test window's MDD, and the MDD over the injection's window):
    d = MDD(ensemble) − MDD(vae) (and − MDD(dynamics)) over the seeds, its mean, the paired t-test's and
    the Wilcoxon test's two-sided p-values; a routing the frame lacks is left out."""
    out = []
    for (injected, measure_name), group in frame.melt(
            id_vars=["seed", "routing", "injected"], value_vars=["max_drawdown", "max_drawdown_in_window"],
            var_name="measure").groupby(["injected", "measure"]):
        mdd = group.pivot(index="seed", columns="routing", values="value")
        for other in [routing for routing in ("vae", "dynamics") if routing in mdd]:
            d = (mdd["ensemble"] - mdd[other]).to_numpy()
            t = stats.ttest_rel(mdd["ensemble"], mdd[other]) if len(d) > 1 else None
            w = stats.wilcoxon(d) if len(d) > 1 and np.any(d != 0) else None
            out.append({"injected": injected, "measure": measure_name,
                        "comparison": f"ensemble - {other}", "seeds": len(d),
                        "mean_difference": float(d.mean()), "positive_seeds": int((d > 0).sum()),
                        "t_p": float(t.pvalue) if t is not None else np.nan,
                        "wilcoxon_p": float(w.pvalue) if w is not None else np.nan})
    return pd.DataFrame(out)


def write_claim(out: Path, stem: str, frame: pd.DataFrame, test: pd.DataFrame) -> None:
    """The measures and their paired test as OUT/<stem>.csv and OUT/<stem>_test.csv, both printed too."""
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / f"{stem}.csv", index=False)
    test.to_csv(out / f"{stem}_test.csv", index=False)
    print(frame.to_string(index=False))
    print(test.to_string(index=False))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m comparators.fineft.claim", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True, help="folder holding seed-<seed>/checkpoint")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--suite", default="futures_intraday")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threshold", type=float, default=None,
                        help="route with this τ and --conservative instead of the tuned ones (a sensitivity check)")
    parser.add_argument("--conservative", choices=("flat", "hold"), default="flat")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        rows = []
        for seed in args.seeds:
            folder = args.runs / f"seed-{seed}" / CHECKPOINT_DIR
            if not folder.is_dir():
                raise MissingFileError(f"{folder}: no checkpoint (python -m comparators.fineft.train --seed {seed} "
                                       f"--out {args.runs / f'seed-{seed}'})")
            checkpoint = FineFTCheckpoint.load(folder)
            if args.threshold is not None:
                checkpoint.model.threshold.fill_(args.threshold)
                checkpoint.model.conservative = args.conservative
            for injected in (False, True):
                rows.extend({"seed": seed, **row} for row in measure(checkpoint, args.suite, list(args.overrides), injected))
        frame = pd.DataFrame(rows)
        write_claim(args.out, "claim", frame, paired_test(frame))


if __name__ == "__main__":
    main()
