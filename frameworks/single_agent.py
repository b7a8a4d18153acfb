"""The AlphaQuanter single agent as frameworks (docs/single_agent.md).

- `single_agent`: any engine of the `llm` config group with token ids (smollm2, tiny, transformers),
  untrained: the paper's "SA" rows.
- `alphaquanter`: a trained policy by path, a transformers model folder or a LoRA adapter
  folder (`single_agent.checkpoints`):

      python run_benchmark.py +framework@frameworks.alphaquanter=alphaquanter frameworks.alphaquanter.checkpoint=PATH

  For an adapter, `llm@frameworks.alphaquanter.llm=smollm2` names its base (default: the base
  folder the adapter records).

Both play the protocol through the rollout engine (`frameworks.protocol_agent`): stateless,
so the runner fans out every (ticker, date, seed) at once; stochastic only when sampling
(temperature > 0), so greedy rows run the first seed only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from configs import require_composed
from core.errors import ConfigError
from frameworks.protocol_agent import ProtocolAgent
from llm_backends.build import LLM_GROUP, build_engine
from llm_backends.engine import ChatEngine
from single_agent.checkpoints import checkpoint_engine, folder_engine
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig


def has_token_interface(engine: ChatEngine) -> bool:
    """True when the engine (under a micro-batching wrapper, if any) takes token requests."""
    return callable(getattr(getattr(engine, "inner", engine), "generate_tokens", None))


class SingleAgent(ProtocolAgent):
    """One LLM calls tools and answers BUY/SELL/HOLD; `llm` is a composed engine config, `checkpoint` a trained policy.

    `protocol`, `reward` and `llm` are composed options of the `single_agent/protocol`,
    `single_agent/reward` and `llm` config groups (configs/framework/single_agent.yaml's defaults)."""

    def __init__(self, *, protocol: Protocol | Mapping[str, Any], reward: RewardConfig | Mapping[str, Any],
                 llm: Mapping[str, Any] | None = None, checkpoint: str | None = None,
                 constrained: bool = True, temperature: float = 0.0, top_p: float = 1.0,
                 max_new_tokens: int | None = None, samples: int = 1) -> None:
        super().__init__(protocol, reward, constrained, temperature, top_p, max_new_tokens, samples)
        llm = require_composed("llm", llm, LLM_GROUP)
        if checkpoint is not None:
            engine = checkpoint_engine(checkpoint, llm)
        elif llm is not None and folder_engine(llm) is None:
            engine = build_engine(llm)
        else:
            raise ValueError("name a backbone (llm@frameworks.<row>.llm=NAME of the llm group) or a trained policy "
                             "(checkpoint=PATH)")
        if not has_token_interface(engine):
            raise ConfigError(f"llm {engine.engine_id}: {type(engine).__name__} does not take token ids; the single agent "
                              "plays in token ids, which local engines offer (smollm2, tiny, transformers)")
        self.policy = engine

    def policy_identity(self) -> str:
        """The engine's fingerprint: its weights, dtype, tokenizer and chat template."""
        return self.policy.fingerprint()
