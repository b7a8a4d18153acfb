import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_backends.batching import batch_cost, plan_batches


def test_budget_splits_batches_longest_first():
    batches = plan_batches([10, 50, 20, 40], max_new_tokens=10, max_batch_tokens=120, max_batch_size=8)
    assert batches == [[1, 3], [2, 0]]


def test_max_batch_size_caps_rows():
    assert [len(b) for b in plan_batches([5] * 7, 1, 10_000, 3)] == [3, 3, 1]


def test_oversized_prompt_gets_its_own_batch():
    assert plan_batches([1000, 5], 10, 100, 4) == [[0], [1]]


def test_rejects_non_positive_limits():
    with pytest.raises(ValueError, match="must be positive"):
        plan_batches([1], 1, 0, 1)


@given(
    lengths=st.lists(st.integers(1, 300), max_size=60),
    new=st.integers(1, 64),
    budget=st.integers(1, 5000),
    size=st.integers(1, 16),
)
def test_every_prompt_once_and_budget_respected(lengths, new, budget, size):
    batches = plan_batches(lengths, new, budget, size)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= size
        longest = max(lengths[i] for i in b)
        assert len(b) == 1 or batch_cost(len(b), longest, new) <= budget
