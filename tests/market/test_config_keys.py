"""Config keys that nothing takes are refused with one line naming the key and the nearest valid one."""

from __future__ import annotations

import pytest

from core.config_keys import check_target_keys, typed_config
from core.errors import ConfigError
from harness.execution import ExecutionConfig
from llm_backends.build import engine_config
from market.splits import Splits

SPLIT = {"train": {"start": "2020-01-01", "end": "2020-03-31"}, "valid": {"start": "2020-05-01", "end": "2020-06-30"},
         "test": {"start": "2020-08-01", "end": "2020-09-30"}, "gap_bars": 5}


def llm(name: str, **extra) -> dict:
    return {**engine_config(name), **extra}


@pytest.mark.parametrize("check, expected", [
    (lambda: typed_config(ExecutionConfig, {"fee_bp": 0}, "execution"),
     "execution: unknown key 'fee_bp' (did you mean 'fee_bps'?)"),
    (lambda: typed_config(Splits, {**SPLIT, "test": {"start": "2020-08-01", "ende": "2020-09-30"}}, "split"),
     "split.test: unknown key 'ende' (did you mean 'end'?)"),
    (lambda: check_target_keys({"_target_": "frameworks.baselines.macd.MACDCross", "fsat": 3}, "frameworks.macd"),
     "frameworks.macd: unknown key 'fsat' (did you mean 'fast'?)"),
    (lambda: check_target_keys({"_target_": "frameworks.baselines.macd.MACDCross", "colour": 3}, "frameworks.macd"),
     "frameworks.macd: unknown key 'colour' (known keys: fast, signal, slow)"),
    (lambda: check_target_keys({"_target_": "market.synthetic.generate_market", "dayz": 300}, "data"),
     "data: unknown key 'dayz' (did you mean 'days'?)"),
    (lambda: check_target_keys({"_target_": "market.synthetic.generate_market",
                                "channels": {"news": {"snr": 1.0, "per_dya": 2.0}}}, "data"),
     "data.channels.news: unknown key 'per_dya' (did you mean 'per_day'?)"),
    (lambda: check_target_keys({"_target_": "market.sources.records.with_records",
                                "data": {"_target_": "market.sources.files.load_folder", "paht": "x", "tickers": []}},
                               "data"),
     "data.data: unknown key 'paht' (did you mean 'path'?)"),
    (lambda: check_target_keys(llm("smollm2", max_batch=8), "llm"),
     "llm: unknown key 'max_batch' (did you mean 'max_batch_size'?)"),
    (lambda: check_target_keys({"_target_": "support_frameworks.SlowRandom",
                                "engine": llm("tiny", hiden_size=8)}, "frameworks.agent"),
     "frameworks.agent.engine: unknown key 'hiden_size' (did you mean 'hidden_size'?)"),
])
def test_unknown_keys_name_the_nearest_valid_one(check, expected):
    with pytest.raises(ConfigError) as caught:
        check()
    assert str(caught.value) == expected


def test_known_keys_pass_and_keyword_tolerant_targets_take_any_key():
    assert typed_config(ExecutionConfig, {"fee_bps": 0}, "execution").fee_bps == 0
    assert typed_config(Splits, SPLIT, "split").gap_bars == 5
    for name in ("smollm2", "tiny", "openai", "transformers"):
        check_target_keys(llm(name), f"llm/{name}")
    check_target_keys({"_target_": "support_frameworks.SlowRandom", "delay_s": 0.0, "p_buy": 0.5}, "frameworks.slow")


def test_a_bad_value_is_one_line_naming_the_field():
    with pytest.raises(ConfigError, match=r"^execution: ExecutionConfig: fee_bps: Input should be greater"):
        typed_config(ExecutionConfig, {"fee_bps": -1}, "execution")
