"""What the runner records when a framework does not deliver a decision it can execute.

A failed decision is journaled with the fallback that was executed in its place and a
`Failure`: its kind and a one-line message that names the framework, the ticker, the date and
the seed. Kinds:

- `raised`: `decide` raised an exception;
- `timeout`: no answer within the framework's per-decision time limit (`harness.time_limit`);
- `malformed`: `decide` returned something other than one decision per context;
- `invalid`: a decision that is not valid for the task (`harness.decision_checks`);
- `reported`: the framework recorded an error in the decision's trace itself and executed its
  own fallback (e.g. the debate when an LLM call failed);
- `unknown`: a failure journaled by an earlier TradeDuel, which did not record the kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pandas as pd


class FailureKind(str, Enum):
    """Why a decision failed (see the module docstring)."""

    RAISED = "raised"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    INVALID = "invalid"
    REPORTED = "reported"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Failure:
    """A failed decision's kind and its one-line message."""

    kind: FailureKind
    message: str


def decision_place(framework: str, ticker: str, date: pd.Timestamp, seed: int) -> str:
    """`framework ticker date seed s`, the prefix of a failure's message (the time only when it is not midnight)."""
    day = f"{date:%Y-%m-%d}" if date == date.normalize() else str(date)
    return f"{framework} {ticker} {day} seed {seed}"
