"""The rollout function's side of TRL's contract, and the tool curriculum's call budget, on the tiny model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from llm_backends.tiny import TinySpec, ensure_tiny
from llm_backends.types import SamplingParams
from single_agent.grammar import max_turn_tokens
from market.view import MarketView
from single_agent.offered_tools import protocol_toolset
from single_agent.rollout import EpisodeStart, roll_out
from single_agent.scripted_policy import ScriptedPolicy
from training.config import ModelConfig, ToolCurriculum
from training.policy_model import load_policy, rollout_engine
from training.rollouts import EpisodeRollouts, choice_mask, decision_mask, loss_mask, thinking_mask, trl_batch


@pytest.fixture(scope="module")
def engine(cache_root):
    folder = ensure_tiny(TinySpec())
    model, tokenizer = load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))
    return rollout_engine(model, tokenizer, "tiny")


def rows(market, ticker: str, count: int, generations: int) -> list[dict]:
    days = market.frame(ticker).index[40:40 + count]
    return [{"ticker": ticker, "date": f"{day:%Y-%m-%d}", "regime": "bullish"} for day in days for _ in range(generations)]


def trainer_at(step: int, batch: list[dict]):
    """What the rollout function reads of the trainer: the batch's rows, the step, a metrics sink."""
    logged = []
    return SimpleNamespace(batch_rows=batch, state=SimpleNamespace(global_step=step), log_rollout=logged.append,
                           logged=logged)


def rollouts(engine, compact, market, **options) -> EpisodeRollouts:
    params = SamplingParams(temperature=1.0, max_new_tokens=max_turn_tokens(compact))
    return EpisodeRollouts(engine, compact, market, params, constrained=True, seed=3,
                           informative_tool="get_news_data", **options)


@pytest.mark.slow
def test_one_completion_per_prompt_in_order_with_the_model_mask(engine, compact, market):
    batch = rows(market, "ALFA", count=3, generations=2)
    trainer = trainer_at(0, batch)
    out = rollouts(engine, compact, market)([row for row in batch], trainer)
    episodes = out["episode"]
    assert len(episodes) == len(batch) == len(out["completion_ids"]) == len(out["env_mask"])
    assert [e.date for e in episodes] == [row["date"] for row in batch]
    forced_tokens = 0
    for episode, ids, mask, logprobs in zip(episodes, out["completion_ids"], out["env_mask"], out["logprobs"]):
        record = episode.tokens
        assert ids == record.completion_ids
        assert mask == [int(m and not f) for m, f in zip(record.model_mask, record.forced)]
        assert len(logprobs) == len(ids) and all((lp is None) == (m == 0) for lp, m in zip(logprobs, record.model_mask))
        assert not any(f and not m for f, m in zip(record.forced, record.model_mask))   # only sampled tokens are forced
        forced_tokens += sum(record.forced)
    assert forced_tokens > 0 and sum(map(sum, out["env_mask"])) > 0   # the grammar forced some tokens, not all
    first, second = episodes[0].tokens.completion_ids, episodes[1].tokens.completion_ids
    assert first != second                       # the copies of a prompt sample differently
    again = rollouts(engine, compact, market)([row for row in batch], trainer_at(0, batch))
    assert again["completion_ids"] == out["completion_ids"]      # the same step samples the same
    assert {"regime_accuracy", "informative_share", "rollout_s"} <= set(trainer.logged[0])


@pytest.mark.slow
def test_the_curriculum_budget_holds_every_episode_to_its_calls(engine, compact, market):
    curriculum = ToolCurriculum(start_calls=1, steps_per_call=10)
    batch = rows(market, "BRVO", count=4, generations=4)
    out = rollouts(engine, compact, market, curriculum=curriculum)(batch, trainer_at(0, batch))
    assert all(len(e.exchanges) <= 1 and e.end_reason == "answer" for e in out["episode"])
    assert curriculum.budget(25, compact.max_tool_calls) == 3


def test_the_trajectory_filter_leaves_fallbacks_out_of_the_loss(engine, compact, market):
    def write(episode):
        return "<think>ok</think>\n<answer>BUY</answer>" if episode.ticker == "ALFA" else "no protocol here"

    day = market.frame("ALFA").index[40]
    starts = [EpisodeStart(ticker, day, protocol_toolset(compact, MarketView(market, day)), seed=0)
              for ticker in ("ALFA", "BRVO")]
    episodes = roll_out(ScriptedPolicy(write, engine, "scripted"), compact, starts, SamplingParams(), constrained=False)
    assert [e.fallback for e in episodes] == [False, True]
    kept, filtered = trl_batch(episodes, trajectory_filter=False), trl_batch(episodes, trajectory_filter=True)
    assert kept["env_mask"] == [e.tokens.model_mask for e in episodes] and sum(kept["env_mask"][1]) > 0
    assert filtered["env_mask"][0] == kept["env_mask"][0] and sum(filtered["env_mask"][1]) == 0


def test_a_curriculum_needs_constrained_rollouts(engine, compact, market):
    with pytest.raises(ValueError, match="constrained"):
        EpisodeRollouts(engine, compact, market, SamplingParams(), constrained=False, seed=0,
                        informative_tool="get_news_data", curriculum=ToolCurriculum(start_calls=1, steps_per_call=1))


def test_the_decision_mask_leaves_the_think_blocks_out(engine, compact, market):
    turns = iter(['<think>Next: get_news_data.</think>\n<tool_call>{"name": "get_news_data", "arguments": '
                  '{"ticker": "ALFA"}}</tool_call>',
                  "<think>All planned results are read; now the answer.</think>\n<answer>SELL</answer>"])
    day = market.frame("ALFA").index[40]
    start = EpisodeStart("ALFA", day, protocol_toolset(compact, MarketView(market, day)), seed=0)
    [episode] = roll_out(ScriptedPolicy(lambda _: next(turns), engine, "scripted"), compact, [start], SamplingParams(),
                         constrained=False)
    record, tokenizer = episode.tokens, engine.tokenizer
    thinking, decisions = thinking_mask(record, tokenizer), decision_mask(record, tokenizer)
    assert len(thinking) == len(decisions) == len(record.completion_ids)

    def text(mask):
        return tokenizer.decode([t for t, m in zip(record.completion_ids, mask) if m])

    assert text(thinking) == "<think>Next: get_news_data.</think><think>All planned results are read; now the answer.</think>"
    chosen = text(decisions)
    assert "get_news_data" in chosen and "<answer>SELL</answer>" in chosen and "think" not in chosen
    assert "tool_response" not in chosen     # the tool results stay out, as in every mask
    assert trl_batch([episode], False, loss_mask("decisions", tokenizer))["env_mask"] == [decisions]
    assert trl_batch([episode], False, loss_mask("chosen", tokenizer))["env_mask"] == [choice_mask(record)]


@pytest.mark.slow
def test_forced_tokens_stay_out_of_the_decision_mask(engine, compact, market):
    out = rollouts(engine, compact, market, loss_tokens="decisions")(rows(market, "ALFA", 1, 2),
                                                                     trainer_at(0, rows(market, "ALFA", 1, 2)))
    for episode, mask in zip(out["episode"], out["env_mask"]):
        assert mask == decision_mask(episode.tokens, engine.tokenizer)
        assert not any(m and f for m, f in zip(mask, episode.tokens.forced))
        assert 0 < sum(mask) < sum(choice_mask(episode.tokens))
