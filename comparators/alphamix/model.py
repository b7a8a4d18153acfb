"""The trained AlphaMix: its pool of BatchEnsemble experts, the router and the greedy selection, one module.

`AlphaMixModel.from_config(config)` rebuilds the architecture from a checkpoint's config
(`comparators.checkpoint`):

    input_size      window × features (the flattened window an expert reads)
    feature_size    features per day (the router reads the last day's)
    hidden, ensemble_size, experts      the experts' width, members each, pool size
    router_hidden, logit_scale, threshold   the router (comparators.alphamix.router)
    greedy          indices of the greedy selective ensemble's experts
    features        the feature spec and the train-split standardiser (comparators.alphamix.data)

The experts are ordered (groups 1..G for the router) by validation accuracy, best first.
`predict` gives each stock's up-probability under a mixture rule: `router` (as needed), `greedy`
(mean logits of the greedy selection) or `mean` (mean logits of the whole pool), and the number
of experts that made it.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from comparators.alphamix.batch_ensemble import BatchEnsembleMLP
from comparators.alphamix.router import Router, as_needed
from comparators.alphamix.selection import up_probability
from core.errors import ConfigError

Mixture = Literal["router", "greedy", "mean"]
MIXTURES: tuple[str, ...] = ("router", "greedy", "mean")


class AlphaMixModel(nn.Module):
    """The expert pool, the router and the config that rebuilds them (module docstring)."""

    def __init__(self, config: dict):
        super().__init__()
        self.config = dict(config)
        self.experts = nn.ModuleList(BatchEnsembleMLP(config["input_size"], config["hidden"], config["ensemble_size"])
                                     for _ in range(config["experts"]))
        self.router = Router(config["feature_size"], config["router_hidden"], config["logit_scale"])

    @classmethod
    def from_config(cls, config: dict) -> AlphaMixModel:
        return cls(config)

    def group_logits(self, x: torch.Tensor) -> torch.Tensor:
        """[B, input] → [G, B, 2]: every expert's (members' mean) logits."""
        return torch.stack([expert.mean_logits(x) for expert in self.experts])

    @torch.no_grad()
    def predict(self, x: torch.Tensor, last: torch.Tensor, mixture: Mixture = "router") -> tuple[torch.Tensor, torch.Tensor]:
        """(up-probability [B], experts used [B]) of windows `x` [B, input] with last-day features `last` [B, F]."""
        groups = self.group_logits(x)
        if mixture == "router":
            logits, used = as_needed(self.router, last, groups, float(self.config["threshold"]))
        elif mixture == "greedy":
            members = list(self.config["greedy"])
            logits, used = groups[members].mean(dim=0), torch.full((x.shape[0],), len(members))
        elif mixture == "mean":
            logits, used = groups.mean(dim=0), torch.full((x.shape[0],), groups.shape[0])
        else:
            raise ConfigError(f"mixture {mixture!r}: it must be one of {', '.join(MIXTURES)}")
        return up_probability(logits), used
