"""`ToolResult`: the typed answer of every tool, and its compact text rendering.

Renderings are sized for a small context window (a 135M model with 2k tokens): a title
line, a CSV-like table of a few rows, an optional one-line summary and note; numbers are
rounded to 5 significant digits and large ones abbreviated (1.23M).

The terse rendering (`render(terse=True)`, for the tiny models' protocols) writes the same
facts in fewer characters: numbers of magnitude below 1 without their leading zero (`.423`,
`-.05`), the summary's entries separated by a space instead of `, `. `parse_rendering` reads
either rendering back into the same title, columns, cells and summary.
"""

from __future__ import annotations

import math
import re

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


def terse_cell(value: Cell) -> str:
    """`format_cell` without the leading zero of a number of magnitude below 1 (`0.423` → `.423`)."""
    text = format_cell(value)
    if isinstance(value, str) or text == "na":
        return text
    return re.sub(r"^(-?)0\.", r"\1.", text)


def format_date(stamp: pd.Timestamp) -> str:
    """`YYYY-MM-DD`, with ` HH:MM` when the time of day is not midnight."""
    return f"{stamp:%Y-%m-%d}" if stamp == stamp.normalize() else f"{stamp:%Y-%m-%d %H:%M}"


SUMMARY_PREFIX = "summary: "
_SCALES = {"T": 1e12, "B": 1e9, "M": 1e6, "K": 1e4}
"""The abbreviations of `format_cell`, as it writes them (K stands for 10⁴ there)."""


class ToolResult(BaseModel):
    """A tool's answer: a small table plus summary statistics and a note for the reader."""

    title: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Cell]] = Field(default_factory=list)
    summary: dict[str, float] = Field(default_factory=dict)
    note: str = ""

    def render(self, terse: bool = False) -> str:
        """Title, table (header + rows), `summary: k=v, ...` and the note, one per line; with
        `terse`, cells by `terse_cell` and summary entries separated by a space."""
        cell, separator = (terse_cell, " ") if terse else (format_cell, ", ")
        lines = [self.title]
        if self.rows:
            lines.append(",".join(self.columns))
            lines.extend(",".join(cell(value) for value in row) for row in self.rows)
        if self.summary:
            lines.append(SUMMARY_PREFIX + separator.join(f"{k}={cell(v)}" for k, v in self.summary.items()))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


def read_cell(text: str) -> float | str | None:
    """The value of a rendered cell: a number (abbreviations undone), None for `na`, else the text."""
    if text == "na":
        return None
    scale = _SCALES.get(text[-1:], 1.0)
    try:
        return float(text[:-1] if scale != 1.0 else text) * scale
    except ValueError:
        return text


def summary_entries(text: str) -> dict[str, str]:
    """The `summary:` line of a rendered result (either rendering) as key → cell text; empty without one."""
    line = next((line for line in text.split("\n") if line.startswith(SUMMARY_PREFIX)), None)
    if line is None:
        return {}
    return dict(entry.partition("=")[::2] for entry in re.split(r",? ", line.removeprefix(SUMMARY_PREFIX)))


def parse_rendering(text: str) -> ToolResult:
    """A rendered result (`ToolResult.render`, terse or not) read back: title, columns, cells
    (`read_cell`), summary and note. Summary values that are not numbers are left out."""
    lines = text.split("\n")
    summary_at = next((i for i, line in enumerate(lines) if line.startswith(SUMMARY_PREFIX)), None)
    table = lines[1:summary_at]
    note = "\n".join(lines[summary_at + 1:]) if summary_at is not None else ""
    columns = table[0].split(",") if table else []
    rows = [[read_cell(cell) for cell in line.split(",", len(columns) - 1)] for line in table[1:]]
    summary = {k: v for k, v in ((k, read_cell(v)) for k, v in summary_entries(text).items()) if isinstance(v, float)}
    return ToolResult(title=lines[0], columns=columns, rows=rows, summary=summary, note=note)


def absent_channel(channel: str) -> ToolResult:
    """The answer when the market carries no `channel` data at all."""
    return ToolResult(title=f"No {channel} data: this market's data source provides none.")
