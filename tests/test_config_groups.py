"""Protocol, reward, LLM engine and backbone are Hydra config groups: composed into the run config
(what `--cfg job` prints), overridden like any group, and a wrong option name is one line."""

from __future__ import annotations

import subprocess

import pytest
from cli_helpers import ROOT, benchmark_command, support_env
from in_process import composed

from configs import compose_option, group_options
from configs.overrides import check_group_overrides
from core.errors import ConfigError
from llm_backends.build import engine_config
from run_benchmark import DEFAULT_SUITE


def test_the_default_suite_composes_the_protocol_reward_and_engine_configs():
    frameworks = composed(f"+suite={DEFAULT_SUITE}").frameworks
    agent, debate = frameworks.single_agent, frameworks.multi_agent
    assert agent.protocol == compose_option("single_agent/protocol", "compact")
    assert agent.reward == compose_option("single_agent/reward", "compact")
    assert agent.llm == engine_config("smollm2") == debate.quick.llm == debate.deep.llm


def test_group_options_and_their_fields_are_overridden_like_any_group():
    agent = composed("+suite=smoke", "+framework@frameworks.agent=single_agent", "llm@frameworks.agent.llm=tiny",
                     "frameworks.agent.llm.seed=3", "single_agent/protocol@frameworks.agent.protocol=paper",
                     "single_agent/reward@frameworks.agent.reward=paper_wo_tool").frameworks.agent
    assert agent.llm == engine_config("tiny", ["seed=3"])
    assert (agent.protocol.name, agent.reward.name) == ("paper", "paper_wo_tool")
    assert agent.reward.lookahead_penalty == 0.0   # paper_wo_tool's own value over its base, paper
    assert agent.reward.alpha == compose_option("single_agent/reward", "paper")["alpha"]


def test_backbones_select_options_of_their_group_side_by_side_in_order():
    cfg = composed("+suite=paper", "backbones=[tiny,smollm2]")
    assert list(cfg.get("backbones")) == ["tiny", "smollm2"]
    assert cfg.get("backbones").tiny.sc_samples == compose_option("backbones", "tiny")["tiny"]["sc_samples"]


@pytest.mark.parametrize("override", [
    "single_agent/protocol@frameworks.single_agent.protocol=nope",
    "single_agent/reward@frameworks.single_agent.reward=nope",
    "llm@frameworks.single_agent.llm=nope",
    "backbones=[tiny,nope]",
])
def test_an_unknown_option_is_one_line_naming_the_group_and_its_options(override):
    group = override.split("@")[0].split("=")[0]
    with pytest.raises(ConfigError) as refused:
        check_group_overrides([override])
    assert str(refused.value) == (f"{group}: no option 'nope' (configs/{group}/nope.yaml); "
                                  f"known: {', '.join(group_options(group))}")


@pytest.mark.parametrize(("override", "replacement"), [
    ("frameworks.single_agent.protocol=paper", "single_agent/protocol@frameworks.single_agent.protocol=paper"),
    ("frameworks.single_agent.llm=tiny", "llm@frameworks.single_agent.llm=tiny"),
    ("frameworks.debate.quick.llm=tiny", "llm@frameworks.debate.quick.llm=tiny"),
    ("train.reward=paper_wo_tool", "single_agent/reward@train.reward=paper_wo_tool"),
])
def test_an_option_name_set_as_a_value_is_refused_with_the_override_that_selects_it(override, replacement):
    with pytest.raises(ConfigError, match=f"select an option with {replacement.replace('.', '[.]')} "):
        check_group_overrides([override])


def test_other_overrides_pass():
    check_group_overrides(["+suite=smoke", "backbones=[]", "frameworks.single_agent.llm.kv_cache_mb=0",
                           "frameworks.single_agent.temperature=0.7", "~rows.per_backbone.SC", "hydra.run.dir=out"])


@pytest.mark.slow
def test_the_command_line_refuses_an_unknown_backbone_in_one_line_with_exit_code_2():
    done = subprocess.run(benchmark_command("+suite=smoke", "backbones=[nope]"), cwd=ROOT, env=support_env(),
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: backbones: no option 'nope' (configs/backbones/nope.yaml); "
                                                f"known: {', '.join(group_options('backbones'))}"]
