"""The report's overlay section: how often each part of the risk overlay fired, per framework × ticker.

Reads overlays.parquet (one row per decision: original and executed decision, the parts that
fired; `harness.overlay.book`) and run.json's `overlay` config; '' for a run without an overlay.
Counts are summed over seeds: `decisions`, `changed` (executed ≠ the framework's decision), and
per part the decision days it fired on (a gate: days it forced HOLD; the cold start: days it
blended; sizing: decisions it resized; drift: days the HOLD share of the full window was above
the threshold). The drift monitor's episodes are also named in a warning line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.overlay import OVERLAY_PARTS, OverlayConfig, drift_warning
from harness.run_directory import Run, load_overlays
from metrics.tables import to_markdown, write_table


def overlay_table(overlays: pd.DataFrame, enabled: list[str]) -> pd.DataFrame:
    """Indexed by (framework, ticker) in run order: decisions, changed and one count per enabled part (summed over seeds)."""
    grouped = overlays.groupby(["framework", "ticker"], sort=False)
    table = grouped.size().rename("decisions").to_frame()
    table["changed"] = grouped["changed"].sum()
    for part in enabled:
        table[part] = grouped[part].sum()
    return table.astype(int)


def _settings(config: OverlayConfig) -> str:
    """The enabled parts with their thresholds, for the caption."""
    described = {
        "loss_stop": f"loss_stop: HOLD after a day losing more than {config.loss_stop.max_loss:.1%} of equity",
        "cool_down": f"cool_down: {config.cool_down.days} HOLD days after {config.cool_down.wrong_streak} wrong decisions "
                     "in a row (judged on the next bar's return)",
        "cold_start": f"cold_start: the first {config.cold_start.days} days blend {config.cold_start.framework_weight:.0%} "
                      f"framework / {1 - config.cold_start.framework_weight:.0%} "
                      f"{(config.cold_start.baseline or {}).get('_target_', 'baseline').rsplit('.', 1)[-1]}",
        "sizing": f"sizing: invest at most {config.sizing.invest_fraction:.0%} of equity",
        "drift": f"drift: HOLD above {config.drift.max_hold_share:.0%} of the last {config.drift.window} decisions",
    }
    return "; ".join(described[part] for part in OVERLAY_PARTS if getattr(config, part).enabled)


def overlay_section(run: Run, tables_dir: Path) -> str:
    """The summary's Markdown section (warnings, caption, table), the table also written to
    `tables_dir/overlays.{md,tex}`; '' for a run without an overlay."""
    overlays = load_overlays(run.path)
    if overlays is None:
        return ""
    config = OverlayConfig.model_validate(run.info["overlay"])
    enabled = [part for part in OVERLAY_PARTS if getattr(config, part).enabled]
    table = overlay_table(overlays, enabled)
    caption = (f"Risk overlay (docs/overlays.md): decision days each part fired on per framework x ticker, summed over "
               f"seeds; changed = executed decision differs from the framework's. {_settings(config)}")
    write_table(table, "overlays", tables_dir, caption)
    records = overlays.to_dict("records")
    warnings = [line for name in dict.fromkeys(overlays["framework"]) if (line := drift_warning(name, records, config.drift))]
    warned = "".join(f"**Warning.** {line}\n\n" for line in warnings)
    return f"## overlays\n\n{warned}{caption}.\n\n{to_markdown(table)}\n"
