"""`ToolSet`: the shared tools bound to one point-in-time `MarketView`, with call accounting.

`call(name, arguments)` validates the arguments against the tool's model, flags the call as
look-ahead when a date argument is after the view's date (the tool clamps it), runs the tool,
and appends a `ToolCallRecord` (name, arguments as given, latency, result size, look-ahead
flag, error) to `records`. Mistakes an agent can fix — an unknown tool, bad or missing arguments, an
unknown ticker — come back as a readable `Error: ...` text, never as an exception. With
`terse`, results are written in the terse rendering (`tools.render`: the same facts, fewer
characters).
"""

from __future__ import annotations

import json
import time
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import ValidationError

from core.errors import ConfigError, DataError
from market.decision import ToolCallRecord
from market.view import MarketView
from tools.company import (
    get_balance_sheet,
    get_cashflow,
    get_dividends,
    get_earnings_estimate,
    get_income_statements,
    get_insider_transactions,
)
from tools.guard import ToolInputError, asks_future
from tools.macro import get_macro_indicators
from tools.prices import get_market_data, get_stock_indicators
from tools.spec import ToolSpec
from tools.text_channels import get_news_data, get_reddit_data

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec for spec in map(ToolSpec.from_function, (
        get_market_data, get_stock_indicators, get_news_data, get_reddit_data, get_macro_indicators,
        get_balance_sheet, get_cashflow, get_income_statements, get_insider_transactions,
        get_dividends, get_earnings_estimate,
    ))
}
"""Every tool, by name, in the paper's order."""

REQUIRED_TOOLS = ("get_market_data", "get_stock_indicators")

MALFORMED_ERRORS = ("unknown tool ", "arguments of ", "bad arguments for ")
"""How the errors of malformed calls begin (an unknown tool, arguments that are not an object or fail the
tool's schema), as `ToolSet` writes them; other errors (no data, a bad ticker) come from a well-formed call."""


def is_malformed(record: ToolCallRecord) -> bool:
    """True when `record` is a call of an unknown tool or with arguments that fail the tool's schema."""
    return record.error is not None and record.error.startswith(MALFORMED_ERRORS)


def _validation_message(name: str, error: ValidationError) -> str:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors())
    return f"bad arguments for {name}: {problems}"


class ToolSet:
    """The tools `names` (default: all) bound to `view`; every call is recorded in `records`;
    results in the terse rendering when `terse`."""

    def __init__(self, view: MarketView, names: list[str] | None = None, terse: bool = False):
        unknown = sorted(set(names or ()) - set(TOOLS))
        if unknown:
            raise ConfigError(f"unknown tool(s) {', '.join(unknown)}; tools are {', '.join(TOOLS)}")
        self.view = view
        self.specs = {name: TOOLS[name] for name in (names or TOOLS)}
        self.records: list[ToolCallRecord] = []
        self.terse = terse

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def _run(self, name: str, arguments: dict[str, Any]) -> tuple[str | None, bool, str | None]:
        """(text, look-ahead flag, error) of one call; the text is None when there is an error."""
        spec = self.specs.get(name)
        if spec is None:
            return None, False, f"unknown tool {name!r}; available tools: {', '.join(self.specs)}"
        if not isinstance(arguments, dict):
            return None, False, f"arguments of {name} must be a JSON object, got {type(arguments).__name__}"
        try:
            parsed = spec.args_model.model_validate(arguments).model_dump()
            lookahead = asks_future(parsed, list(spec.date_fields), self.view)
        except ValidationError as error:
            return None, False, _validation_message(name, error)
        except ToolInputError as error:
            return None, False, str(error)
        try:
            text = spec.function(self.view, **parsed).render(terse=self.terse)
        except (ToolInputError, ConfigError, DataError) as error:
            return None, lookahead, str(error)  # a future date stays flagged even when the call fails
        if lookahead:
            text += f"\nnote: dates after the current date {self.view.asof:%Y-%m-%d} are not available; used it instead."
        return text, lookahead, None

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Run tool `name` with `arguments`; the text the agent reads (an `Error: ...` line on a mistake)."""
        arguments = {} if arguments is None else arguments
        started = time.perf_counter()
        text, lookahead, error = self._run(name, arguments)
        text = f"Error: {error}" if error is not None else text
        self.records.append(ToolCallRecord(
            name=name, arguments=_jsonable(arguments), latency_s=time.perf_counter() - started,
            result_chars=len(text), lookahead=lookahead, error=error))
        return text

    def schemas(self) -> list[dict[str, Any]]:
        """The tools in the OpenAI/Qwen function-calling format (for `apply_chat_template(tools=...)`)."""
        return [spec.schema() for spec in self.specs.values()]

    def langchain_tools(self) -> list[StructuredTool]:
        """The tools as LangChain `StructuredTool`s; their calls go through `call` and are recorded."""
        return [
            StructuredTool.from_function(
                func=lambda _name=name, **kwargs: self.call(_name, kwargs),
                name=name, description=spec.description, args_schema=spec.args_model,
                handle_validation_error=lambda error, _name=name: self._rejected(_name, error))
            for name, spec in self.specs.items()
        ]

    def _rejected(self, name: str, error: ValidationError) -> str:
        """Record and answer a call that LangChain's argument validation turned away."""
        message = _validation_message(name, error)
        text = f"Error: {message}"
        self.records.append(ToolCallRecord(name=name, result_chars=len(text), error=message))
        return text


def _jsonable(arguments: Any) -> dict[str, Any]:
    """`arguments` as a JSON-safe dict (non-serialisable values become their repr)."""
    if not isinstance(arguments, dict):
        return {"_raw": repr(arguments)}
    return json.loads(json.dumps(arguments, default=repr))
