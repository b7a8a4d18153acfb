"""The `train` config group: every recipe validates, and the paper's sets its optimisation explicitly."""

from __future__ import annotations

import pytest

from configs import compose_option
from core.config_keys import typed_config
from core.errors import ConfigError
from training.config import TrainConfig


def recipe(name: str) -> TrainConfig:
    return typed_config(TrainConfig, compose_option("train", name), "train")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paper", "cpu_tiny", "cpu_smollm2"])
def test_every_recipe_validates(name):
    assert recipe(name).name == name and recipe(name).mode == "sync"
    assert recipe(name).protocol.name == recipe(name).reward.name == ("paper" if name == "paper" else "compact")


def test_the_paper_recipe_is_the_papers_optimisation():
    opt = recipe("paper").optimisation
    assert (opt.learning_rate, opt.beta, opt.epsilon, opt.num_generations, opt.prompts_per_step) == (1e-6, 0.05, 0.1, 16, 32)
    assert opt.completions_per_step == 512


def test_a_misspelt_key_is_refused_in_the_recipe_and_in_its_composed_protocol():
    values = compose_option("train", "cpu_tiny")
    values["optimisation"]["learning_rat"] = 1.0
    with pytest.raises(ConfigError, match="learning_rat"):
        typed_config(TrainConfig, values, "train")
    values = compose_option("train", "cpu_tiny")
    values["protocol"]["max_tool_call"] = 1
    with pytest.raises(ConfigError, match=r"train\.protocol: unknown key 'max_tool_call' \(did you mean 'max_tool_calls'\?\)"):
        typed_config(TrainConfig, values, "train")


def test_async_mode_needs_its_settings_and_refuses_unknown_keys():
    values = compose_option("train", "cpu_tiny")
    values["mode"] = "async"
    with pytest.raises(ConfigError, match="asynchronous"):
        typed_config(TrainConfig, values, "train")
    values["asynchronous"] = compose_option("asynchronous", "default")
    assert typed_config(TrainConfig, values, "train").asynchronous.max_staleness >= 0
    values["asynchronous"]["max_stalenes"] = 2
    with pytest.raises(ConfigError, match="max_stalenes"):
        typed_config(TrainConfig, values, "train")


def test_grammar_log_probabilities_need_a_grammar_and_the_sync_trainer():
    values = compose_option("train", "cpu_tiny")
    values["policy_logprobs"] = "grammar"
    assert typed_config(TrainConfig, values, "train").policy_logprobs == "grammar"
    with pytest.raises(ConfigError, match="needs constrained: true and mode: sync"):
        typed_config(TrainConfig, {**values, "constrained": False}, "train")
    values["mode"], values["asynchronous"] = "async", compose_option("asynchronous", "default")
    with pytest.raises(ConfigError, match="needs constrained: true and mode: sync"):
        typed_config(TrainConfig, values, "train")
