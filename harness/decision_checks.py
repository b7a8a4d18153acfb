"""Is a framework's output a decision the task can execute? Checked before it is journaled.

`decision_problem(decision, config)` returns why a framework's output cannot be journaled
and executed under the task's config (`harness.tasks`: the trading task's `ExecutionConfig`,
`PortfolioConfig`, `FuturesConfig`), or None when it can; `stored_form` does the same checks
and also returns the JSON text that passed check 4, which the runner hands to the journal so
that a decision is serialised once. The runner turns a problem into a recorded failure
(`harness.failures`, kind `invalid`) and executes the task's fallback; it applies checks 1 to 3
(`task_problem`) to every journaled decision it reads back, so a row written by an earlier
TradeDuel or under other rules is decided again instead of breaking the run.

The checks, in order:

1. the output is a `Decision` with a `Trace` (a plugin may return anything);
2. the task's own check, one function per task kind (`TASK_CHECKS`, by the config's `mode`):
   - `discrete` (BUY/SELL/HOLD, the paper's rules): `action` is an `Action`, nothing else set;
   - `target` (target exposure): `target` is a finite number within the cap,
     [-max_leverage, max_leverage] with `allow_short`, else [0, max_leverage]; nothing else set;
   - `futures` (target leverage of a perpetual): as `target`, or HOLD (keep the position);
   - `weights` (the portfolio task): HOLD (keep the holdings), or `weights` whose values are
     finite numbers summing, with the `CASH` weight, to 1 within `weight_tolerance`; no weight
     below 0 unless `allow_short` (cash below 0 only when `max_gross` > 1); the gross weight
     Σ|w_i| of the instruments at most `max_gross`. Whether the instruments are in the
     universe and the pool of the day is the task's scope check (`Task.scope_problem`);
3. `confidence`, when given, is a finite number;
4. the decision survives the journal: its JSON form validates as a `Decision` again. This
   catches what `Decision.model_construct` or an assignment let through without validation
   (a value of the wrong type, a trace whose extras cannot be stored). Reading a text back is a
   pure function of the text, so its outcome is memoised for short texts (`READ_BACK_MEMO_CHARS`):
   a rule baseline returns a handful of distinct decisions over thousands of dates, and the
   validation cost more than the rule's decision.

Pydantic validates a `Decision` built the normal way, but `model_construct` and attribute
assignment skip that, and NaN or infinite numbers pass pydantic's float fields.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from core.errors import one_line
from market.decision import Action, Decision, Trace

CASH = "CASH"
"""The name of the cash weight in a portfolio decision's `weights`."""

TaskCheck = Callable[[Decision, Any], "str | None"]

READ_BACK_MEMO_CHARS = 4096
"""Longest JSON text whose read-back outcome is memoised (a rule's decision with an empty trace is
about 180 characters; LLM traces are longer, unique, and cost seconds to make anyway)."""
READ_BACK_MEMO_SIZE = 256
"""Distinct texts memoised (least recently used first out): at most 1 MiB held."""


def _finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _other_kind(decision: Decision, takes: str, *allowed: str) -> str | None:
    """Why `decision` sets a field other than `allowed` (a task taking `takes`), or None."""
    for name in ("action", "target", "weights"):
        value = getattr(decision, name, None)
        if name not in allowed and value is not None:
            shown = value.value if isinstance(value, Action) else repr(value)
            return f"{'an' if name == 'action' else 'a'} {name} ({shown}) where the task takes {takes}"
    return None


def check_action(decision: Decision, execution: Any) -> str | None:
    """The discrete task: one of BUY, SELL, HOLD and nothing else."""
    if decision.target is not None:
        return f"a target ({decision.target!r}) in discrete execution mode, which takes an action"
    if (problem := _other_kind(decision, "an action", "action")) is not None:
        return problem
    if not isinstance(decision.action, Action):
        names = ", ".join(a.value for a in Action)
        return "no action" if decision.action is None else f"action {decision.action!r} is not one of {names}"
    return None


def check_target(decision: Decision, execution: Any) -> str | None:
    """The target task: a finite target exposure within the leverage cap (and not short unless shorts are allowed), no action."""
    if decision.action is not None:
        shown = decision.action.value if isinstance(decision.action, Action) else repr(decision.action)
        return f"an action ({shown}) in target execution mode, which takes a target exposure"
    if (problem := _other_kind(decision, "a target exposure", "target")) is not None:
        return problem
    target = decision.target
    if not _finite_number(target):
        return "no target" if target is None else f"target {target!r} is not a finite number"
    low = -execution.max_leverage if execution.allow_short else 0.0
    if not low <= target <= execution.max_leverage:
        shorts = "" if execution.allow_short else " (execution.allow_short is false)"
        return f"target {target:g} is outside [{low:g}, {execution.max_leverage:g}]{shorts}"
    return None


def _hold(decision: Decision) -> bool:
    return decision.action is Action.HOLD and decision.target is None and decision.weights is None


def check_futures(decision: Decision, config: Any) -> str | None:
    """The futures task: HOLD, or a finite target leverage within [-max_leverage, max_leverage] (shorts when allowed)."""
    if _hold(decision):
        return None
    if decision.action is not None and decision.target is None:
        return f"action {getattr(decision.action, 'value', decision.action)} in the futures task, which takes a target leverage or HOLD"
    return check_target(decision, config)


def check_weights(decision: Decision, config: Any) -> str | None:
    """The portfolio task: HOLD, or weights on cash + instruments (module docstring, check 2)."""
    if _hold(decision):
        return None
    if (problem := _other_kind(decision, "weights (or HOLD)", "weights")) is not None:
        return problem
    weights = decision.weights
    if not isinstance(weights, dict) or not weights:
        return "no weights" if not weights else f"weights {weights!r} are not a mapping of instrument to weight"
    for name, value in weights.items():
        if not isinstance(name, str) or not _finite_number(value):
            return f"weight of {name!r} is {value!r}, not a finite number"
    total = sum(weights.values())
    if abs(total - 1.0) > config.weight_tolerance:
        return (f"weights sum to {total:.6g} with {CASH}; they must sum to 1 within {config.weight_tolerance:g} "
                f"(name the cash weight as {CASH})")
    risky = {name: w for name, w in weights.items() if name != CASH}
    negative = [name for name, w in risky.items() if w < 0]
    if negative and not config.allow_short:
        return f"weight of {negative[0]} is {risky[negative[0]]:g} < 0 (task.allow_short is false)"
    if weights.get(CASH, 0.0) < -config.weight_tolerance and config.max_gross <= 1:
        return f"cash weight {weights[CASH]:g} < 0: borrowing needs task.max_gross > 1"
    gross = sum(abs(w) for w in risky.values())
    if gross > config.max_gross + config.weight_tolerance:
        return f"gross weight {gross:.6g} exceeds task.max_gross {config.max_gross:g}"
    return None


TASK_CHECKS: dict[str, TaskCheck] = {"discrete": check_action, "target": check_target,
                                     "futures": check_futures, "weights": check_weights}
"""Task config `mode` -> the check of its decisions."""


def task_problem(decision: object, execution: Any) -> str | None:
    """Checks 1 to 3 of the module docstring: why `decision` cannot be executed under `execution`, or None.
    Enough for a decision read back from the journal, which has survived its JSON form."""
    if not isinstance(decision, Decision):
        return f"returned {type(decision).__name__}, not a Decision"
    if not isinstance(decision.trace, Trace):
        return f"its trace is {type(decision.trace).__name__}, not a Trace"
    problem = TASK_CHECKS[execution.mode](decision, execution)
    if problem is None and decision.confidence is not None and not _finite_number(decision.confidence):
        return f"confidence {decision.confidence!r} is not a finite number"
    return problem


def decision_problem(decision: object, execution: Any) -> str | None:
    """Why `decision` cannot be journaled and executed under `execution` (see the module docstring); None when it can."""
    return stored_form(decision, execution)[1]


def stored_form(decision: object, execution: Any) -> tuple[str | None, str | None]:
    """(`decision` as the journal stores it, None) when it can be journaled and executed under `execution`;
    (None, why not) when it cannot (checks 1 to 4 of the module docstring)."""
    problem = task_problem(decision, execution)
    if problem is not None:
        return None, problem
    try:
        payload = decision.model_dump_json()
    except Exception as error:  # noqa: BLE001 - any failure to store it is the decision's problem
        return None, _unstorable(error)
    problem = _read_back_memo(payload) if len(payload) <= READ_BACK_MEMO_CHARS else _read_back(payload)
    return (payload, None) if problem is None else (None, problem)


def _read_back(payload: str) -> str | None:
    """Check 4 on a decision's JSON text: why it does not validate as a `Decision` again, or None."""
    try:
        Decision.model_validate_json(payload)
    except Exception as error:  # noqa: BLE001 - any failure to read it back is the decision's problem
        return _unstorable(error)
    return None


_read_back_memo = functools.lru_cache(maxsize=READ_BACK_MEMO_SIZE)(_read_back)


def _unstorable(error: Exception) -> str:
    return f"it cannot be stored and read back: {one_line(error)}"
