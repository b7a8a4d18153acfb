"""Trading frameworks: the plugin API, the registry, rule baselines and agent adapters."""

from frameworks.base import TradingFramework

__all__ = ["TradingFramework"]
