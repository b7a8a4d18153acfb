"""The fingerprint of a one-engine LLM framework: what its decisions depend on besides its config.

    fingerprint = SHA-256 of the canonical JSON (sorted keys) of
                  {engine: the engine's fingerprint (weights, tokenizer, template),
                   prompts: the prompt templates' digest, grammars: each answer grammar,
                   settings: the framework's settings}
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel

from llm_backends.engine import ChatEngine


def llm_fingerprint(engine: ChatEngine, prompts: str, grammars: dict[str, str | None], settings: BaseModel) -> str:
    """SHA-256 hex digest over the engine, prompts, grammars and settings (module docstring)."""
    facts = {"engine": engine.fingerprint(), "prompts": prompts, "grammars": grammars,
             "settings": settings.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
