"""The language-model pretraining stage: its documents hold no answer, no regime label and no tool
choice (they are the offered tools' results on a day, every tool every day), and a run through
train_single_agent.train pretrains, then warm-starts from the pretrained policy."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from training_runs import fast_config

import train_single_agent
from llm_backends.tiny import TinySpec, ensure_tiny
from llm_backends.tool_calls import ToolCall
from market.view import MarketView
from single_agent.offered_tools import offered_parameters, protocol_toolset, run_call
from single_agent.tags import ANSWER_OPEN, THINK_OPEN
from training.config import ModelConfig
from training.policy_model import load_policy
from training.pretrain import pretrain_policy, pretraining_dataset, pretraining_documents, pretraining_pairs


@pytest.fixture(scope="module")
def tokenizer(cache_root):
    folder = ensure_tiny(TinySpec())
    return load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))[1]


@pytest.fixture(scope="module")
def labelled(market, tickers):
    """Days with a regime column, as `training.prompt_dataset.labelled_days` gives them."""
    rows = [(t, d, regime) for t in tickers for d, regime in zip(market.frame(t).index[40:70],
                                                                 ["bullish", "bearish", "sideways"] * 10)]
    return pd.DataFrame(rows, columns=["ticker", "date", "regime"])


def test_documents_do_not_depend_on_the_regime_labels(tokenizer, compact, market, labelled):
    relabelled = labelled.assign(regime=labelled["regime"].sample(frac=1, random_state=1).to_numpy())
    pairs = pretraining_pairs(labelled, 12, seed=4)
    assert pairs == pretraining_pairs(relabelled, 12, seed=4) == pretraining_pairs(labelled.drop(columns="regime"), 12, seed=4)
    assert all(len(pair) == 2 for pair in pairs)
    assert pretraining_documents(tokenizer, compact, market, pairs, seed=4) == \
        pretraining_documents(tokenizer, compact, market, pretraining_pairs(relabelled, 12, seed=4), seed=4)


def test_a_document_is_every_offered_tool_result_once_and_nothing_the_model_writes(tokenizer, compact, market, labelled):
    pairs = pretraining_pairs(labelled, 6, seed=0)
    documents = pretraining_documents(tokenizer, compact, market, pairs, seed=0)
    for (ticker, day), document in zip(pairs, documents):
        assert ANSWER_OPEN not in document and THINK_OPEN not in document and "<tool_call>" not in document
        assert not re.search(r"<answer>|\b(BUY|SELL|HOLD)\b", document)
        toolset = protocol_toolset(compact, MarketView(market, day))
        for name in compact.tools:
            arguments = {"ticker": ticker} if "ticker" in offered_parameters(compact, name)["properties"] else {}
            result = run_call(compact, toolset, ToolCall(id="x", name=name, arguments=arguments))
            assert document.count(result) == 1, f"{name} on {day.date()}"


def test_the_dataset_puts_every_token_in_the_loss(tokenizer, compact, market, labelled):
    documents = pretraining_documents(tokenizer, compact, market, pretraining_pairs(labelled, 3, seed=0), seed=0)
    for example, document in zip(pretraining_dataset(tokenizer, documents), documents):
        assert example["input_ids"] == tokenizer(document, add_special_tokens=False)["input_ids"]
        assert example["assistant_masks"] == [1] * len(example["input_ids"])


@pytest.mark.slow
def test_a_run_pretrains_then_warm_starts_from_the_pretrained_policy(cache_root, tmp_path):
    output = tmp_path / "run"
    train_single_agent.train(fast_config(output, 1, "train.pretrain.enabled=true", "train.pretrain.documents=16",
                                         "train.pretrain.epochs=1", "train.warm_start.enabled=true",
                                         "train.warm_start.episodes=8", "train.warm_start.epochs=1"))
    steps = pd.read_csv(output / "pretrain" / "steps.csv")
    assert len(steps) == 2 and (pretrain_policy(output) / "config.json").is_file()
    assert (output / "warm_start" / "policy" / "config.json").is_file()
    assert json.loads((output / "run.json").read_text())["started_from"].endswith("warm_start/policy")
