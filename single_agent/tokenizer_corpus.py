"""The text a subword vocabulary of the tiny family is trained on: the protocol's own text and
the synthetic market's tool results, generated here, never downloaded.

`market_corpus()` renders, with the embedded (byte-level) tiny tokenizer's chat template:

- the prompt of every protocol in `PROTOCOLS` (system message with the offered tool schemas,
  user message) for each corpus ticker on a few dates;
- one call turn per offered tool and ticker, as the scripted expert writes it (terse and full
  thinks name the tool, nothing else);
- the answer format once per action (`<answer>BUY</answer>`, `SELL`, `HOLD`: each equally
  often, so the vocabulary holds no prior) after the expert's fixed terse think;
- every tool's result, in both renderings and with both its own and the protocols' default
  arguments, on `DAYS` days of a synthetic market generated with `MARKET` (its own seed, not a
  benchmark's), each wrapped in the chat template's tool-response fragment.

The corpus holds text only: no answer tied to a day, no regime label, no tool choice that
depends on what a channel says. It is a pure function of the code and configs it reads, so
`corpus_digest()` names it in the tiny model's cache key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from typing import Any

import pandas as pd

from llm_backends.messages import for_template
from llm_backends.tiny import train_tokenizer
from llm_backends.tool_calls import render_tool_call
from market.decision import Action
from market.synthetic import generate_market
from market.view import MarketView
from single_agent.expert import TERSE_ANSWER_THINK
from single_agent.fragments import fragment_text
from single_agent.offered_tools import call_arguments, offered_schemas, ticker_arguments
from single_agent.prompting import initial_conversation
from single_agent.protocol import Protocol, load_protocol
from single_agent.tags import ANSWER_CLOSE, ANSWER_OPEN, THINK_CLOSE, THINK_OPEN
from tools import TOOLS, ToolSet

PROTOCOLS = ("compact", "paper")
TICKERS = ("ALFA", "BRVO", "CHRL", "DLTA")
MARKET: dict[str, Any] = {"tickers": list(TICKERS), "start": "2016-01-01", "days": 400, "seed": 9_173,
                          "alpha_vol": 0.02, "channels": {"news": {"snr": 9.0, "per_day": 3.0}}}
"""The synthetic market the tool results are rendered from (market.synthetic knobs; its own seed)."""
DAYS = 8
"""Decision days per ticker, evenly spaced after the first 100 bars (the indicators' history)."""
_CONTENT = "\u2063tool-result\u2063"
"""Stands for a result in the rendered tool-response fragment (the template writes content verbatim)."""


class TemplateRenderer:
    """A tokenizer's chat template without a model: what `fragments.Renderer` and a scripted
    policy's renderer (`scripted_policy.ScriptedPolicy`) need, rendered as the engines render."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.eos_ids = [tokenizer.eos_token_id]

    def render(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        return self.tokenizer.apply_chat_template(for_template(conversation), tools=tools or None,
                                                  add_generation_prompt=True, tokenize=False)

    def render_ids(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        return self.tokenizer(self.render(conversation, tools), add_special_tokens=False)["input_ids"]


def _calls(protocol: Protocol, ticker: str) -> list[str]:
    """One call turn per offered tool, with a terse and a full think that name the tool."""
    turns = []
    for tool in protocol.tools:
        arguments = ticker_arguments(protocol, tool, ticker)
        for think in (f"Next: {tool}.", f"Deciding on {ticker}. Next: {tool}."):
            turns.append(f"{THINK_OPEN}{think}{THINK_CLOSE}\n{render_tool_call(tool, arguments)}")
    return turns


def tool_response_wrapper(renderer: TemplateRenderer) -> Callable[[str], str]:
    """text -> the chat template's tool-response fragment holding it, as an episode shows a result."""
    wrapper = fragment_text(renderer, [{"role": "tool", "name": "tool", "content": _CONTENT}])
    return lambda text: wrapper.replace(_CONTENT, text)


def _results(renderer: TemplateRenderer, protocols: list[Protocol], data: Any, day: pd.Timestamp,
             ticker: str) -> list[str]:
    """Every tool's result for `ticker` on `day`, both renderings, own and protocol defaults, in the template."""
    wrap = tool_response_wrapper(renderer)
    texts = []
    for terse in (False, True):
        toolset = ToolSet(MarketView(data, day), terse=terse)
        for name, spec in TOOLS.items():
            own = {"ticker": ticker} if "ticker" in spec.args_model.model_fields else {}
            variants = [own] + [call_arguments(p, name, own) for p in protocols if name in p.tools]
            for arguments in {repr(a): a for a in variants}.values():
                texts.append(wrap(toolset.call(name, arguments)))
    return texts


@cache
def market_corpus() -> tuple[str, ...]:
    """The corpus texts (see the module docstring), rendered with the embedded tiny tokenizer's
    chat template (Qwen2.5's)."""
    renderer = TemplateRenderer(train_tokenizer(512))
    data = generate_market(**MARKET)
    protocols = [load_protocol(name) for name in PROTOCOLS]
    texts: list[str] = []
    for ticker in TICKERS:
        index = data.frame(ticker).index[100:]
        days = index[:: max(1, len(index) // DAYS)][:DAYS]
        for protocol in protocols:
            for day in days:
                texts.append(renderer.render(initial_conversation(protocol, ticker, day), offered_schemas(protocol)))
            texts.extend(_calls(protocol, ticker))
        for day in days:
            texts.extend(_results(renderer, protocols, data, day, ticker))
    texts.extend(f"{THINK_OPEN}{TERSE_ANSWER_THINK}{THINK_CLOSE}\n{ANSWER_OPEN}{action.value}{ANSWER_CLOSE}"
                 for action in Action)
    return tuple(texts)


def corpus_digest(texts: tuple[str, ...]) -> str:
    """SHA-256 (hex) over the corpus texts, each followed by a NUL byte."""
    return hashlib.sha256("".join(f"{text}\0" for text in texts).encode()).hexdigest()
