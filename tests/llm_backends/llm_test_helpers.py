"""Plain helpers shared by the llm_backends tests (imported by module name; pytest puts this folder on sys.path)."""

from __future__ import annotations

PRICE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_market_data",
        "description": "Daily OHLCV bars of a ticker up to a date.",
        "parameters": {
            "type": "object",
            "properties": {"ticker": {"type": "string"}, "end_date": {"type": "string"}},
            "required": ["ticker"],
        },
    },
}


def conversation(text: str) -> list[dict]:
    """A one-turn user conversation."""
    return [{"role": "user", "content": text}]
