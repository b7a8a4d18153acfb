"""The runner hands a stateless framework its contexts in chunks no larger than it prefers, and
as few as that allows; a framework that states no preference gets the run's batch size."""

from __future__ import annotations

import pytest

from frameworks.base import TradingFramework
from harness.batch_size import stateless_batch_size
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.decision import Action, Decision
from market.synthetic import generate_market

DATA = generate_market(tickers=["ALFA", "BRVO"], days=60, seed=1)
DAYS = DATA.frame("ALFA").index


class Counting(TradingFramework):
    """HOLD everywhere; records the size of every batch it is handed."""

    def __init__(self, preferred: int | None):
        self.preferred, self.sizes = preferred, []

    def preferred_batch_size(self):
        return self.preferred

    def decide(self, batch):
        self.sizes.append(len(batch))
        return [Decision(action=Action.HOLD) for _ in batch]


@pytest.mark.slow
@pytest.mark.parametrize("preferred, batch_size, sizes", [
    (None, 256, [56]), (None, 20, [20, 20, 16]), (13, 256, [12, 12, 12, 12, 8]), (100, 30, [28, 28]), (1, 256, [1] * 56),
])
def test_chunks_follow_the_framework_preference(tmp_path, preferred, batch_size, sizes):
    framework = Counting(preferred)
    spec = RunSpec(tickers=["ALFA", "BRVO"], seeds=[0], start=DAYS[32], end=DAYS[-1], batch_size=batch_size)
    with Journal(tmp_path / "journal.sqlite") as journal:
        result = EpisodeRunner(DATA, spec, journal, progress=False).run([FrameworkEntry("counting", framework, "c")])
    assert framework.sizes == sizes and result.made == sum(sizes)


def test_the_split_is_the_fewest_chunks_within_the_limit():
    framework = Counting(13)
    assert [stateless_batch_size(framework, 256, n) for n in (0, 5, 13, 14, 55)] == [13, 13, 13, 7, 11]
