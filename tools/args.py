"""Argument types shared by the tools: each carries its description and bounds once.

The pydantic `Field` in each alias feeds the validation, the JSON schema and the LangChain
argument schema alike; `DateArg` marks the arguments that the look-ahead guard clamps.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field


class DateArg:
    """Marker of a date argument: the guard clamps a date after the view's date to it."""


Ticker = Annotated[str, Field(description="Stock ticker symbol, e.g. NVDA.", min_length=1, max_length=12)]
EndDate = Annotated[
    str | None,
    Field(description="Last date to include, YYYY-MM-DD; defaults to the current date "
                      "(dates after it are not allowed)."),
    DateArg(),
]
TradingDays = Annotated[int, Field(description="Number of trading days to show.", ge=1, le=60)]
CalendarDays = Annotated[int, Field(description="Calendar days to look back from end_date.", ge=1, le=730)]
Limit = Annotated[int, Field(description="Maximum number of items to show (most recent first).", ge=1, le=20)]
Periods = Annotated[int, Field(description="Number of most recent reporting periods to show.", ge=1, le=4)]
