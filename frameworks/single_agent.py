"""The AlphaQuanter single agent as frameworks (docs/single_agent.md).

- `single_agent`: any backbone of `configs/llm/` with token ids (smollm2, tiny, transformers),
  untrained: the paper's "SA" rows.
- `alphaquanter`: a trained policy by path, a transformers model folder or a LoRA adapter
  folder (`single_agent.checkpoints`):

      python run_benchmark.py +framework@frameworks.alphaquanter=alphaquanter frameworks.alphaquanter.checkpoint=PATH

  For an adapter, `frameworks.alphaquanter.llm=smollm2` names its base (default: the base
  folder the adapter records).

Both play the protocol through the rollout engine (`frameworks.protocol_agent`): stateless,
so the runner fans out every (ticker, date, seed) at once; stochastic only when sampling
(temperature > 0), so greedy rows run the first seed only.
"""

from __future__ import annotations

import json
from typing import Any

from core.errors import ConfigError
from frameworks.protocol_agent import ProtocolAgent
from llm_backends.configs import load_engine
from llm_backends.engine import ChatEngine
from single_agent.checkpoints import checkpoint_engine


def has_token_interface(engine: ChatEngine) -> bool:
    """True when the engine (under a micro-batching wrapper, if any) takes token requests."""
    return callable(getattr(getattr(engine, "inner", engine), "generate_tokens", None))


class SingleAgent(ProtocolAgent):
    """One LLM calls tools and answers BUY/SELL/HOLD; `llm` names a backbone, `checkpoint` a trained policy."""

    def __init__(self, llm: str | None = "smollm2", llm_overrides: dict[str, Any] | None = None,
                 checkpoint: str | None = None, protocol: str = "compact", reward: str = "compact",
                 constrained: bool = True, temperature: float = 0.0, top_p: float = 1.0,
                 max_new_tokens: int | None = None, samples: int = 1) -> None:
        super().__init__(protocol, reward, constrained, temperature, top_p, max_new_tokens, samples)
        overrides = [f"{key}={json.dumps(value)}" for key, value in (llm_overrides or {}).items()]
        if checkpoint is not None:
            engine = checkpoint_engine(checkpoint, llm, overrides)
        elif llm is not None:
            engine = load_engine(llm, overrides)
        else:
            raise ValueError("name a backbone (llm=NAME of configs/llm) or a trained policy (checkpoint=PATH)")
        if not has_token_interface(engine):
            raise ConfigError(f"llm {llm}: {type(engine).__name__} does not take token ids; the single agent plays "
                              "in token ids, which local engines offer (smollm2, tiny, transformers)")
        self.policy = engine

    def policy_identity(self) -> str:
        """The engine's fingerprint: its weights, dtype, tokenizer and chat template."""
        return self.policy.fingerprint()
