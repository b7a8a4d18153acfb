"""Every portfolio (pf_*) and futures (fut_*) framework config instantiates and declares its task."""

from __future__ import annotations

import pytest
from cli_helpers import ROOT
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from frameworks.base import TradingFramework

CONFIGS = sorted(p.stem for p in (ROOT / "configs" / "framework").glob("*.yaml") if p.stem.startswith(("pf_", "fut_")))


def test_there_are_four_rules_per_task():
    assert sum(c.startswith("pf_") for c in CONFIGS) == 4 and sum(c.startswith("fut_") for c in CONFIGS) == 4


@pytest.mark.parametrize("name", CONFIGS)
def test_a_task_rule_instantiates_and_takes_its_task_only(name):
    with initialize_config_dir(config_dir=str(ROOT / "configs" / "framework"), version_base="1.3"):
        framework = instantiate(compose(config_name=name))
    assert isinstance(framework, TradingFramework)
    assert framework.tasks == (("portfolio",) if name.startswith("pf_") else ("futures",))
