"""GRPO speed: optimizer steps per second and completions per second, measured with the real trainer.

    PYTHONPATH=. python benchmarks/grpo_speed.py                      # the cpu_tiny model and SmolLM2, on CPU
    PYTHONPATH=. python benchmarks/grpo_speed.py --models tiny --steps 6
    PYTHONPATH=. python benchmarks/grpo_speed.py --models qwen2.5-0.5b --device cuda \
        --prompts 16 --generations 16 --max-new-tokens 256 --free --micro-batch 64
    PYTHONPATH=. python benchmarks/grpo_speed.py --models qwen2.5-0.5b --qwen-layers 1 --steps 2 \
        --max-new-tokens 8 --free                                      # the GPU command's quick CPU check
    PYTHONPATH=. python benchmarks/grpo_speed.py --models tiny --generations 8 --micro-batch 8 \
        --fast-paths off unmasked on                                   # before and after the exact fast paths

Each model trains for --steps GRPO steps through `train_single_agent.train` (the cpu_tiny recipe
with the model swapped, no warm start, no validation, one checkpoint at the last step) on
data=synthetic_news: --prompts prompts × --generations completions per step, rollouts on the
compact protocol, one torch thread on CPU. Rollouts are held to the protocol grammar unless
--free: then a random-weight model writes one turn of --max-new-tokens tokens that is no valid
step, so every completion is that long (the shape of a plain TRL benchmark). --max-new-tokens
bounds each turn (default: the protocol's bound for one grammar-valid turn).

Each model runs once per --fast-paths variant (`training.causal_passes`, the recipe's
`fast_paths`): `off` (TRL's masked passes), `unmasked` (packed batches without an attention
mask), `on` (unmasked and the shared prompt prefix computed once), `recipe` (as the recipe
sets them); the same seed, so the same prompts. Ratios are against the first variant of the list.

The first step is a warm-up and is not timed; the figures are medians over the others, from the
per-step log (`step_time`: the whole optimizer step, rollout included; `cpu_s`: the process's
CPU seconds, differenced per step, the honest figure on a shared machine; `episodes/rollout_s`:
the rollout alone; `completions/mean_length`: model tokens per completion). Tokens per episode
(prompt, and prompt + completion: model, tool and template tokens) and the shared prefix's
length per log-prob micro-batch are recorded from the run's own batches. Last, the last run's
final policy micro-batch is timed alone (`--pass-repeats`): its log-prob pass and backward with
each variant, interleaved, on the last checkpoint's weights, the median CPU seconds; on a shared
machine this isolates the trainer passes from the rollout and from load drift between runs. Models: `tiny`, the
cpu_tiny recipe's 4-layer model; `tiny-subword`, the same model with the `market` vocabulary and terse
tool results (its cpu_tiny_subword recipe; `--models tiny tiny-subword` puts both side by side); `smollm2`, SmolLM2-135M with LoRA (its cpu_smollm2 recipe);
`qwen2.5-0.5b`, Qwen2.5-0.5B's architecture (24 layers, hidden 896, 14/2 heads, intermediate
4864, tied embeddings) with random weights and the embedded SmolLM2 tokenizer (49,152 tokens
instead of Qwen's 151,936: a smaller embedding and output layer), bfloat16 on a GPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAST_PATHS = {
    "off": ["train.fast_paths.unmasked_causal=false", "train.fast_paths.shared_prefix=false"],
    "unmasked": ["train.fast_paths.unmasked_causal=true", "train.fast_paths.shared_prefix=false"],
    "on": ["train.fast_paths.unmasked_causal=true", "train.fast_paths.shared_prefix=true"],
    "recipe": [],
}

MODELS = {
    "tiny": ["train=cpu_tiny"],
    "tiny-subword": ["train=cpu_tiny_subword"],
    "smollm2": ["train=cpu_smollm2"],
    "qwen2.5-0.5b": ["train=cpu_tiny", "train.model.source=path", "train.model.lora=null"],
}


def random_qwen_folder(folder: Path, layers: int) -> Path:
    """Qwen2.5-0.5B's architecture with `layers` layers (the model's: 24), random weights (seed 0) and
    SmolLM2's tokenizer, saved in `folder`."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from llm_backends.smollm2 import ensure_converted

    tokenizer = AutoTokenizer.from_pretrained(ensure_converted())
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=896, intermediate_size=4864, num_hidden_layers=layers,
                         num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                         rope_theta=1_000_000.0, tie_word_embeddings=True, rms_norm_eps=1e-6,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def overrides(model: str, paths: str, args: argparse.Namespace, scratch: Path) -> list[str]:
    """The Hydra overrides of one measurement (see the module docstring)."""
    chosen = [*MODELS[model], *FAST_PATHS[paths], f"output_dir={scratch / model / paths}", "train.warm_start.enabled=false",
              "train.monitoring.validate_every=0", "train.monitoring.tensorboard=false",
              f"train.checkpoints.save_steps={args.steps}", f"train.optimisation.max_steps={args.steps}",
              f"train.optimisation.prompts_per_step={args.prompts}",
              f"train.optimisation.num_generations={args.generations}",
              f"train.optimisation.micro_batch_size={args.micro_batch}", f"train.model.device={args.device}",
              f"train.constrained={not args.free}"]
    if args.max_new_tokens:
        chosen.append(f"train.max_new_tokens={args.max_new_tokens}")
    if args.device != "cpu":
        chosen.append("train.torch_threads=null")
    if model == "qwen2.5-0.5b":
        dtype = "float32" if args.device == "cpu" else "bfloat16"
        chosen += [f"++train.model.path={random_qwen_folder(scratch / 'qwen', args.qwen_layers)}", f"train.model.dtype={dtype}"]
    return chosen


class BatchRecorder:
    """Records, while a run trains, each rollout batch's prompt and episode lengths (tokens) and each
    log-prob micro-batch's shared prefix length, by wrapping the two functions that see them."""

    def __init__(self) -> None:
        self.prompt_tokens: list[int] = []
        self.episode_tokens: list[int] = []
        self.shared_prefix: list[int] = []
        self.loss_batch: tuple | None = None
        """(input_ids, attention_mask, logits_to_keep) of the last policy micro-batch with gradients."""

    def __enter__(self) -> BatchRecorder:
        from training import causal_passes, rollouts
        from training.agent_trainer import AgentGRPOTrainer

        self.patched = [(rollouts, "trl_batch", rollouts.trl_batch),
                        (causal_passes, "shared_prefix_length", causal_passes.shared_prefix_length),
                        (AgentGRPOTrainer, "_get_per_token_logps_and_entropies",
                         AgentGRPOTrainer._get_per_token_logps_and_entropies)]
        batch, prefix = rollouts.trl_batch, causal_passes.shared_prefix_length
        passes = AgentGRPOTrainer._get_per_token_logps_and_entropies

        def recorded_pass(trainer, model, input_ids, attention_mask, logits_to_keep, *args, **kwargs):
            import torch

            if torch.is_grad_enabled():
                self.loss_batch = (input_ids.detach().clone(), attention_mask.detach().clone(), logits_to_keep)
            return passes(trainer, model, input_ids, attention_mask, logits_to_keep, *args, **kwargs)

        def recorded_batch(episodes, *args, **kwargs):
            for episode in episodes:
                self.prompt_tokens.append(len(episode.tokens.prompt_ids))
                self.episode_tokens.append(len(episode.tokens.prompt_ids) + len(episode.tokens.completion_ids))
            return batch(episodes, *args, **kwargs)

        def recorded_prefix(*args, **kwargs):
            length = prefix(*args, **kwargs)
            self.shared_prefix.append(length)
            return length

        rollouts.trl_batch, causal_passes.shared_prefix_length = recorded_batch, recorded_prefix
        AgentGRPOTrainer._get_per_token_logps_and_entropies = recorded_pass
        return self

    def __exit__(self, *exc) -> None:
        for module, name, original in self.patched:
            setattr(module, name, original)


def measure(model: str, paths: str, args: argparse.Namespace, scratch: Path) -> dict[str, float]:
    """Train `model` for args.steps steps with fast paths `paths`; its step time and throughput
    (medians after the first step) and tokens per episode."""
    import numpy as np
    import pandas as pd
    from hydra import compose, initialize_config_dir

    import train_single_agent

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=overrides(model, paths, args, scratch))
    with BatchRecorder() as recorded:
        output = train_single_agent.train(cfg)
    log = pd.read_csv(output / "steps.csv")
    timed = log.iloc[1:]
    step_s = float(timed["step_time"].median())
    cpu_s = float(log["cpu_s"].diff().iloc[1:].median())
    completions = args.prompts * args.generations
    return {"model": model, "fast_paths": paths, "timed_steps": len(timed), "step_s": step_s, "step_cpu_s": cpu_s,
            "rollout_s": float(timed["episodes/rollout_s"].median()), "completions_per_s": completions / step_s,
            "completions_per_cpu_s": completions / cpu_s,
            "model_tokens_per_episode": float(timed["completions/mean_length"].median()),
            "prompt_tokens": float(np.mean(recorded.prompt_tokens)),
            "tokens_per_episode": float(np.mean(recorded.episode_tokens)),
            "shared_prefix": float(np.median(recorded.shared_prefix)) if recorded.shared_prefix else 0.0,
            "loss_batch": recorded.loss_batch, "policy": output / f"checkpoint-{args.steps}" / "policy"}


def pass_seconds(policy: Path, loss_batch: tuple, repeats: int) -> list[dict[str, float]]:
    """CPU seconds of one policy micro-batch's log-prob pass and its backward, per fast-path variant
    of `training.causal_passes.fused_logps`, the variants interleaved `repeats` times (so a
    changing machine load hits them alike); medians."""
    import time

    import numpy as np
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    from training.causal_passes import fused_logps

    model = AutoModelForCausalLM.from_pretrained(policy)
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids, mask, width = loss_batch
    variants = {"off": (False, False), "unmasked": (True, False), "on": (True, True)}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, (unmasked, shared) in variants.items():
            model.zero_grad()
            start = time.process_time()
            logps, _ = fused_logps(model, ids, mask, width, unmasked=unmasked, shared_prefix=shared)
            logps.sum().backward()
            seconds[name].append(time.process_time() - start)
    base = float(np.median(seconds["off"]))
    return [{"fast_paths": name, "rows": ids.size(0), "tokens_per_row": ids.size(1),
             "pass_cpu_s": float(np.median(values)), "ratio": float(np.median(values)) / base}
            for name, values in seconds.items()]


def with_ratios(rows: list[dict[str, float]]):
    """The rows as a table, with each model's step time and completions per second over its first variant's."""
    import pandas as pd

    table = pd.DataFrame(rows).drop(columns=["loss_batch", "policy"])
    first = table.groupby("model")[["step_s", "step_cpu_s"]].transform("first")
    table["step_ratio"] = table["step_s"] / first["step_s"]
    table["cpu_ratio"] = table["step_cpu_s"] / first["step_cpu_s"]
    table["throughput_gain_cpu"] = first["step_cpu_s"] / table["step_cpu_s"]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=["tiny", "smollm2"])
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps per model, the first untimed")
    parser.add_argument("--prompts", type=int, default=2, help="prompts per step")
    parser.add_argument("--generations", type=int, default=4, help="completions per prompt")
    parser.add_argument("--micro-batch", type=int, default=4, help="completions per forward/backward pass")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="tokens per turn (default: the protocol's)")
    parser.add_argument("--free", action="store_true", help="sample without the protocol grammar")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N")
    parser.add_argument("--qwen-layers", type=int, default=24, help="layers of qwen2.5-0.5b (fewer: a quick CPU check)")
    parser.add_argument("--fast-paths", nargs="+", choices=list(FAST_PATHS), default=["off", "on"],
                        help="variants run per model, ratios against the first")
    parser.add_argument("--pass-repeats", type=int, default=10,
                        help="then time the last run's policy micro-batch alone, each variant this many times (0: not)")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the first step is not timed)")
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as scratch:
        rows = [measure(model, paths, args, Path(scratch)) for model in args.models for paths in args.fast_paths]
        last = rows[-1]
        alone = pass_seconds(last["policy"], last["loss_batch"], args.pass_repeats) if args.pass_repeats else []
    print(f"\nGRPO speed, {args.prompts} prompts x {args.generations} completions per step, micro-batches of "
          f"{args.micro_batch}, device {args.device}, {'free sampling' if args.free else 'protocol grammar'}, "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(with_ratios(rows).to_markdown(index=False, floatfmt=".3g"))
    if alone:
        import pandas as pd

        print(f"\nOne policy micro-batch of {last['model']} ({last['fast_paths']} run, last step): log-prob pass and "
              f"backward alone, {args.pass_repeats} interleaved repeats, median CPU seconds")
        print(pd.DataFrame(alone).to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
