"""TradeDuel's Hydra configs, shipped inside the installed package.

The entry points compose them through Hydra's package search path (`pkg://configs`), so that a
non-editable install finds them from any directory; code that reads one file itself (the primary
configs' declared keys) finds it under `CONFIG_DIR`.
"""

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent
"""The folder of the config groups (suite/, framework/, data/, ...) and the primary configs."""

SEARCH_PATH = "pkg://configs"
"""The configs as Hydra's `config_path`: found through the package, wherever it is installed."""
