"""Black-box leak test: data after day X perturbed (prices and news), decisions up to X identical."""

from __future__ import annotations

import pytest
from finagent_runs import END, START, make_agent, run, synthetic_market


def perturbed_after(cut):
    data = synthetic_market()
    for bars in data.bars.values():
        later = bars.index > cut
        bars.loc[later, ["open", "high", "low", "close"]] *= 1.5
        bars.loc[later, "volume"] *= 3
    news = data.records["news"]
    after = news["available_at"] > cut + data.decision_time
    news.loc[after, "headline"] = "perturbed: " + news.loc[after, "headline"].str[::-1]
    return data


def trail(result, cut):
    return [(e.ticker, e.date, e.decision.action, e.decision.trace.messages, e.decision.trace.extra)
            for e in result.decisions if e.date <= cut]


@pytest.mark.slow
@pytest.mark.parametrize("cut_index", [1, 2])
def test_data_after_x_changes_no_decision_up_to_x(tmp_path, cut_index):
    real = synthetic_market()
    cut = real.trading_days("ALFA", START, END)[cut_index]
    original = run(real, make_agent(), tmp_path / "real.sqlite")
    changed = run(perturbed_after(cut), make_agent(), tmp_path / "perturbed.sqlite")
    assert trail(original, cut) == trail(changed, cut)
    assert len(trail(original, cut)) == 2 * (cut_index + 1)

    def later(result):
        return [e.decision.trace.messages for e in result.decisions if e.date > cut]

    assert later(original) != later(changed)  # the perturbation is visible once it is in the past
