"""The provenance table: how each row was obtained, from run.json and the run's config alone."""

from __future__ import annotations

from metrics.provenance import provenance_numbers

INFO = {
    "rows": {
        "SA-x": {"kind": "SA", "template": "single_agent", "backbone": "x", "status": "run"},
        "MA-x": {"kind": "MA", "template": "multi_agent", "backbone": "x", "status": "run"},
        "AQ": {"kind": "trained", "template": "alphaquanter", "status": "run"},
        "AQ-big": {"kind": "trained", "template": "alphaquanter", "status": "not run: no checkpoint for seed 0 (p); train: t"},
    },
    "framework_facts": {
        "finrl_ppo": {"algorithm": "ppo", "timesteps": 10000, "seeds": {"0": {"key": "k", "train_wall_s": 31.4}}},
        "SA-x": {"policy": "model-x", "temperature": 0.0, "samples": 1, "constrained_decoding": False, "protocol": "paper"},
        "MA-x": {"policy": "model-x", "temperature": {"quick": 0.0, "deep": 0.0}, "constrained_decoding": False},
        "AQ": {"policy": "aq-0", "temperature": 0.0, "samples": 1, "constrained_decoding": True, "protocol": "compact",
               "seeds": {"0": {"steps": 150, "max_steps": 150, "wall_s": 2700.0, "converged": True, "convergence": "flat"},
                         "1": {"steps": 90, "max_steps": 150, "wall_s": 1500.0, "converged": False,
                               "convergence": "not converged: stopped at step 90 of 150"}}},
    },
    "framework_fingerprints": {"macd": "", "SA-x": "0123456789abcdef", "AQ": "fedcba9876543210"},
}
CONFIG = {"macd": {"_target_": "frameworks.baselines.macd.MACDCross"},
          "finrl_ppo": {"_target_": "frameworks.rl.finrl.FinRLAgent"},
          "SA-x": {"_target_": "frameworks.single_agent.SingleAgent", "temperature": 0.0}}


def test_every_row_says_how_it_was_obtained():
    ran = ["macd", "finrl_ppo", "SA-x", "MA-x", "AQ"]
    table = provenance_numbers(INFO, CONFIG, ran, {"macd": [0], "finrl_ppo": [0], "SA-x": [0], "MA-x": [0], "AQ": [0, 1]})
    assert list(table.index) == [*ran, "AQ-big"]
    assert list(table["kind"]) == ["rule", "RL (FinRL)", "SA", "MA", "trained", "trained"]
    assert table.loc["macd", "fingerprint"] == "-" and table.loc["SA-x", "fingerprint"] == "0123456789ab"
    assert table.loc["SA-x", "decoding"] == "greedy, free, paper protocol"
    assert table.loc["MA-x", "decoding"] == "greedy, free" and table.loc["MA-x", "backbone"] == "model-x"
    assert table.loc["finrl_ppo", "training"] == "10000 steps per seed; training wall seed 0: policy k, 31 s"
    assert table.loc["AQ", "training"] == ("seed 0: 150 steps of 150, 2700 s wall, flat; "
                                           "seed 1: 90 steps of 150, 1500 s wall, not converged: stopped at step 90 of 150")
    assert table.loc["AQ", "converged"] == "not converged" and table.loc["AQ", "seeds"] == "0, 1"
    assert table.loc["AQ-big", "status"].startswith("not run: no checkpoint for seed 0")
    assert table.loc["AQ-big", "seeds"] == "-" and table.loc["SA-x", "status"] == "run"
