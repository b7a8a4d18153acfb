"""GRPO speed: optimizer steps per second and completions per second, measured with the real trainer.

    python benchmarks/grpo_speed.py                          # the cpu_tiny model and SmolLM2, on CPU
    python benchmarks/grpo_speed.py --models tiny --steps 6
    python benchmarks/grpo_speed.py --models qwen2.5-0.5b --device cuda --prompts 16 --generations 16

Each model trains for --steps GRPO steps through `train_single_agent.train` (the cpu_tiny recipe
with the model swapped, no warm start, no validation, no checkpoint until the last step) on
data=synthetic_news, --prompts prompts x --generations completions per step, grammar-constrained
rollouts on the compact protocol, one torch thread on CPU. The first step is a warm-up and is
not timed; the figures are medians over the others, from the per-step log (`step_time`: the
whole optimizer step, rollout included; `episodes/rollout_s`: the rollout alone). `tiny` is the
cpu_tiny recipe's 4-layer model, `smollm2` SmolLM2-135M with LoRA (its cpu_smollm2 recipe), and
`qwen2.5-0.5b` a random-weight model of Qwen2.5-0.5B's architecture (a GPU check; the tiny
tokenizer, so prompts are as long as the tiny model's).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
from hydra import compose, initialize_config_dir

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import train_single_agent  # noqa: E402
from llm_backends.tiny import TinySpec, build_tiny  # noqa: E402
from benchmarks.llm_throughput import qwen25_05b_config  # noqa: E402

MODELS = {
    "tiny": ["train=cpu_tiny"],
    "smollm2": ["train=cpu_smollm2"],
    "qwen2.5-0.5b": ["train=cpu_tiny", "train.model.source=path", "train.model.dtype=auto",
                     "train.model.gradient_checkpointing=true"],
}


def random_qwen_folder(folder: Path) -> Path:
    """A Qwen2.5-0.5B-architecture model with random weights and the tiny tokenizer, saved in `folder`."""
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    build_tiny(TinySpec(), folder / "tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(folder / "tokenizer")
    config = qwen25_05b_config(151_936)
    config.eos_token_id, config.pad_token_id = tokenizer.eos_token_id, tokenizer.pad_token_id
    Qwen2ForCausalLM(config).save_pretrained(folder / "model")
    tokenizer.save_pretrained(folder / "model")
    return folder / "model"


def measure(model: str, args: argparse.Namespace, scratch: Path) -> dict[str, float]:
    """Train `model` for args.steps steps; its step time and throughput (medians after the first step)."""
    overrides = [*MODELS[model], f"output_dir={scratch / model}", "train.warm_start.enabled=false",
                 "train.monitoring.validate_every=0", "train.monitoring.tensorboard=false",
                 f"train.checkpoints.save_steps={args.steps}", f"train.optimisation.max_steps={args.steps}",
                 f"train.optimisation.prompts_per_step={args.prompts}",
                 f"train.optimisation.num_generations={args.generations}",
                 f"train.optimisation.micro_batch_size={args.micro_batch}", f"train.model.device={args.device}"]
    if model == "qwen2.5-0.5b":
        overrides.append(f"train.model.path={random_qwen_folder(scratch / 'qwen')}")
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=overrides)
    output = train_single_agent.train(cfg)
    timed = pd.read_csv(output / "steps.csv").iloc[1:]
    step_s = float(timed["step_time"].median())
    completions = args.prompts * args.generations
    return {"model": model, "steps": len(timed), "step_s": step_s, "rollout_s": float(timed["episodes/rollout_s"].median()),
            "steps_per_s": 1 / step_s, "completions_per_s": completions / step_s,
            "completion_tokens": float(timed["completions/mean_length"].median())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=["tiny", "smollm2"])
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps per model, the first untimed")
    parser.add_argument("--prompts", type=int, default=2, help="prompts per step")
    parser.add_argument("--generations", type=int, default=4, help="completions per prompt")
    parser.add_argument("--micro-batch", type=int, default=4, help="completions per forward/backward pass")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        rows = [measure(model, args, Path(scratch)) for model in args.models]
    table = pd.DataFrame(rows)
    print(f"\nGRPO speed, {args.prompts} prompts x {args.generations} completions per step, device {args.device}")
    print(table.to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
