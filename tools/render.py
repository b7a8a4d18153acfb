"""`ToolResult`: the typed answer of every tool, and its compact text rendering.

Renderings are sized for a small context window (a 135M model with 2k tokens): a title
line, a CSV-like table of a few rows, an optional one-line summary and note; numbers are
rounded to 5 significant digits and large ones abbreviated (1.23M).
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import BaseModel, Field

Cell = float | int | str | None


def format_cell(value: Cell) -> str:
    """A table cell: 5 significant digits, K/M/B/T for |x| ≥ 10⁴, `na` for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "na"
    if isinstance(value, str):
        return value.replace("\n", " ").replace(",", ";")
    number = float(value)
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e4, "K")):
        if abs(number) >= scale:
            return f"{number / scale:.5g}{suffix}"
    return f"{number:.5g}"


def format_date(stamp: pd.Timestamp) -> str:
    """`YYYY-MM-DD`, with ` HH:MM` when the time of day is not midnight."""
    return f"{stamp:%Y-%m-%d}" if stamp == stamp.normalize() else f"{stamp:%Y-%m-%d %H:%M}"


class ToolResult(BaseModel):
    """A tool's answer: a small table plus summary statistics and a note for the reader."""

    title: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Cell]] = Field(default_factory=list)
    summary: dict[str, float] = Field(default_factory=dict)
    note: str = ""

    def render(self) -> str:
        """Title, table (header + rows), `summary: k=v, ...` and the note, one per line."""
        lines = [self.title]
        if self.rows:
            lines.append(",".join(self.columns))
            lines.extend(",".join(format_cell(cell) for cell in row) for row in self.rows)
        if self.summary:
            lines.append("summary: " + ", ".join(f"{k}={format_cell(v)}" for k, v in self.summary.items()))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


def absent_channel(channel: str) -> ToolResult:
    """The answer when the market carries no `channel` data at all."""
    return ToolResult(title=f"No {channel} data: this market's data source provides none.")
