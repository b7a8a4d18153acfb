"""A call that may take at most so many seconds: how a hung decision becomes a recorded failure.

`call_within(seconds, function, *args)` runs `function` on a daemon thread and waits for it at
most `seconds`; past that it raises `TimedOut` and the caller goes on. Python cannot stop a
thread, so the abandoned call keeps running in the background until it returns by itself (its
result is then dropped) or the process ends; a daemon thread never holds the process open at
exit, which `concurrent.futures` workers would. With `seconds` None the call runs on the
caller's thread, unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

Result = TypeVar("Result")


class TimedOut(TimeoutError):
    """The call did not return within its time limit."""


def call_within(seconds: float | None, function: Callable[..., Result], *args: object) -> Result:
    """`function(*args)`, or `TimedOut` when it has not returned after `seconds` (None: no limit).

    An exception raised by `function` is raised here, on the caller's thread."""
    if seconds is None:
        return function(*args)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = function(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
            outcome["error"] = error

    worker = threading.Thread(target=run, name=f"time-limited {getattr(function, '__qualname__', function)}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimedOut(f"no answer within {seconds:g} s (the call was abandoned)")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]
