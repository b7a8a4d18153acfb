"""Several choices (`n`) and log-probabilities from `llm_backends.serve`, with the `openai` SDK against
the tiny model on 127.0.0.1: choice i of a seeded request samples with seed + i, unseeded choices
are fresh samples, and log-probabilities are the engine's own for the sampled tokens."""

import pytest
import torch
from llm_test_helpers import conversation

from llm_backends.types import SamplingParams, TokenRequest

HI = conversation("hi")
HELLO = conversation("hello")
"""Its first token is almost never the end of turn (p < 0.001), so fresh samples of it differ."""


def contents(answer) -> list[str | None]:
    """The message content of each choice."""
    return [choice.message.content for choice in answer.choices]


@pytest.mark.slow
def test_choice_i_of_a_seeded_request_samples_with_seed_plus_i(tiny_sdk, tiny):
    request = {"model": tiny.model, "messages": HI, "max_tokens": 12, "temperature": 1.0}
    three = tiny_sdk.chat.completions.create(**request, n=3, seed=40)
    alone = [tiny_sdk.chat.completions.create(**request, seed=40 + i).choices[0].message.content for i in range(3)]
    assert [c.index for c in three.choices] == [0, 1, 2]
    assert contents(three) == alone
    assert len(set(alone)) == 3
    assert three.usage.prompt_tokens == tiny_sdk.chat.completions.create(**request, seed=40).usage.prompt_tokens, "the prompt counts once"
    assert three.usage.completion_tokens == sum(
        tiny_sdk.chat.completions.create(**request, seed=40 + i).usage.completion_tokens for i in range(3)
    )


def test_unseeded_choices_are_fresh_samples_and_greedy_ones_agree(tiny_sdk, tiny):
    request = {"model": tiny.model, "messages": HELLO, "max_tokens": 16}
    sampled = tiny_sdk.chat.completions.create(**request, n=3, temperature=1.0)
    again = tiny_sdk.chat.completions.create(**request, n=3, temperature=1.0)
    assert len(set(contents(sampled) + contents(again))) == 6
    greedy = tiny_sdk.chat.completions.create(**request, n=2, temperature=0)
    assert len(set(contents(greedy))) == 1


def test_logprobs_are_the_engines_for_the_sampled_tokens_streamed_or_not(tiny_sdk, tiny):
    request = {"model": tiny.model, "messages": HI, "max_tokens": 8, "temperature": 0.7, "seed": 5, "logprobs": True}
    choice = tiny_sdk.chat.completions.create(**request).choices[0]
    direct = tiny.generate_tokens([TokenRequest(tiny.render_ids(HI), SamplingParams(temperature=0.7, seed=5, max_new_tokens=8), return_logprobs=True)])[0]
    entries = choice.logprobs.content
    assert [e.token for e in entries] == [tiny.tokenizer.decode([t]) for t in direct.completion_ids]
    assert torch.allclose(torch.tensor([e.logprob for e in entries]), torch.tensor(direct.logprobs), atol=1e-4)
    assert all(e.bytes == list(e.token.encode()) and e.top_logprobs == [] for e in entries)
    streamed = [
        chunk.choices[0].logprobs for chunk in tiny_sdk.chat.completions.create(**request, stream=True) if chunk.choices and chunk.choices[0].logprobs
    ]
    assert [len(s.content) for s in streamed] == [len(entries)], "all of them in the choice's last chunk"
    assert [e.logprob for e in streamed[0].content] == [e.logprob for e in entries]
