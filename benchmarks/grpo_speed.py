"""GRPO speed: optimizer steps per second and completions per second, measured with the real trainer.

    PYTHONPATH=. python benchmarks/grpo_speed.py                      # the cpu_tiny model and SmolLM2, on CPU
    PYTHONPATH=. python benchmarks/grpo_speed.py --models tiny --steps 6
    PYTHONPATH=. python benchmarks/grpo_speed.py --models qwen2.5-0.5b --device cuda \
        --prompts 16 --generations 16 --max-new-tokens 256 --free --micro-batch 64
    PYTHONPATH=. python benchmarks/grpo_speed.py --models qwen2.5-0.5b --qwen-layers 1 --steps 2 \
        --max-new-tokens 8 --free                                      # the GPU command's quick CPU check

Each model trains for --steps GRPO steps through `train_single_agent.train` (the cpu_tiny recipe
with the model swapped, no warm start, no validation, one checkpoint at the last step) on
data=synthetic_news: --prompts prompts × --generations completions per step, rollouts on the
compact protocol, one torch thread on CPU. Rollouts are held to the protocol grammar unless
--free: then a random-weight model writes one turn of --max-new-tokens tokens that is no valid
step, so every completion is that long (the shape of a plain TRL benchmark). --max-new-tokens
bounds each turn (default: the protocol's bound for one grammar-valid turn).

The first step is a warm-up and is not timed; the figures are medians over the others, from the
per-step log (`step_time`: the whole optimizer step, rollout included; `episodes/rollout_s`: the
rollout alone; `completions/mean_length`: model tokens per completion). Models: `tiny`, the
cpu_tiny recipe's 4-layer model; `smollm2`, SmolLM2-135M with LoRA (its cpu_smollm2 recipe);
`qwen2.5-0.5b`, Qwen2.5-0.5B's architecture (24 layers, hidden 896, 14/2 heads, intermediate
4864, tied embeddings) with random weights and the embedded SmolLM2 tokenizer (49,152 tokens
instead of Qwen's 151,936: a smaller embedding and output layer), bfloat16 on a GPU.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODELS = {
    "tiny": ["train=cpu_tiny"],
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


def overrides(model: str, args: argparse.Namespace, scratch: Path) -> list[str]:
    """The Hydra overrides of one measurement (see the module docstring)."""
    chosen = [*MODELS[model], f"output_dir={scratch / model}", "train.warm_start.enabled=false",
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


def measure(model: str, args: argparse.Namespace, scratch: Path) -> dict[str, float]:
    """Train `model` for args.steps steps; its step time and throughput (medians after the first step)."""
    import pandas as pd
    from hydra import compose, initialize_config_dir

    import train_single_agent

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=overrides(model, args, scratch))
    output = train_single_agent.train(cfg)
    timed = pd.read_csv(output / "steps.csv").iloc[1:]
    step_s = float(timed["step_time"].median())
    completions = args.prompts * args.generations
    return {"model": model, "timed_steps": len(timed), "step_s": step_s,
            "rollout_s": float(timed["episodes/rollout_s"].median()), "steps_per_s": 1 / step_s,
            "completions_per_s": completions / step_s,
            "tokens_per_completion": float(timed["completions/mean_length"].median())}


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
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the first step is not timed)")
    sys.path.insert(0, str(ROOT))
    import pandas as pd

    with tempfile.TemporaryDirectory() as scratch:
        rows = [measure(model, args, Path(scratch)) for model in args.models]
    print(f"\nGRPO speed, {args.prompts} prompts x {args.generations} completions per step, device {args.device}, "
          f"{'free sampling' if args.free else 'protocol grammar'}")
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
