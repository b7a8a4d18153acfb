"""The FinAgent suites compose: the full agent and the paper's three ablations, each a framework config."""

from __future__ import annotations

import pytest
from cli_helpers import ROOT
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from frameworks.finagent import FinAgent
from llm_backends.build import engine_config

ABLATIONS = {  # config -> (low-level reflection, high-level reflection, tools)
    "finagent_intelligence": (False, False, False), "finagent_low_level": (True, False, False),
    "finagent_high_level": (True, True, False), "finagent": (True, True, True),
}


@pytest.mark.slow
def test_the_ablation_suite_holds_the_four_configs_on_the_synthetic_market():
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+suite=finagent_ablations"])
    assert set(ABLATIONS) <= set(cfg.frameworks) and "stoch_bbands" in cfg.frameworks
    assert cfg.data._target_ == "market.synthetic.generate_market" and list(cfg.tickers) == ["ALFA", "BRVO"]
    for name, modules in ABLATIONS.items():
        framework = cfg.frameworks[name]
        assert (framework.low_level_reflection, framework.high_level_reflection, framework.tools) == modules
        assert framework.llm == engine_config("smollm2")   # the llm group's option, composed
    OmegaConf.update(cfg, "frameworks.finagent_intelligence.llm", engine_config("tiny"), merge=False)  # llm@...=tiny
    agent = instantiate(cfg.frameworks.finagent_intelligence)
    assert isinstance(agent, FinAgent) and agent.stateful and agent.needs_portfolio and not agent.stochastic
    assert agent.run_facts()["modules"] == {"low_level_reflection": False, "high_level_reflection": False, "tools": False}
