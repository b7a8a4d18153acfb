"""A FineFT checkpoint folder (`comparators.checkpoint`) loaded as a ready policy: model, standardiser, facts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from comparators.checkpoint import load_checkpoint
from comparators.features import Standardiser
from comparators.fineft.policy import FineFTModel


def build_model(config: dict) -> FineFTModel:
    """The model a checkpoint's config describes."""
    model = FineFTModel(config["features"], np.asarray(config["grid"]), config["learners"], config["dynamics"],
                        config["hidden"], config["vae_latent"], config["vae_hidden"])
    model.conservative = config["conservative"]
    return model


@dataclass
class FineFTCheckpoint:
    """A loaded FineFT: the model (eval mode), the train-split standardiser, config, facts and fingerprint."""

    model: FineFTModel
    standardiser: Standardiser
    config: dict
    facts: dict
    fingerprint: str

    @classmethod
    def load(cls, folder: str | Path) -> FineFTCheckpoint:
        loaded = load_checkpoint(folder, build_model)
        return cls(loaded.model, Standardiser.from_dict(loaded.config["standardiser"]), loaded.config, loaded.facts,
                   loaded.fingerprint)
