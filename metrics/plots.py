"""The report's figures (matplotlib PNG): equity curves, drawdowns, ARR against cost.

Figures are built with matplotlib's object API (``matplotlib.figure.Figure``, which renders
with the Agg canvas), so no GUI backend and no global pyplot state is involved.

Every framework keeps one colour across figures; the benchmark is a black dashed line. With
several seeds a framework is drawn as its seed-mean curve with a band from the lowest to the
highest seed.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import matplotlib.dates as mdates
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from harness.run_directory import Run
from harness.schema import EPISODE_KEYS
from metrics.run_tables import efficiency_numbers

DPI = 130


def framework_styles(frameworks: list[str], benchmark: str) -> dict[str, dict]:
    """Line style per framework: tab10 colours in order, the benchmark black and dashed."""
    palette = matplotlib.colormaps["tab10"].colors
    styles = {}
    others = [f for f in frameworks if f != benchmark]
    for i, framework in enumerate(others):
        styles[framework] = {"color": palette[i % len(palette)], "linestyle": "-", "linewidth": 1.6}
    if benchmark in frameworks:
        styles[benchmark] = {"color": "black", "linestyle": "--", "linewidth": 1.8}
    return styles


def normalised_equity(run: Run) -> pd.DataFrame:
    """V_t / V_0 of every episode: rows dates, columns (framework, ticker, seed)."""
    equity = run.equity.pivot(index="date", columns=list(EPISODE_KEYS), values="equity")
    return equity / equity.bfill().iloc[0]


def drawdown_frame(curves: pd.DataFrame) -> pd.DataFrame:
    """Drawdown 1 - V_t / max_{s<=t} V_s of each column, as a positive fraction."""
    return 1.0 - curves / curves.cummax()


def grid_columns(n_panels: int) -> int:
    """Panels per row: all of them up to 3, 2 x 2 for 4, else 3."""
    return 2 if n_panels == 4 else min(3, n_panels)


def _grid(n_panels: int) -> tuple[Figure, list[Axes]]:
    columns = grid_columns(n_panels)
    rows = math.ceil(n_panels / columns)
    figure = Figure(figsize=(5.2 * columns, 3.4 * rows + 0.8))
    axes = figure.subplots(rows, columns, squeeze=False)
    panels = list(axes.ravel())
    for axis in panels[n_panels:]:
        axis.set_visible(False)
    return figure, panels


def _panel_plot(run: Run, values: pd.DataFrame, benchmark: str, ylabel: str, title: str, path: Path) -> Path:
    styles = framework_styles(run.frameworks, benchmark)
    figure, axes = _grid(len(run.tickers))
    for axis, ticker in zip(axes, run.tickers):
        for framework in run.frameworks:
            seeds = values[framework][ticker].dropna(how="all")
            axis.plot(seeds.index, seeds.mean(axis=1), label=framework, **styles[framework])
            if seeds.shape[1] > 1:
                axis.fill_between(seeds.index, seeds.min(axis=1), seeds.max(axis=1),
                                  color=styles[framework]["color"], alpha=0.15, linewidth=0)
        axis.set_title(ticker)
        axis.grid(alpha=0.3)
        axis.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=2, maxticks=6))
        axis.xaxis.set_major_formatter(mdates.ConciseDateFormatter(axis.xaxis.get_major_locator()))
    columns = grid_columns(len(run.tickers))
    for axis in axes[::columns]:
        axis.set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    per_row = min(len(labels), 3 * columns)
    figure.legend(handles, labels, loc="lower center", ncol=per_row, frameon=False)
    figure.suptitle(title)
    legend_rows = math.ceil(len(labels) / per_row)
    figure.tight_layout(rect=(0, 0.05 + 0.045 * legend_rows, 1, 1))
    figure.savefig(path, dpi=DPI)
    return path


def plot_equity(run: Run, path: Path, benchmark: str = "buy_and_hold") -> Path:
    """Equity V_t / V_0 per ticker (one panel each), every framework on it."""
    return _panel_plot(run, normalised_equity(run), benchmark, "equity / initial cash",
                       "Equity curves (seed mean; band = seed range)", path)


def plot_drawdowns(run: Run, path: Path, benchmark: str = "buy_and_hold") -> Path:
    """Drawdown in % below the running peak per ticker, every framework on it."""
    drawdowns = -100.0 * drawdown_frame(normalised_equity(run))
    return _panel_plot(run, drawdowns, benchmark, "drawdown %", "Drawdowns from the running peak", path)


def pareto_front(cost: pd.Series, value: pd.Series) -> list[str]:
    """Names on the Pareto front, cheapest first: no other point is as cheap and better, or cheaper and as good."""
    front = []
    for name in cost.sort_values(kind="stable").index:
        dominated = ((cost <= cost[name]) & (value > value[name])) | ((cost < cost[name]) & (value >= value[name]))
        if not dominated.any():
            front.append(name)
    return front


def plot_pareto(run: Run, path: Path, benchmark: str = "buy_and_hold") -> Path:
    """Average ARR against cost per decision (tokens if any framework used an LLM, else wall ms), front joined."""
    numbers = efficiency_numbers(run)
    use_tokens = bool((numbers["tokens"] > 0).any())
    cost = numbers["tokens"] if use_tokens else 1000.0 * numbers["wall_s"]
    value = 100.0 * numbers["ARR"]
    styles = framework_styles(run.frameworks, benchmark)
    figure = Figure(figsize=(6.8, 4.6))
    axis = figure.subplots()
    front = pareto_front(cost, value)
    axis.step(cost[front], value[front], where="post", color="grey", alpha=0.7, linewidth=1.2, marker="o",
              markersize=15, markerfacecolor="none", label="Pareto front")
    for framework in run.frameworks:
        axis.scatter(cost[framework], value[framework], color=styles[framework]["color"], s=60, zorder=3,
                     marker="D" if framework == benchmark else "o")
        axis.annotate(framework, (cost[framework], value[framework]), textcoords="offset points",
                      xytext=(6, 4), fontsize=9)
    if use_tokens and (cost > 0).all() and cost.max() / cost.min() > 50:
        axis.set_xscale("log")
    axis.axhline(0.0, color="black", linewidth=0.6)
    axis.set_xlabel("tokens per decision (prompt + completion)" if use_tokens else "wall ms per decision")
    axis.set_ylabel("average ARR %")
    axis.set_title("Return against cost per decision")
    axis.grid(alpha=0.3)
    axis.margins(x=0.15, y=0.1)
    axis.legend(loc="best", frameon=False, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    return path
