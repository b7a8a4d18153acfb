"""The rollout engine: episodes advance together turn by turn in token ids, tools run through each
episode's own tool set, episodes end as the protocol says, and the token record is exactly what
was sampled plus the fragments the chat template writes between turns."""

from __future__ import annotations

import pytest
from episode_builders import count_words

from llm_backends.tool_calls import render_tool_call
from llm_backends.types import SamplingParams, TokenRequest
from market.decision import Action
from market.regime import regime_labels
from market.synthetic import generate_market
from market.view import MarketView
from single_agent.expert import ScriptedExpert
from single_agent.failures import failure_counts
from single_agent.grammar import max_turn_tokens
from single_agent.offered_tools import offered_schemas, protocol_toolset
from single_agent.prompting import initial_conversation
from single_agent.rewards import episode_rewards
from single_agent.rollout import EpisodeStart, derive_seed, roll_out
from single_agent.scripted_policy import ScriptedPolicy, expert_policy

MARKET = generate_market(tickers=["ALFA", "BRVO"], days=120, seed=3)
DAYS = MARKET.frame("ALFA").index[40:43]
GREEDY = SamplingParams(max_new_tokens=200)


def starts(protocol, days=DAYS, tickers=("ALFA", "BRVO"), seed=0) -> list[EpisodeStart]:
    return [EpisodeStart(ticker, day, protocol_toolset(protocol, MarketView(MARKET, day)), seed)
            for ticker in tickers for day in days]


class Recording:
    """A policy wrapper that keeps every request and result, call by call."""

    def __init__(self, policy):
        self.policy = policy
        self.calls: list[tuple[list, list]] = []

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def generate_tokens(self, requests):
        results = self.policy.generate_tokens(requests)
        self.calls.append((requests, results))
        return results


def script(*texts: str):
    """A `write` function giving the turn texts in order (the last one again when they run out)."""
    return lambda episode: texts[min(len(episode.turns), len(texts) - 1)]


def think(words: int) -> str:
    return "<think>" + " ".join(["w"] * words) + "</think>"


def test_the_expert_plays_through_the_engine_with_real_tools(compact, tiny):
    recording = Recording(expert_policy(ScriptedExpert(compact), tiny))
    episodes = roll_out(recording, compact, starts(compact), GREEDY, constrained=False)
    assert [len(requests) for requests, _ in recording.calls] == [6, 6, 6, 6]  # one call per turn for all
    for episode in episodes:
        assert episode.end_reason == "answer" and episode.parse_failures() == []
        assert [e.call.name for e in episode.exchanges] == ["get_market_data", "get_stock_indicators", "get_news_data"]
        assert all(e.record.error is None and not e.record.lookahead for e in episode.exchanges)
        trace = episode.trace()
        assert [m["role"] for m in trace.messages] == ["system", "user"] + ["assistant", "tool"] * 3 + ["assistant"]
        assert trace.messages[3]["content"] == episode.exchanges[0].response
        assert trace.messages[3]["content"].startswith(f"{episode.ticker} ")
        assert [c.name for c in trace.tool_calls] == [e.call.name for e in episode.exchanges]
        assert [c.role for c in trace.llm_calls] == ["agent"] * 4
        assert [c.model for c in trace.llm_calls] == ["scripted-expert:compact"] * 4
    assert {e.final_action for e in episodes} <= set(Action)


def test_continued_ids_are_the_sampled_ids_plus_the_template_fragments(compact, tiny):
    recording = Recording(expert_policy(ScriptedExpert(compact), tiny))
    [episode] = roll_out(recording, compact, starts(compact, DAYS[:1], ("ALFA",)), GREEDY, constrained=False)
    tokens, encode = episode.tokens, lambda text: tiny.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokens.prompt_ids == tiny.render_ids(initial_conversation(compact, "ALFA", DAYS[0]), offered_schemas(compact))
    expected, mask = [], []
    for turn, (requests, results) in enumerate(recording.calls):
        assert requests[0].prompt_ids == tokens.prompt_ids + expected  # the sequence so far, never re-tokenised
        sampled = results[0].completion_ids
        assert sampled == encode(episode.turns[turn].step.text) + [tiny.eos_ids[0]]
        expected, mask = expected + sampled, mask + [1] * len(sampled)
        if episode.turns[turn].exchanges:
            response = episode.turns[turn].exchanges[0].response
            fragment = encode(f"\n<|im_start|>user\n<tool_response>\n{response}\n</tool_response><|im_end|>\n"
                              "<|im_start|>assistant\n")
            expected, mask = expected + fragment, mask + [0] * len(fragment)
    assert tokens.completion_ids == expected and tokens.model_mask == mask and tokens.logprobs is None
    rendered = tiny.render(episode.messages(), offered_schemas(compact))
    assert tiny.tokenizer.decode(tokens.prompt_ids + tokens.completion_ids) + "\n<|im_start|>assistant\n" == rendered


def test_a_scripted_episode_earns_its_hand_computed_reward(compact, compact_reward, tiny):
    call = lambda name: f"{think(25)}\n{render_tool_call(name, {'ticker': 'ALFA'})}"  # noqa: E731
    policy = ScriptedPolicy(script(call("get_market_data"), call("get_news_data"), f"{think(5)}\n<answer>BUY</answer>"),
                            tiny, "script")
    [episode] = roll_out(policy, compact, starts(compact, DAYS[:1], ("ALFA",)), GREEDY, constrained=False)
    assert episode.end_reason == "answer" and episode.final_action is Action.BUY
    # each call segment: 27 words in the 20-60 band -> 0.1, think tags -> 0.005; two calls: inside [1, 3] -> no R_tool
    rewards = episode_rewards(episode, "bullish", compact_reward, count_words)
    assert (rewards.result, rewards.format, rewards.tool) == (1.0, pytest.approx(0.21), 0.0)
    assert rewards.total == pytest.approx(5.21)
    label = regime_labels(MARKET.frame("ALFA")["close"]).loc[DAYS[0]]
    assert episode_rewards(episode, label, compact_reward, count_words).result == {"bullish": 1.0, "bearish": -1.0,
                                                                                  "sideways": -0.5}[label]


@pytest.mark.parametrize(("texts", "end", "calls", "kinds"), [
    (["I think the stock goes up."], "parse_failure", 0, {"missing_think": 1, "no_action": 1, "no_answer": 1}),
    (["<think>x</think>\n<tool_call>{bad json</tool_call>"], "parse_failure", 0, {"bad_json": 1, "no_answer": 1}),
    (["<think>x</think>\n" + render_tool_call("get_market_data", {"ticker": "ALFA"})], "call_limit", 3, {"no_answer": 1}),
    (["<think>x</think>\n" + render_tool_call("get_market_data", {"ticker": "ALFA"}) * 2,
      "<think>x</think>\n" + render_tool_call("get_news_data", {"ticker": "ALFA"}) * 2],
     "call_limit", 3, {"multiple_calls": 3, "no_answer": 1}),
])
def test_nonsense_ends_with_a_recorded_failure_and_the_fallback(compact, tiny, texts, end, calls, kinds):
    [episode] = roll_out(ScriptedPolicy(script(*texts), tiny, "script"), compact, starts(compact, DAYS[:1], ("ALFA",)),
                         GREEDY, constrained=False)
    assert episode.end_reason == end and len(episode.exchanges) == calls
    decision = episode.decision()
    assert decision.action is Action.HOLD and decision.trace.fallback
    assert failure_counts(decision.trace.parse_failures) == kinds


def test_the_turn_limit_ends_an_episode_that_never_answers(compact, tiny):
    two_turns = compact.model_copy(update={"max_turns": 2})
    call = "<think>x</think>\n" + render_tool_call("get_market_data", {"ticker": "ALFA"})
    [episode] = roll_out(ScriptedPolicy(script(call), tiny, "script"), two_turns, starts(compact, DAYS[:1], ("ALFA",)),
                         GREEDY, constrained=False)
    assert episode.end_reason == "turn_limit" and len(episode.exchanges) == 2 and episode.fallback
    assert len(episode.tokens.completion_ids) > sum(episode.tokens.model_mask)  # one fragment, after the first turn


def test_finished_episodes_leave_the_batch(compact, tiny):
    answer = f"{think(3)}\n<answer>SELL</answer>"
    quick = lambda episode: answer if episode.ticker == "ALFA" else ScriptedExpert(compact).next_text(episode)  # noqa: E731
    recording = Recording(ScriptedPolicy(quick, tiny, "mixed"))
    episodes = roll_out(recording, compact, starts(compact, DAYS[:2]), GREEDY, constrained=False)
    assert [len(requests) for requests, _ in recording.calls] == [4, 2, 2, 2]
    assert [len(e.turns) for e in episodes] == [1, 1, 4, 4]


@pytest.mark.slow
def test_constrained_tiny_model_writes_only_valid_steps(compact, tiny):
    enforcing = compact.model_copy(update={"enforce_required_tools": True})
    params = SamplingParams(temperature=1.0, max_new_tokens=max_turn_tokens(compact, ticker="BRVO"))
    episodes = roll_out(tiny, enforcing, starts(compact), params, constrained=True, return_logprobs=True)
    steps = [turn.step for episode in episodes for turn in episode.turns]
    assert all(step.failures == [] and step.outcome in ("call", "answer") for step in steps)
    for episode in episodes:
        assert episode.end_reason == "answer" and not episode.fallback
        called = [e.call.name for e in episode.exchanges]
        assert set(compact.required_tools) <= set(called) or len(called) == compact.max_tool_calls
        assert 2 <= len(called) <= compact.max_tool_calls
        assert all(e.call.arguments == {"ticker": episode.ticker} for e in episode.exchanges)
        tokens = episode.tokens
        assert all((lp is None) == (m == 0) for lp, m in zip(tokens.logprobs, tokens.model_mask))
        assert all(lp <= 0 for lp in tokens.logprobs if lp is not None)


def test_without_enforcement_the_grammar_lets_the_model_answer_at_once(compact, tiny):
    params = SamplingParams(temperature=1.0, max_new_tokens=max_turn_tokens(compact, ticker="BRVO"))
    episodes = roll_out(tiny, compact, starts(compact), params, constrained=True)
    assert all(turn.step.failures == [] for episode in episodes for turn in episode.turns)
    assert all(episode.end_reason == "answer" for episode in episodes)


def test_an_episode_samples_the_same_turns_whatever_shares_its_batch(compact, tiny):
    params = SamplingParams(temperature=1.0, max_new_tokens=max_turn_tokens(compact, ticker="BRVO"))
    together = roll_out(tiny, compact, starts(compact, seed=7), params, constrained=True)
    alone = roll_out(tiny, compact, starts(compact, seed=7)[-1:], params, constrained=True)
    assert alone[0].tokens == together[-1].tokens
    other_seed = roll_out(tiny, compact, starts(compact, seed=8)[-1:], params, constrained=True)
    assert other_seed[0].tokens != alone[0].tokens


def test_turn_seeds_are_named_by_episode_seed_and_turn():
    assert derive_seed(7, 0) == derive_seed(7, 0) != derive_seed(7, 1) != derive_seed(8, 0)
    assert 0 <= derive_seed("x") < 2**63


def test_constrained_decoding_refuses_a_budget_that_cuts_turns(compact, tiny):
    with pytest.raises(ValueError, match="needs at least"):
        roll_out(tiny, compact, starts(compact, DAYS[:1]), SamplingParams(max_new_tokens=50), constrained=True)
    with pytest.raises(ValueError, match="set by the rollout"):
        roll_out(tiny, compact, starts(compact, DAYS[:1]), SamplingParams(grammar='start: "x"'), constrained=False)


def test_a_scripted_policy_needs_the_episode(tiny):
    with pytest.raises(TypeError, match="carries its episode"):
        ScriptedPolicy(script("x"), tiny, "script").generate_tokens([TokenRequest([1, 2])])
