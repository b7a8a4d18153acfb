"""The `train` config group (`configs/train/<name>.yaml`), validated: what to train, on what, how.

One file per recipe: `paper` (the AlphaQuanter optimisation on a Qwen2.5 checkpoint, GPU),
`cpu_tiny` (a tiny-family model on the compact protocol, 2 CPU cores), `cpu_tiny_subword` (the same
with the tiny family's subword vocabulary and terse tool results) and `cpu_smollm2`
(SmolLM2-135M, LoRA, a short CPU demonstration). Every key is required in the file except those
with a default here, so a recipe states its optimisation explicitly instead of inheriting TRL's
defaults. Batch sizes count completions unless named after prompts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llm_backends.tiny import TinySpec
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig


class _Strict(BaseModel):
    """Unknown keys and non-finite numbers (inf, nan: an optimizer step of inf writes NaN weights) are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class TinyModel(_Strict):
    """A tiny-family model built from scratch (`llm_backends.tiny.TinySpec`): random weights and
    the tiny family's tokenizer: `embedded` (514 tokens, the default) or `market` (a subword
    vocabulary of `vocab_size` BPE tokens trained on the protocol's and the synthetic market's text)."""

    num_hidden_layers: int = Field(ge=1)
    hidden_size: int = Field(ge=8)
    intermediate_size: int = Field(ge=8)
    num_attention_heads: int = Field(ge=1)
    num_key_value_heads: int = Field(ge=1)
    initializer_range: float = Field(gt=0, description="std of the random initial weights")
    seed: int = 0
    vocabulary: Literal["embedded", "market"] = "embedded"
    vocab_size: int = Field(default=512, ge=300, description="BPE vocabulary before the added tokens")

    def spec(self) -> TinySpec:
        return TinySpec(**self.model_dump())


class LoraSettings(_Strict):
    """peft LoRA adapters: rank r, scale alpha/r, on `target_modules` ("all-linear" or names)."""

    r: int = Field(ge=1)
    alpha: float = Field(gt=0)
    dropout: float = Field(default=0.0, ge=0, lt=1)
    target_modules: str | list[str] = "all-linear"


class ModelConfig(_Strict):
    """The initial policy: `tiny` (built from `tiny`), `smollm2` (the embedded SmolLM2-135M) or
    `path` (a local transformers folder, e.g. Qwen2.5-3B-Instruct); full fine-tuning unless `lora`."""

    source: Literal["tiny", "smollm2", "path"]
    tiny: TinyModel | None = None
    path: str | None = None
    device: str = "auto"
    dtype: str = Field(default="auto", description="torch dtype name; auto: bfloat16 on GPU, float32 on CPU")
    gradient_checkpointing: bool = False
    lora: LoraSettings | None = None

    @model_validator(mode="after")
    def _source_given(self) -> "ModelConfig":
        if self.source == "tiny" and self.tiny is None:
            raise ValueError("model.source tiny needs model.tiny (its layers and sizes)")
        if self.source == "path" and not self.path:
            raise ValueError("model.source path needs model.path (a local transformers folder)")
        return self


class SupervisedStage(_Strict):
    """The optimisation of a supervised stage before GRPO (TRL SFTTrainer: `training.warm_start.run_supervised`)."""

    enabled: bool
    epochs: float = Field(gt=0)
    learning_rate: float = Field(gt=0)
    lr_scheduler_type: str
    warmup_steps: int = Field(ge=0)
    batch_size: int = Field(ge=1, description="sequences per optimizer step")
    micro_batch_size: int = Field(ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> "SupervisedStage":
        if self.batch_size % self.micro_batch_size:
            raise ValueError("batch_size must be a multiple of micro_batch_size")
        return self


class PretrainConfig(SupervisedStage):
    """Language-model pretraining on the market's text before the warm start (`training.pretrain`):
    `documents` (ticker, day) pairs of the train split, each every offered tool's result; the loss
    covers every token. Holds no answer, no label and no tool choice."""

    documents: int = Field(ge=1, description="(ticker, day) documents drawn from the train split")


class WarmStartConfig(SupervisedStage):
    """Supervised fine-tuning (TRL SFTTrainer) before GRPO, on demonstrations.

    `demonstrations`: `expert_random` (the scripted expert with its tool choice and answer drawn
    at random: format only, no information about which tool matters or what to answer) or
    `expert` (the scripted expert reading news: imitation, for comparison only).
    """

    demonstrations: Literal["expert_random", "expert"] = "expert_random"
    terse: bool = Field(default=False, description="the expert's terse thinks: calls only named, one fixed sentence before the answer (single_agent.expert)")
    results_loss: bool = Field(default=False, description="the loss also covers the tool results and template tokens between turns")
    episodes: int = Field(ge=1, description="demonstration episodes drawn from the train split")


class OptimisationConfig(_Strict):
    """GRPO's optimisation, passed to TRL's GRPOConfig (names as there where they exist).

    One optimizer step takes `prompts_per_step` prompts × `num_generations` completions,
    computed in micro-batches of `micro_batch_size` completions (gradient accumulation).
    `beta` is the KL-loss coefficient to the starting policy (k3 estimator, TRL), `epsilon` the
    PPO clip ε (ratio clipped to [1 − ε, 1 + ε_high], ε_high = `epsilon_high` or ε).
    """

    learning_rate: float = Field(gt=0)
    lr_scheduler_type: str
    warmup_steps: int = Field(ge=0)
    weight_decay: float = Field(ge=0)
    max_grad_norm: float = Field(gt=0)
    beta: float = Field(ge=0)
    epsilon: float = Field(gt=0)
    epsilon_high: float | None = None
    num_generations: int = Field(ge=2)
    prompts_per_step: int = Field(ge=1)
    micro_batch_size: int = Field(ge=1)
    num_iterations: int = Field(ge=1, description="optimizer passes over each generated batch (μ)")
    max_steps: int = Field(ge=1)
    loss_type: str
    scale_rewards: Literal["group", "batch", "none"]
    entropy_coef: float = Field(default=0.0, ge=0, description="TRL's entropy bonus, the mean entropy of the loss's "
                                                               "tokens times this (with policy_logprobs grammar: of "
                                                               "the policy over the allowed tokens)")
    temperature: float = Field(gt=0)
    top_p: float = Field(gt=0, le=1)

    @property
    def completions_per_step(self) -> int:
        return self.prompts_per_step * self.num_generations

    @model_validator(mode="after")
    def _whole_micro_batches(self) -> "OptimisationConfig":
        if self.completions_per_step % self.micro_batch_size:
            raise ValueError(f"optimisation: prompts_per_step x num_generations ({self.completions_per_step}) "
                             f"must be a multiple of micro_batch_size ({self.micro_batch_size})")
        return self


class FastPaths(_Strict):
    """Exact fast paths of the trainers' forward passes (training.causal_passes).

    `unmasked_causal`: a batch whose rows can be right-padded only (GRPO: prompt and completion
    packed together; the warm start's batches already are) runs with no attention mask, on the
    causal kernel; other batches keep the mask. `shared_prefix`: GRPO's policy and reference
    passes compute the leading tokens all rows of a micro-batch share (the system prompt) once;
    needs `unmasked_causal`. Both change results by float rounding only (≤ 1e-5 per log-probability).
    """

    unmasked_causal: bool = False
    shared_prefix: bool = False

    @model_validator(mode="after")
    def _prefix_on_packed_batches(self) -> "FastPaths":
        if self.shared_prefix and not self.unmasked_causal:
            raise ValueError("fast_paths.shared_prefix runs on packed, unmasked batches: it needs fast_paths.unmasked_causal")
        return self


class ToolCurriculum(_Strict):
    """The call budget grows during training: `start_calls` allowed calls at first, one more every
    `steps_per_call` optimizer steps, up to the protocol's `max_tool_calls`. Only the grammar
    narrows (it forces the answer once the budget is spent); the prompt stays the protocol's."""

    start_calls: int = Field(ge=1)
    steps_per_call: int = Field(ge=1)

    def budget(self, step: int, max_tool_calls: int) -> int:
        """min(max_tool_calls, start_calls + step // steps_per_call)."""
        return min(max_tool_calls, self.start_calls + step // self.steps_per_call)


class MonitoringConfig(_Strict):
    """Per-step logging (CSV `steps.csv`, TensorBoard) and validation on the valid split."""

    logging_steps: int = Field(ge=1)
    tensorboard: bool
    validate_every: int = Field(ge=0, description="optimizer steps between validations of the saved policy (0: never)")
    validation_tickers: list[str] | None = Field(description="tickers validated (None: all trained tickers)")
    validation_days: int | None = Field(ge=2, description="last days of the valid window validated (None: all)")
    replica_digests: bool = Field(False, description="each process writes a digest of its weights after every optimizer "
                                  "step (replica_digests/rank-<r>.csv): data-parallel replicas must stay equal")


class CheckpointConfig(_Strict):
    """Trainer checkpoints (`checkpoint-<step>/`, each with a loadable `policy/` folder)."""

    save_steps: int = Field(ge=1)
    save_total_limit: int | None = Field(ge=1)


class AsyncSettings(_Strict):
    """Asynchronous GRPO (`mode: async`, docs/training.md): a rollout process generates while the
    trainer updates; the policy version v of a sample is the number of optimizer steps its weights
    had seen.

    `max_staleness` η: a group sampled (partly) by version v is consumed at trainer version
    ≤ v + η, otherwise dropped and counted. `objective`: `decoupled` (AReaL: per token
    w·min(u·Â, clip(u)·Â), w = π_prox/π_behav, u = π_θ/π_prox) or `grpo` (TRL's clipped loss with
    u = π_θ/π_prox, stale samples taken as on-policy). `in_flight`: when new weights arrive
    during a rollout, `finish` it with the old weights or `switch` to the new ones at the next
    turn boundary. `throttle`: AReaL's rule, a rollout starts only while the groups produced
    stay ≤ (version + η + 1) × prompts_per_step (no group then goes stale in `finish` mode);
    without it the rollout runs ahead (a queue of (η + 2) × prompts_per_step groups) and stale
    groups are dropped. `behaviour_weight_cap`: tokens with w above it get no loss (AReaL's
    `behav_imp_weight_cap`; None: no cap). `groups_per_rollout`: groups played together per
    rollout call (a batch of groups_per_rollout × num_generations episodes).
    """

    max_staleness: int = Field(ge=0)
    objective: Literal["decoupled", "grpo"]
    in_flight: Literal["finish", "switch"]
    throttle: bool
    behaviour_weight_cap: float | None = Field(gt=1)
    groups_per_rollout: int = Field(ge=1)


class TrainConfig(_Strict):
    """One recipe of the `train` group (see the module docstring)."""

    name: str
    mode: Literal["sync", "async"] = Field(description="sync: TRL's GRPOTrainer, rollouts between optimizer steps; "
                                                       "async: a rollout process beside the trainer (`asynchronous`)")
    protocol: Protocol = Field(description="a composed option of the single_agent/protocol group")
    reward: RewardConfig = Field(description="a composed option of the single_agent/reward group")
    constrained: bool = Field(description="hold every rollout turn to the protocol grammar")
    max_new_tokens: int | None = Field(ge=1, description="per turn; None: the protocol's max_turn_tokens")
    informative_tool: str = Field(description="the tool whose call share is monitored (the informative channel)")
    torch_threads: int | None = Field(ge=1, description="torch.set_num_threads (None: torch's default)")
    model: ModelConfig
    pretrain: PretrainConfig | None = Field(default=None, description="language-model pretraining (None: none)")
    warm_start: WarmStartConfig
    optimisation: OptimisationConfig
    monitoring: MonitoringConfig
    checkpoints: CheckpointConfig
    balance_regimes: bool = Field(default=False, description="as many prompts of each regime (training.prompt_dataset)")
    result_reward: Literal["real", "shuffled"] = Field(
        default="real", description="shuffled: the proof's control, each step's R_result values permuted across its "
                                    "episodes (training.reward_functions)")
    trajectory_filter: bool = Field(description="leave episodes without a valid answer out of the loss")
    loss_tokens: Literal["chosen", "decisions"] = Field(
        default="chosen", description="the tokens an episode's advantage and KL fall on: every token the model chose, "
                                      "or those outside its think blocks (training.rollouts.decision_mask)")
    policy_logprobs: Literal["vocabulary", "grammar"] = Field(
        default="vocabulary", description="how the trainer scores a token: log_softmax over the vocabulary (TRL's), or "
                                          "over the tokens the grammar allowed there, the policy that sampled "
                                          "(training.grammar_logprobs; needs constrained rollouts, mode sync)")
    tool_curriculum: ToolCurriculum | None
    fast_paths: FastPaths = Field(default_factory=FastPaths, description="exact fast forward passes (FastPaths)")
    asynchronous: AsyncSettings | None = Field(default=None, description="mode async's settings "
                                               "(configs/asynchronous/, composed by train_single_agent.yaml)")

    @model_validator(mode="after")
    def _async_settings_given(self) -> "TrainConfig":
        if self.mode == "async" and self.asynchronous is None:
            raise ValueError("train.mode async needs train.asynchronous (configs/asynchronous/default.yaml)")
        return self

    @model_validator(mode="after")
    def _grammar_logprobs_possible(self) -> "TrainConfig":
        if self.policy_logprobs == "grammar" and not (self.constrained and self.mode == "sync"):
            raise ValueError("policy_logprobs grammar scores the grammar-constrained policy: it needs constrained: true "
                             "and mode: sync")
        return self

    @model_validator(mode="after")
    def _validation_at_checkpoints(self) -> "TrainConfig":
        every = self.monitoring.validate_every
        if every and every % self.checkpoints.save_steps:
            raise ValueError(f"monitoring.validate_every ({every}) must be a multiple of checkpoints.save_steps "
                             f"({self.checkpoints.save_steps}): a validation trades a saved checkpoint")
        return self
