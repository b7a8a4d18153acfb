"""docs/extending.md's worked examples, taken from the page as they are: the framework runs through the
benchmark (its config composed beside a suite, in this process) and a misspelt key of it is refused; the
tool answers through a ToolSet with the volatility computed here by hand, and clamps a future end date."""

from __future__ import annotations

import math
import re
import sys
import types

import pandas as pd
import pytest
from cli_helpers import ROOT
from in_process import composed
from omegaconf import OmegaConf, open_dict

import run_benchmark
import tools.toolset
from core.errors import ConfigError
from market.sources.embedded import load_embedded
from market.view import MarketView
from tools import ToolSet, ToolSpec

PAGE = (ROOT / "docs" / "extending.md").read_text()


def blocks(section: str, language: str) -> list[str]:
    """The `language` code blocks of the page's `## section`."""
    text = PAGE.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def module_of(code: str, name: str) -> types.ModuleType:
    """`code` executed as the module `name` (importable by that name, as a `_target_` is)."""
    module = types.ModuleType(name)
    exec(compile(code, f"docs/extending.md ({name})", "exec"), module.__dict__)
    return module


@pytest.fixture
def framework_config(monkeypatch):
    """The example framework's config, its class importable under the module its `_target_` names."""
    config = OmegaConf.create(blocks("Add a framework", "yaml")[0])
    name = str(config._target_).rsplit(".", 1)[0]
    monkeypatch.setitem(sys.modules, name, module_of(blocks("Add a framework", "python")[0], name))
    return config


@pytest.mark.slow
def test_the_framework_example_runs_beside_a_suite(tmp_path, framework_config):
    cfg = composed("+suite=smoke", "tickers=[NVDA]", "seeds=[0]")
    with open_dict(cfg):
        cfg.frameworks.volume_breakout = framework_config
        cfg.frameworks.volume_breakout.factor = 2
    run_benchmark.run(cfg, tmp_path)
    decisions = pd.read_parquet(tmp_path / "decisions.parquet")
    ours, theirs = (decisions.query(f"framework == '{name}'") for name in ("volume_breakout", "buy_and_hold"))
    assert len(ours) == len(theirs) > 0 and set(ours["action"]) <= {"BUY", "SELL", "HOLD"}
    assert "factor: 2" in (tmp_path / "config.yaml").read_text()


def test_a_misspelt_key_of_the_framework_example_is_one_line(tmp_path, framework_config):
    cfg = composed("+suite=smoke", "tickers=[NVDA]", "seeds=[0]")
    with open_dict(cfg):
        cfg.frameworks.volume_breakout = framework_config
        cfg.frameworks.volume_breakout.facter = 2
    with pytest.raises(ConfigError, match=r"^frameworks.volume_breakout: unknown key 'facter' \(did you mean 'factor'\?\)$"):
        run_benchmark.run(cfg, tmp_path)


def test_the_tool_example_answers_through_a_toolset_and_clamps_the_future(monkeypatch):
    get_volatility = module_of(blocks("Add a tool", "python")[0], "docs_volatility").get_volatility
    monkeypatch.setitem(tools.toolset.TOOLS, "get_volatility", ToolSpec.from_function(get_volatility))
    market = load_embedded(["NVDA"])
    view = MarketView(market, "2020-03-02")
    toolset = ToolSet(view, names=["get_volatility"])
    text = toolset.call("get_volatility", {"ticker": "NVDA", "lookback_days": 20})
    closes = market.frame("NVDA").loc[:"2020-03-02", "close"].iloc[-20:]
    expected = closes.pct_change().dropna().std(ddof=1) * math.sqrt(252) * 100
    shown = float(re.search(r"volatility_pct=([0-9.]+)", text).group(1))
    assert shown == pytest.approx(expected, abs=1e-3) and "days=19" in text and toolset.records[-1].error is None
    assert "get_volatility" in [schema["function"]["name"] for schema in toolset.schemas()]
    toolset.call("get_volatility", {"ticker": "NVDA", "end_date": "2020-06-01"})
    assert toolset.records[-1].lookahead
