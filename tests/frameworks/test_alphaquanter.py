"""The single-agent frameworks in process: a trained policy by path (a model folder, a LoRA
adapter merged into its base), self-consistency, fingerprints, and refused configurations."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from core.errors import ConfigError
from frameworks.single_agent import SingleAgent
from composed_options import agent_options
from llm_backends.paths import CACHE_ENV
from llm_backends.tiny import TinySpec, ensure_tiny
from market.decision import DecisionContext
from market.sources.embedded import load_embedded
from market.view import MarketView
from tools import ToolSet

MARKET = load_embedded(["MSFT"])
DAYS = [pd.Timestamp(day) for day in ("2020-06-01", "2020-06-02", "2020-06-03")]


def contexts(seed: int = 0) -> list[DecisionContext]:
    return [DecisionContext(ticker="MSFT", date=day, view=MarketView(MARKET, day), seed=seed,
                            tools=ToolSet(MarketView(MARKET, day))) for day in DAYS]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A temporary cache root holding the tiny model folder (the `tiny` config builds it there)."""
    root = tmp_path_factory.mktemp("tradeduel-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(root))
        torch.set_num_threads(1)
        yield ensure_tiny(TinySpec())


@pytest.fixture(scope="module")
def adapter(cache, tmp_path_factory):
    """A LoRA adapter on the tiny model's attention projections, with non-zero weights."""
    base = AutoModelForCausalLM.from_pretrained(cache)
    model = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    folder = tmp_path_factory.mktemp("adapter") / "lora-step-10"
    model.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_a_model_folder_plays_like_its_llm_config(cache):
    trained = SingleAgent(**agent_options(llm=None), checkpoint=str(cache))
    untrained = SingleAgent(**agent_options())
    assert trained.policy.model == cache.name
    assert [d.action for d in trained.decide(contexts())] == [d.action for d in untrained.decide(contexts())]
    assert trained.policy.fingerprint() == untrained.policy.fingerprint()  # the same weights, tokenizer, template


@pytest.mark.slow
def test_a_lora_adapter_is_merged_into_its_base(cache, adapter):
    recorded = SingleAgent(**agent_options(llm=None), checkpoint=str(adapter))
    named = SingleAgent(**agent_options(), checkpoint=str(adapter))
    base = SingleAgent(**agent_options())
    assert recorded.policy.model == f"{cache.name}+lora-step-10" and named.policy.model.endswith("+lora-step-10")
    assert recorded.policy.fingerprint() == named.policy.fingerprint() != base.policy.fingerprint()
    merged = dict(named.policy.hf_model.named_parameters())
    original = dict(base.policy.hf_model.named_parameters())
    assert not all(torch.equal(merged[name], original[name]) for name in original if "q_proj" in name)
    assert all(torch.equal(merged[name], original[name]) for name in original if "k_proj" in name)
    assert not any("lora" in name for name in merged)
    decisions = named.decide(contexts())
    assert all(d.trace.llm_calls[0].model.endswith("+lora-step-10") for d in decisions)


@pytest.mark.slow
def test_self_consistency_votes_over_sampled_episodes(cache):
    agent = SingleAgent(**agent_options(), temperature=1.0, samples=3)
    assert agent.stochastic
    decisions = agent.decide(contexts(seed=1))
    for decision in decisions:
        votes = decision.trace.extra["votes"]
        assert decision.trace.extra["samples"] == 3 and sum(votes.values()) == 3  # constrained: all answer
        assert votes[decision.action.value] == max(votes.values())
        assert len(decision.trace.llm_calls) >= 3
    again = SingleAgent(**agent_options(), temperature=1.0, samples=3).decide(contexts(seed=1))
    same = lambda d: (d.action, d.trace.messages, d.trace.extra, [c.completion_tokens for c in d.trace.llm_calls])  # noqa: E731
    assert [same(d) for d in again] == [same(d) for d in decisions]  # latencies aside


@pytest.mark.slow
def test_fingerprints_follow_the_protocol_grammar_and_reward(cache):
    base = SingleAgent(**agent_options()).fingerprint()
    assert SingleAgent(**agent_options()).fingerprint() == base
    assert SingleAgent(**agent_options(), constrained=False).fingerprint() != base
    assert SingleAgent(**agent_options(protocol="paper")).fingerprint() != base
    assert SingleAgent(**agent_options(reward="paper")).fingerprint() != base
    assert SingleAgent(**agent_options(), temperature=1.0).fingerprint() == base  # sampling is in the config hash


@pytest.mark.slow
@pytest.mark.parametrize(("settings", "message"), [
    ({"samples": 2}, "greedy episodes would all be the same"),
    ({"samples": 0}, "at least 1 episode"),
    ({"llm": None}, "name a backbone"),
    ({"llm": "tiny"}, "select it with llm@frameworks.<row>.llm=tiny"),   # a name, the form before the llm group
    ({"protocol": "paper"}, "select it with single_agent/protocol@frameworks.<row>.protocol=paper"),
    ({"llm": None, "checkpoint": "no/such/folder"}, "no such folder"),
])
def test_refused_configurations(cache, settings, message):
    with pytest.raises((ConfigError, ValueError), match=message):
        SingleAgent(**{**agent_options(), **settings})


def test_an_engine_without_token_ids_is_refused(cache, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    with pytest.raises(ConfigError, match="does not take token ids"):
        SingleAgent(**agent_options(llm="openai"))


def test_a_whole_model_takes_no_base(cache):
    with pytest.raises(ConfigError, match="leave llm at the transformers config"):
        SingleAgent(**agent_options(), checkpoint=str(cache))
