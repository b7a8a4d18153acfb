"""Risk overlays around any framework on the trading task (docs/overlays.md).

The `overlay` config group (`overlay=walkthrough`; every part off by default) puts each episode's
simulator behind an `OverlayBook`, which changes what is executed — never what is journaled: the
journal keeps the framework's own decisions, the run directory's overlays.parquet the original and
the executed decision of every day with the parts that fired. Parts: `sizing`, `gates` (daily-loss
stop, cool-down), `cold_start`, `drift`; `book` applies them in order; `config` holds the knobs.
"""

from harness.overlay.book import OVERLAY_PARTS, OverlayBook
from harness.overlay.cold_start import baseline_decisions
from harness.overlay.config import OverlayConfig
from harness.overlay.drift import drift_warning

__all__ = ["OVERLAY_PARTS", "OverlayBook", "OverlayConfig", "baseline_decisions", "drift_warning"]
