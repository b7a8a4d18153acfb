import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_backends.batching import RowShape, batch_cost, plan_batches


def test_budget_splits_batches_longest_first():
    shapes = [RowShape(0, n, 10) for n in (10, 50, 20, 40)]
    assert plan_batches(shapes, max_batch_tokens=120, max_batch_size=8) == [[1, 3], [2, 0]]


def test_cost_counts_cached_prefix_new_tokens_and_generation_as_separate_column_blocks():
    assert batch_cost([RowShape(32, 4, 8), RowShape(0, 20, 2)]) == 2 * (32 + 20 + 8)
    assert batch_cost([]) == 0


def test_max_batch_size_caps_rows():
    assert [len(b) for b in plan_batches([RowShape(0, 5, 1)] * 7, 10_000, 3)] == [3, 3, 1]


def test_oversized_row_gets_its_own_batch():
    assert plan_batches([RowShape(0, 1000, 10), RowShape(0, 5, 10)], 100, 4) == [[0], [1]]


def test_rejects_non_positive_limits():
    with pytest.raises(ValueError, match="must be positive"):
        plan_batches([RowShape(0, 1, 1)], 0, 1)


shape = st.builds(RowShape, st.integers(0, 200), st.integers(1, 300), st.integers(0, 64))


@given(shapes=st.lists(shape, max_size=60), budget=st.integers(1, 5000), size=st.integers(1, 16))
def test_every_row_once_and_budget_respected(shapes, budget, size):
    batches = plan_batches(shapes, budget, size)
    assert sorted(i for b in batches for i in b) == list(range(len(shapes)))
    for b in batches:
        assert len(b) <= size
        assert len(b) == 1 or batch_cost([shapes[i] for i in b]) <= budget
