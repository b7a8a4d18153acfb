"""What a framework's decisions depend on, hashed into the journal key.

Three inputs: the framework's resolved config (its hash), the framework's own fingerprint
(`TradingFramework.fingerprint()`: for an LLM framework its weights, tokenizer, template,
prompt files and grammar) and the market data it can read. A change in any of them gives a
new key, so journaled decisions are reused only when all three are the same.

The data part: a decision on a day up to the window end `end` reads, through its
`MarketView`, the bars of any ticker of the market dated ≤ `end` and the records public by
the close of `end`. `data_fingerprint` hashes exactly that, one digest per part
(`bars:NVDA`, `records:news`, `decision_time`), so that a changed part can be named. Data
after `end` is left out: appending bars to a file reuses every decision. Hashing uses
`pandas.util.hash_pandas_object` (vectorised; milliseconds for the embedded market).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import pandas as pd

from market.data import MarketData
from market.view import MarketView


def frame_digest(frame: pd.DataFrame) -> str:
    """SHA-256 (16 hex digits) of a frame's index, values, column names and dtypes."""
    digest = hashlib.sha256(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()[:16]


def data_fingerprint(data: MarketData, end: pd.Timestamp) -> dict[str, str]:
    """{part: digest} of the bars dated ≤ `end` and the records public by `end`'s decision time."""
    cutoff = MarketView(data, end).cutoff
    parts = {f"bars:{ticker}": frame_digest(data.bars[ticker].loc[:end]) for ticker in data.tickers}
    for channel, frame in sorted(data.records.items()):
        visible = frame.loc[frame["available_at"] <= cutoff] if "available_at" in frame.columns else frame
        parts[f"records:{channel}"] = frame_digest(visible)
    parts["decision_time"] = str(data.decision_time)
    return parts


@dataclass(frozen=True)
class DecisionInputs:
    """The inputs of one framework's decisions in a run; `key` is their journal key."""

    config_hash: str
    fingerprint: str = ""
    data: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """SHA-256 (16 hex digits) of all three inputs."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def changes_from(self, before: DecisionInputs) -> list[str]:
        """What differs from `before`: "config", "fingerprint" and the data parts, in that order."""
        changed = ["config"] if self.config_hash != before.config_hash else []
        if self.fingerprint != before.fingerprint:
            changed.append("fingerprint")
        parts = dict.fromkeys([*before.data, *self.data])
        return changed + [part for part in parts if before.data.get(part) != self.data.get(part)]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DecisionInputs:
        return cls(**json.loads(text))
