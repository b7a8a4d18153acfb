"""The optional language-model pretraining stage (`train.pretrain`): the model learns to read the
market's text before it is shown the protocol or rewarded.

A document is one (ticker, day) of the train split: every tool the protocol offers, called with
the protocol's arguments on the day's point-in-time view (`MarketView`) in the protocol's
rendering, its result clipped as an episode clips it and wrapped in the chat template's
tool-response fragment — the text an episode shows after a call — the tools in an order drawn
from the seed. The loss covers every token (next-token prediction).

What a document cannot carry: an answer (no assistant turn is written), a regime label (the
builder is handed (ticker, date) pairs only) or a tool choice that depends on what a channel
says (every offered tool is called on every day). `tests/training/test_pretrain.py` holds
these.

The stage runs in `<output_dir>/pretrain/` as the warm start runs in its folder
(`training.warm_start.run_supervised`: own checkpoints and step log, resumable) and ends by
writing `pretrain/policy/`, where the warm start (or GRPO, without one) starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from datasets import Dataset

from llm_backends.tool_calls import ToolCall
from market.data import MarketData
from market.view import MarketView
from single_agent.offered_tools import protocol_toolset, run_call, ticker_arguments
from single_agent.protocol import Protocol
from single_agent.tokenizer_corpus import TemplateRenderer, tool_response_wrapper
from training.checkpoints import POLICY_DIR

PRETRAIN_DIR = "pretrain"


def pretrain_policy(output_dir: Path) -> Path:
    """Where the pretraining stage writes its final policy folder."""
    return Path(output_dir) / PRETRAIN_DIR / POLICY_DIR


def pretraining_documents(tokenizer: Any, protocol: Protocol, data: MarketData, pairs: list[tuple[str, pd.Timestamp]],
                          seed: int) -> list[str]:
    """One document per (ticker, day) of `pairs` (see the module docstring)."""
    wrap = tool_response_wrapper(TemplateRenderer(tokenizer))
    order = np.random.default_rng(seed)
    documents = []
    for ticker, day in pairs:
        toolset = protocol_toolset(protocol, MarketView(data, day))
        names = list(protocol.tools)
        order.shuffle(names)
        results = []
        for name in names:
            call = ToolCall(id=f"pretrain_{len(results)}", name=name, arguments=ticker_arguments(protocol, name, ticker))
            results.append(wrap(run_call(protocol, toolset, call)))
        documents.append("".join(results))
    return documents


def pretraining_pairs(days: pd.DataFrame, count: int, seed: int) -> list[tuple[str, pd.Timestamp]]:
    """`count` distinct (ticker, date) pairs drawn with `seed` from the `ticker` and `date` columns of `days`
    (any other column, a regime label included, is never read)."""
    pairs = days[["ticker", "date"]]
    chosen = pairs.sample(n=min(count, len(pairs)), random_state=seed)
    return list(chosen.itertuples(index=False, name=None))


def pretraining_dataset(tokenizer: Any, documents: list[str]) -> Dataset:
    """The documents as pre-tokenised examples whose loss covers every token (`assistant_masks` all 1)."""
    rows = []
    for document in documents:
        ids = tokenizer(document, add_special_tokens=False)["input_ids"]
        rows.append({"input_ids": ids, "assistant_masks": [1] * len(ids)})
    return Dataset.from_list(rows)
