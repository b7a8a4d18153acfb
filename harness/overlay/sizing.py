"""Position sizing with a cash buffer: invest at most a fraction f of equity (f = 0.95 keeps 5 % in cash).

At the fill price p, with cash c, shares s and equity E = c + s·p, the position's exposure is
x = s·p / E. The sized execution of a decision:

- BUY: the target exposure f when x < f — the position becomes floor(f·E / p) shares, which adds
  floor((c − (1 − f)·E) / p) shares, i.e. 95 % of the cash when flat — and no trade when x ≥ f
  (a BUY never sells);
- a target exposure τ: clipped to [−f, f];
- SELL and HOLD: unchanged.

The commission comes out of the buffer (0.1 % of 95 % of equity: the cash left is ≈ 4.9 %).
"""

from __future__ import annotations

import math

from harness.overlay.config import SizingConfig
from market.decision import Action, Decision


def sized(decision: Decision, exposure: float, config: SizingConfig) -> Decision:
    """`decision` as the sizing rule executes it, given the exposure x at the fill price."""
    cap = config.invest_fraction
    if decision.action is Action.BUY:
        return Decision(target=cap) if exposure < cap else Decision(action=Action.HOLD)
    if decision.target is not None and abs(decision.target) > cap:
        return Decision(target=math.copysign(cap, decision.target))
    return decision
