"""How many contexts the runner hands a stateless framework at once.

The run's `batch_size` (fan-out: large batches keep a batched LLM backend busy), unless the
framework prefers fewer: a framework may define `preferred_batch_size()` (see
`frameworks.base.TradingFramework`), e.g. the decisions whose conversations fit its engine's
prefix store. Then the n pending contexts go in the fewest chunks of at most that many, each
of ⌈n / ⌈n / limit⌉⌉ but the last (55 decisions at most 13 at a time: 5 chunks of 11, not
4 of 13 and one of 3).
"""

from __future__ import annotations

import math
from typing import Any


def stateless_batch_size(framework: Any, configured: int, pending: int) -> int:
    """The chunk size for `pending` contexts: `configured`, or the even split under the
    framework's preferred batch size when it states one (module docstring)."""
    preferred = getattr(framework, "preferred_batch_size", None)
    wanted = preferred() if callable(preferred) else None
    if wanted is None:
        return configured
    limit = max(1, min(configured, int(wanted)))
    return math.ceil(pending / math.ceil(pending / limit)) if pending > limit else limit
