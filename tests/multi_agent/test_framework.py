"""The framework adapter: config validation, engines, statefulness, fingerprint."""

from __future__ import annotations

import re

import pytest
from cli_helpers import ROOT
from pydantic import ValidationError

from core.errors import ConfigError
from frameworks.multi_agent import MultiAgentDebate
from multi_agent.settings import DebateSettings
from configs import compose_option
from llm_backends.build import engine_config

CONFIGS = ROOT / "configs" / "framework"

TINY = {"llm": engine_config("tiny"), "max_new_tokens": 4}


@pytest.fixture(scope="module")
def debate():
    return MultiAgentDebate(quick=TINY, deep=TINY)


def test_one_engine_serves_both_tiers_when_they_name_the_same_llm(debate):
    assert debate.deep_engine is debate.quick_engine
    other = MultiAgentDebate(quick=TINY, deep={**TINY, "llm": engine_config("tiny", ["num_hidden_layers=1"])})
    assert other.deep_engine is not other.quick_engine and other.deep_engine.model != other.quick_engine.model


def test_memory_makes_it_stateful_and_sampling_makes_it_stochastic(debate):
    assert not debate.stateful and not debate.stochastic
    assert MultiAgentDebate(quick=TINY, deep=TINY, memory=True).stateful
    assert MultiAgentDebate(quick={**TINY, "temperature": 0.7}, deep=TINY).stochastic


def test_the_fingerprint_covers_engines_prompts_and_graph(debate, monkeypatch):
    assert debate.fingerprint() == MultiAgentDebate(quick=TINY, deep=TINY).fingerprint()
    assert debate.fingerprint() != MultiAgentDebate(quick=TINY, deep=TINY, max_debate_rounds=2).fingerprint()
    before = debate.fingerprint()
    monkeypatch.setattr("frameworks.multi_agent.templates_digest", lambda: "edited prompts")
    assert debate.fingerprint() != before
    edited = debate.fingerprint()
    monkeypatch.setattr(debate.quick_engine, "fingerprint", lambda: "weights-v2", raising=False)
    assert debate.fingerprint() != edited


def test_the_fingerprint_covers_the_answer_grammars(debate, monkeypatch):
    before = debate.fingerprint()
    assert MultiAgentDebate(quick=TINY, deep=TINY, constrained=False).fingerprint() != before
    grammars = debate.grammars()
    assert set(grammars) == {"plan", "proposal", "decision"} and all(grammars.values())
    monkeypatch.setattr(debate, "grammars", lambda: {**grammars, "decision": "start: %json {}"})
    assert debate.fingerprint() != before


def test_run_facts_name_the_models_their_cutoff_and_constrained_decoding(debate, monkeypatch):
    facts = debate.run_facts()
    model = debate.quick_engine.model
    assert (facts["policy"], facts["quick_model"], facts["deep_model"]) == (model, model, model)
    assert facts["constrained_decoding"] is True and facts["temperature"] == {"quick": 0.0, "deep": 0.0}
    monkeypatch.setattr(debate.quick_engine, "knowledge_cutoff", "2024-11")
    assert debate.run_facts()["knowledge_cutoff"] == "2024-11"


@pytest.mark.parametrize(("config", "message"), [
    ({"analysts": []}, "choose at least one"),
    ({"analysts": ["market", "market"]}, "each analyst at most once"),
    ({"analysts": ["macro"]}, "analysts.0"),
    ({"analysts": ["market"], "analyst_tools": {"market": ["get_prices"]}}, "unknown tool(s) get_prices"),
    ({"analysts": ["market", "news"], "analyst_tools": {"market": ["get_market_data"]}}, "no tools listed for news"),
    ({"rating_actions": {"Buy": "BUY"}}, "no action for Overweight, Hold, Underweight, Sell"),
    ({"max_debate_rounds": 0}, "max_debate_rounds"),
    ({"debate_rounds": 2}, "debate_rounds"),
])
def test_a_bad_config_names_what_is_wrong(config, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        MultiAgentDebate(quick=TINY, deep=TINY, **config)


def test_the_default_config_file_states_the_settings_defaults():
    config = compose_option("framework", "multi_agent")
    settings = DebateSettings.model_validate({k: v for k, v in config.items() if not k.startswith("_")})
    assert settings.quick.llm == settings.deep.llm == engine_config("smollm2")   # composed; the deep tier follows
    tiers = {tier: getattr(settings, tier).model_copy(update={"llm": None}) for tier in ("quick", "deep")}
    assert settings.model_copy(update=tiers) == DebateSettings()


def test_a_forced_first_call_over_a_remote_engine_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TRADEDUEL_CACHE", str(tmp_path))
    remote = {"llm": engine_config("local-server", ["base_url=http://127.0.0.1:9/v1", "cache=false"])}
    with pytest.raises(ConfigError, match=r"^first_tool_call: 'required' .* set first_tool_call: auto$"):
        MultiAgentDebate(quick=remote, deep=remote)
