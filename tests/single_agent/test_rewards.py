"""The reward, every branch of every component against values computed by hand.

`count_words` stands in for the tokenizer: a segment `<think>w … w</think>\\n` of n words counts n.
"""

from __future__ import annotations

import pandas as pd
import pytest
from episode_builders import DATE, call_text, count_words, episode, think

from core.errors import ConfigError
from market.decision import Action
from market.sources.embedded import load_embedded
from market.view import MarketView
from single_agent.rewards import (
    call_key,
    duplicate_penalty,
    episode_rewards,
    format_reward,
    format_segments,
    length_score,
    load_reward_config,
    lookahead_penalty,
    multi_call_penalty,
    regime_label,
    result_reward,
    segment_score,
    tool_count_penalty,
    tool_reward,
    total_reward,
)
from tools import ToolSet
from tools.toolset import is_malformed

BUY, SELL, HOLD = Action.BUY, Action.SELL, Action.HOLD


@pytest.mark.parametrize("regime, action, expected", [
    ("bullish", BUY, 1.0), ("bullish", SELL, -1.0), ("bullish", HOLD, -0.75),
    ("bearish", BUY, -1.0), ("bearish", SELL, 1.0), ("bearish", HOLD, -0.75),
    ("sideways", BUY, -0.5), ("sideways", SELL, -0.5), ("sideways", HOLD, 1.0),
])
def test_result_matrix(paper_reward, regime, action, expected):
    assert result_reward(action, regime, 0, paper_reward) == expected


def test_result_without_an_answer_or_with_look_ahead_is_minus_one(paper_reward):
    assert result_reward(None, "bullish", 0, paper_reward) == -1.0
    assert result_reward(BUY, "bullish", 1, paper_reward) == -1.0
    assert result_reward(HOLD, "sideways", 3, paper_reward) == -1.0


@pytest.mark.parametrize("tokens, expected", [
    (200, 0.1), (400, 0.1), (600, 0.1),
    (100, 0.05 - 0.01 * 50_000 / 30_000),       # (100-200)(100-600) = 50,000
    (700, 0.05 - 0.01 * 50_000 / 30_000),       # (700-200)(700-600) = 50,000
    (0, 0.01),                                  # 0.05 - 0.01 * 120,000 / 30,000
    (199, 0.05 - 0.01 * 401 / 30_000),
    (1000, 0.05 - 0.01 * 320_000 / 30_000),     # -0.0567: long thinks cost
])
def test_length_score_paper(paper_reward, tokens, expected):
    assert length_score(tokens, paper_reward) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("tokens", [0, 10, 15, 70, 100, 150])
def test_compact_length_band_is_the_paper_curve_scaled_tenfold(paper_reward, compact_reward, tokens):
    assert length_score(tokens, compact_reward) == pytest.approx(length_score(10 * tokens, paper_reward), abs=1e-12)


def test_compact_length_band(compact_reward):
    assert [length_score(n, compact_reward) for n in (20, 40, 60)] == [0.1, 0.1, 0.1]


def test_segment_scores(paper_reward):
    assert segment_score("", paper_reward, count_words) == 0.001
    assert segment_score(" \n ", paper_reward, count_words) == 0.001
    assert segment_score(think(300) + "\n", paper_reward, count_words) == pytest.approx(0.105)
    no_tags = " ".join(["w"] * 300)
    assert segment_score(no_tags, paper_reward, count_words) == pytest.approx(0.1)
    reversed_tags = "</think>" + " ".join(["w"] * 299) + "<think>"
    assert segment_score(reversed_tags, paper_reward, count_words) == pytest.approx(0.1)
    assert segment_score("<think>w", paper_reward, count_words) == pytest.approx(0.05 - 0.01 * 199 * 599 / 30_000)


def test_format_scores_the_text_before_each_call_not_the_answer(paper, paper_reward):
    done = episode(paper, [call_text("get_market_data", words=300), "no think " + call_text("get_news_data", 100),
                                  f"{think(5)}\n<answer>BUY</answer>"], "answer")
    assert format_segments(done) == [think(300) + "\n", "no think " + think(100) + "\n"]
    # 0.105 for the first; the second has its tags in order (+0.005) after two stray words, 102 words in all,
    # out of band: 0.05 - 0.01 * (102 - 200)(102 - 600) / 30000
    second = 0.005 + 0.05 - 0.01 * (102 - 200) * (102 - 600) / 30_000
    assert format_reward(done, paper_reward, count_words) == pytest.approx(0.105 + second)


def test_format_without_a_valid_answer_starts_at_minus_one(paper, paper_reward):
    done = episode(paper, [call_text("get_market_data", words=300), "<answer>BUY</answer><answer>BUY</answer>"],
                   "parse_failure")
    assert format_reward(done, paper_reward, count_words) == pytest.approx(-1 + 0.105)


def test_multi_call_penalty(paper_reward):
    assert multi_call_penalty([1, 1, 0, 1], paper_reward) == 0.0
    assert multi_call_penalty([2], paper_reward) == pytest.approx(-0.4)
    assert multi_call_penalty([1, 2, 3], paper_reward) == pytest.approx(-(4 + 9) / 10)


def test_lookahead_penalty_is_per_call(paper_reward):
    assert lookahead_penalty(0, paper_reward) == 0.0
    assert lookahead_penalty(2, paper_reward) == -100.0


def test_duplicates_compare_validated_arguments():
    plain = call_key("get_market_data", {"ticker": "NVDA"})
    assert call_key("get_market_data", {"ticker": "NVDA", "lookback_days": 10}) == plain  # 10 is the default
    assert call_key("get_market_data", {"ticker": "NVDA", "lookback_days": 5}) != plain
    assert call_key("get_news_data", {"ticker": "NVDA"}) != plain
    assert call_key("get_market_data", {"ticker": "NVDA", "lookback_days": 0}) == \
        call_key("get_market_data", {"lookback_days": 0, "ticker": "NVDA"})  # invalid: compared as given
    assert call_key("get_weather", {"city": "Paris"}) != plain


def test_duplicate_penalty(paper_reward):
    assert duplicate_penalty(["a", "b", "c"], paper_reward) == 0.0
    assert duplicate_penalty(["a", "a", "b", "a", "b"], paper_reward) == pytest.approx(-0.05 * 3)


@pytest.mark.parametrize("calls, expected", [(0, -8), (1, -7), (4, -4), (5, 0), (8, 0), (9, -1), (12, -4)])
def test_tool_count_penalty_paper(paper_reward, calls, expected):
    assert tool_count_penalty(calls, paper_reward) == expected


@pytest.mark.parametrize("calls, expected", [(0, -3), (1, -2), (2, 0), (3, 0), (4, -1)])
def test_tool_count_penalty_compact(compact_reward, calls, expected):
    assert tool_count_penalty(calls, compact_reward) == expected


def test_total(paper_reward):
    assert total_reward(1.0, 0.2, -0.4, paper_reward) == pytest.approx(4.8)
    assert total_reward(-1.0, -1.0, -50.0, paper_reward) == pytest.approx(-56.0)


def test_a_good_paper_episode(paper, paper_reward):
    tools = ["get_market_data", "get_stock_indicators", "get_news_data", "get_reddit_data"]
    texts = [call_text(name, words=300) for name in tools]
    texts.append(call_text("get_market_data", words=300, lookback_days=10))  # the first call again, default spelled out
    done = episode(paper, [*texts, f"{think(50)}\n<answer>BUY</answer>"], "answer")
    assert tool_reward(done, paper_reward) == pytest.approx(-0.05)  # one duplicate; 5 calls are in the band
    rewards = episode_rewards(done, "bullish", paper_reward, count_words)
    assert rewards.result == 1.0
    assert rewards.format == pytest.approx(5 * 0.105)
    assert rewards.total == pytest.approx(5 * 1.0 + 0.525 - 0.05)


def test_a_bad_compact_episode(compact, compact_reward):
    both = ('<tool_call>[{"name": "get_market_data", "arguments": {"ticker": "NVDA"}}, '
            '{"name": "get_stock_indicators", "arguments": {"ticker": "NVDA"}}]</tool_call>')
    texts = [f"{think(10)}\n{both}", call_text("get_news_data", end_date="2030-01-01").split("\n", 1)[1],
             "<think>x</think><answer>maybe</answer>"]
    done = episode(compact, texts, "parse_failure", lookahead_turns=(1,))
    # segments: 10 words (0.005 + 0.05 - 0.01 * (10-20)(10-60)/300) and an empty one (0.001); no answer: -1
    format_ = -1 + 0.005 + 0.05 - 0.01 * 500 / 300 + 0.001
    tool = -0.4 - 50.0  # two calls in one turn, one look-ahead call; 3 calls are in the compact band
    rewards = episode_rewards(done, "bearish", compact_reward, count_words)
    assert (rewards.result, rewards.format, rewards.tool) == (-1.0, pytest.approx(format_), pytest.approx(tool))
    assert rewards.total == pytest.approx(5 * -1.0 + format_ + tool)


def test_without_a_label_there_is_no_result_and_no_total(compact, compact_reward):
    done = episode(compact, [f"{think(30)}\n<answer>HOLD</answer>"], "answer")
    rewards = episode_rewards(done, None, compact_reward, count_words)
    assert rewards.result is None and rewards.total is None
    assert rewards.format == 0.0 and rewards.tool == -3.0  # no segment; no call: -|0 - 3|


def test_regime_label_from_closes(paper_reward):
    days = pd.bdate_range(DATE, periods=12)

    def label(after_fill: float) -> str | None:
        close = pd.Series([100.0, 100.0] + [after_fill] * 10, index=days)  # p_{t+1} = 100, then a level
        return regime_label(close, DATE, paper_reward)

    assert label(101.6) == "bullish" and label(98.4) == "bearish"
    assert label(101.4) == "sideways" and label(98.6) == "sideways"
    close = pd.Series(100.0, index=days)
    assert regime_label(close, days[3], paper_reward) == "sideways"
    assert regime_label(close, days[4], paper_reward) is None  # 7 bars after the fill day are needed
    assert regime_label(close, "2030-01-01", paper_reward) is None


def test_an_incomplete_reward_config_is_one_config_error():
    with pytest.raises(ConfigError, match="result_matrix"):
        load_reward_config({"name": "broken", "alpha": 5})


def test_an_ablation_reward_config_changes_only_what_it_lists_over_its_base():
    paper = load_reward_config("paper").model_dump()
    for name, changed in (("paper_theta200bp", {"theta": 0.02}), ("paper_theta100bp", {"theta": 0.01}),
                          ("paper_wo_format", {"invalid_format": 0.0, "think_bonus": 0.0, "length_in_band": 0.0,
                                               "length_base": 0.0, "length_slope": 0.0, "empty_segment": 0.0,
                                               "no_call_format": 0.0})):
        ablated = load_reward_config(name).model_dump()
        assert {k: v for k, v in ablated.items() if v != paper[k]} == {"name": name, **changed}


def test_without_r_tool_no_call_pattern_is_penalised(paper_reward):
    ablated = load_reward_config("paper_wo_tool")
    assert multi_call_penalty([1, 2, 3, 9], paper_reward) < 0 and multi_call_penalty([1, 2, 3, 9], ablated) == 0.0
    for calls in (0, 1, 4, 5, 8, 9, 30):
        assert tool_count_penalty(calls, ablated) == 0.0
    assert lookahead_penalty(3, ablated) == 0.0 and duplicate_penalty(["a", "a", "b"], ablated) == 0.0
    assert ablated.malformed_call_penalty == 0.0


@pytest.fixture(scope="module")
def toolset():
    """A real tool set on NVDA at the episodes' date: its records say which calls were malformed."""
    market = load_embedded(["NVDA"])
    return ToolSet(MarketView(market, pd.Timestamp(DATE)))


def with_records(done, toolset, calls):
    """`done` with its exchanges' records replaced by those of running `calls` [(name, arguments)] on `toolset`."""
    exchanges = [exchange for turn in done.turns for exchange in turn.exchanges]
    assert len(exchanges) == len(calls)
    for exchange, (name, arguments) in zip(exchanges, calls):
        toolset.call(name, arguments)
        exchange.record = toolset.records[-1]
    return done


def test_malformed_calls_pay_the_penalty_and_do_not_fill_the_count_band(paper, paper_reward, toolset):
    valid = [("get_market_data", {"ticker": "NVDA"}), ("get_stock_indicators", {"ticker": "NVDA"}),
             ("get_news_data", {"ticker": "NVDA"})]
    junk = [("get_weather", {"ticker": "NVDA"}), ("get_market_data", {"ticker": "NVDA", "lookback_days": 0})]
    texts = [call_text(name, **{k: v for k, v in arguments.items() if k != "ticker"}) for name, arguments in valid + junk]
    done = with_records(episode(paper, [*texts, "<answer>BUY</answer>"], "answer"), toolset, valid + junk)
    assert [is_malformed(e.record) for e in done.exchanges] == [False, False, False, True, True]
    # 3 well-formed calls are counted (<= 4: -|3 - 8|), the 2 junk calls cost 0.1 each and count for nothing
    assert tool_reward(done, paper_reward) == pytest.approx(-5 - 2 * paper_reward.malformed_call_penalty)
    assert paper_reward.count_valid_calls_only and paper_reward.malformed_call_penalty > 0
    padded = paper_reward.model_copy(update={"count_valid_calls_only": False, "malformed_call_penalty": 0.0})
    assert tool_reward(done, padded) == 0.0, "without the new branches 5 calls of any kind sit in the band"


def test_a_call_whose_data_is_missing_is_not_malformed(toolset):
    toolset.call("get_market_data", {"ticker": "ZZZZ"})
    record = toolset.records[-1]
    assert record.error is not None and not is_malformed(record)


def test_calls_beyond_eight_reach_the_count_penalty(paper, paper_reward):
    assert paper.max_turns == 32 and paper.max_tool_calls > 8, "the protocol no longer cuts at 8 calls"
    assert paper.advised_tool_calls == 8
    names = ["get_market_data", "get_stock_indicators", "get_news_data", "get_reddit_data", "get_macro_indicators",
             "get_balance_sheet", "get_cashflow", "get_income_statements", "get_insider_transactions",
             "get_dividends", "get_earnings_estimate"]
    done = episode(paper, [*(call_text(name) for name in names), "<answer>HOLD</answer>"], "answer")
    assert tool_reward(done, paper_reward) == pytest.approx(-(11 - 8))


def test_an_episode_without_a_call_scores_the_papers_empty_process(paper, paper_reward, compact, compact_reward):
    done = episode(paper, [f"{think(5)}\n<answer>SELL</answer>"], "answer")
    assert format_segments(done) == []
    assert format_reward(done, paper_reward, count_words) == pytest.approx(0.001)
    assert tool_reward(done, paper_reward) == -8
    unanswered = episode(paper, ["<answer>maybe</answer>"], "parse_failure")
    assert format_reward(unanswered, paper_reward, count_words) == pytest.approx(-1 + 0.001)
    quick = episode(compact, [f"{think(5)}\n<answer>SELL</answer>"], "answer")
    assert format_reward(quick, compact_reward, count_words) == 0.0, "the compact reward is unchanged"
