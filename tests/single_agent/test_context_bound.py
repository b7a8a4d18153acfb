"""The bound on an episode's KV positions holds for real episodes, and the shared prompt prefix is
the part that two different episodes' first prompts really share."""

from __future__ import annotations

import pytest
from test_rollout import GREEDY, starts

from llm_backends.types import SamplingParams
from single_agent.context_bound import episode_positions, episodes_fitting, shared_prompt_tokens
from single_agent.expert import ScriptedExpert
from single_agent.offered_tools import offered_schemas
from single_agent.prompting import initial_conversation, system_prompt
from single_agent.rollout import roll_out
from single_agent.scripted_policy import expert_policy


@pytest.mark.slow
def test_episodes_of_the_expert_and_of_the_model_stay_within_the_bound(compact, tiny):
    sampled = SamplingParams(max_new_tokens=GREEDY.max_new_tokens, temperature=1.0, seed=7)
    episodes = roll_out(expert_policy(ScriptedExpert(compact), tiny), compact, starts(compact), GREEDY, constrained=False)
    episodes += roll_out(tiny, compact, starts(compact), sampled, constrained=True)
    bound = episode_positions(tiny, compact, GREEDY.max_new_tokens)
    lengths = [len(e.tokens.prompt_ids) + len(e.tokens.completion_ids) for e in episodes]
    assert max(lengths) <= bound
    assert max(lengths) > bound / 4  # the expert's three calls with their results: a bound, not a guess far above


def test_the_shared_prefix_is_shared_and_holds_the_system_prompt(compact, tiny):
    a, b = (tiny.render_ids(initial_conversation(compact, t, d), offered_schemas(compact))
            for t, d in (("ALFA", "2020-03-02"), ("BRVO", "2021-07-15")))
    shared = shared_prompt_tokens(tiny, compact)
    assert a[:shared] == b[:shared] and shared < len(a)
    assert system_prompt(compact) in tiny.tokenizer.decode(a[:shared])


@pytest.mark.slow
def test_a_store_fits_its_share_of_episodes_and_an_uncut_protocol_has_no_bound(compact, paper, tiny):
    bound, shared = episode_positions(tiny, compact, 100), shared_prompt_tokens(tiny, compact)
    assert episodes_fitting(shared + 10 * (bound - shared), tiny, compact, 100) == 10
    assert episodes_fitting(10, tiny, compact, 100) == 1
    assert paper.max_result_chars is None and episodes_fitting(10**6, tiny, paper, 100) is None
