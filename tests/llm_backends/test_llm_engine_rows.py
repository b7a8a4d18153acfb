"""ChatEngine's per-conversation tools and parameters, and the grouping for engines that need shared ones."""

import pytest
from llm_test_helpers import PRICE_TOOL, conversation

from llm_backends.engine import ChatEngine, params_per_row, tools_per_row
from llm_backends.types import ChatResult, SamplingParams


class RecordingEngine(ChatEngine):
    """Answers with the conversation's text and records each `_generate` call (wiring only: no model)."""

    engine_id = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, bool, int]] = []

    def _generate(self, conversations, tools, params):
        self.calls.append((len(conversations), bool(tools), params.max_new_tokens))
        return [ChatResult(text=c[-1]["content"]) for c in conversations]


def test_engines_without_mixed_batches_get_one_call_per_group_and_results_in_order():
    engine = RecordingEngine()
    prompts = [conversation(t) for t in "abcd"]
    results = engine.generate(prompts, [[PRICE_TOOL], None, [PRICE_TOOL], None], [SamplingParams(max_new_tokens=2)] * 3 + [SamplingParams(max_new_tokens=5)])
    assert [r.text for r in results] == list("abcd")
    assert sorted(engine.calls) == [(1, False, 2), (1, False, 5), (2, True, 2)]


def test_one_value_or_one_per_conversation():
    assert tools_per_row(None, 2) == [None, None]
    assert tools_per_row([PRICE_TOOL], 2) == [[PRICE_TOOL], [PRICE_TOOL]]
    assert tools_per_row([], 2) == [None, None]
    assert tools_per_row([[PRICE_TOOL], []], 2) == [[PRICE_TOOL], None]
    greedy = SamplingParams()
    assert params_per_row(None, 2) == [greedy, greedy]
    assert params_per_row([None, SamplingParams(seed=3)], 2)[1].seed == 3


def test_malformed_tools_and_params_are_named():
    with pytest.raises(ValueError, match="tools: 1 tool lists for 2 conversations"):
        tools_per_row([[PRICE_TOOL]], 2)
    with pytest.raises(ValueError, match="tools: give one list of tool schemas"):
        tools_per_row([PRICE_TOOL, [PRICE_TOOL]], 2)
    with pytest.raises(ValueError, match="params: 3 SamplingParams for 2 conversations"):
        params_per_row([None] * 3, 2)
    with pytest.raises(ValueError, match="params: give one SamplingParams"):
        params_per_row({"temperature": 1.0}, 2)
