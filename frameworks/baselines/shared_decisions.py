"""A rule's decisions for a batch: one `Decision` object per distinct action.

A rule's decision is its action and an empty trace, so a batch of thousands of contexts needs
three objects, not thousands: building each costs a pydantic validation, and the runner checks
and serialises each distinct object of a batch once (`harness.runner`, `stored_form` by object).
Decisions that are one object must stay unmodified after they are returned, as every decision.
"""

from __future__ import annotations

from collections.abc import Iterable

from market.decision import Action, Decision


def shared_decisions(actions: Iterable[Action]) -> list[Decision]:
    """One decision per action of `actions`, in order; equal actions share one `Decision`."""
    actions = list(actions)
    made = {action: Decision(action=action) for action in set(actions)}
    return [made[action] for action in actions]
