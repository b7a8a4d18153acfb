"""Tokens per episode of the cpu_tiny recipe, per vocabulary and tool-result rendering, side by side.

    PYTHONPATH=. python benchmarks/episode_tokens.py                    # 64 training days, market vocab 2,048
    PYTHONPATH=. python benchmarks/episode_tokens.py --days 128 --vocab-sizes 1024 2048 4096

The episodes are the recipe's warm-start demonstrations (`training.demonstrations`: the
randomised scripted expert with terse thinks, the shape of the episodes GRPO samples after the
warm start) on a fixed set of training days: `--days` (ticker, day) pairs drawn with `--seed`
from the train split of `configs/train_single_agent.yaml` (data=synthetic_news), the same for
every variant. Each variant renders them with the tokenizer of a built tiny model
(`llm_backends.tiny.ensure_tiny`, the recipe's spec with the vocabulary swapped) and the
protocol with or without `terse_results`. Per episode (means): `prompt` (system and user
messages with the tool schemas), `tool` (tool responses and the chat template between turns),
`sampled` (the expert's own tokens, which a policy samples), their total, characters per token,
and each against the first variant (the recipe as it is: embedded 512-token vocabulary, default
rendering).
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def episode_counts(episodes: list) -> dict[str, float]:
    """Mean prompt, tool/template and sampled tokens per episode, and their total."""
    import numpy as np

    prompt = [len(e.tokens.prompt_ids) for e in episodes]
    sampled = [sum(e.tokens.model_mask) for e in episodes]
    tool = [len(e.tokens.model_mask) - s for e, s in zip(episodes, sampled)]
    return {"prompt": float(np.mean(prompt)), "tool": float(np.mean(tool)), "sampled": float(np.mean(sampled)),
            "total": float(np.mean(prompt) + np.mean(tool) + np.mean(sampled))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=64, help="(ticker, day) pairs of the train split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[2048], help="sizes of the market vocabulary")
    parser.add_argument("--recipe", default="cpu_tiny")
    args = parser.parse_args()

    from dataclasses import replace

    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from llm_backends.tiny import ensure_tiny
    from llm_backends.transformers_engine import load_tokenizer
    from market.splits import Splits
    from single_agent.protocol import load_protocol
    from single_agent.rewards import load_reward_config
    from single_agent.tokenizer_corpus import TemplateRenderer
    from training.config import TrainConfig
    from training.demonstrations import demonstration_episodes
    from training.prompt_dataset import labelled_days

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=[f"train={args.recipe}"])
    config = TrainConfig.model_validate(OmegaConf.to_container(cfg.train, resolve=True))
    data = instantiate(cfg.data)
    splits = Splits.model_validate(OmegaConf.to_container(cfg.split, resolve=True))
    protocol = load_protocol(config.protocol)
    days = labelled_days(data, list(cfg.tickers), splits.train, load_reward_config(config.reward))
    spec = config.model.tiny.spec()
    variants = [("embedded", spec.vocab_size)] + [("market", size) for size in args.vocab_sizes]
    rows = []
    for vocabulary, size in variants:
        folder = ensure_tiny(replace(spec, vocabulary=vocabulary, vocab_size=size))
        renderer = TemplateRenderer(load_tokenizer(folder))
        for terse in (False, True):
            offered = protocol.model_copy(update={"terse_results": terse})
            episodes = demonstration_episodes(renderer, offered, data, days, args.days, args.seed, randomise=True,
                                              terse=config.warm_start.terse)
            chars = sum(len(renderer.tokenizer.decode(e.tokens.prompt_ids + e.tokens.completion_ids))
                        for e in episodes) / len(episodes)
            counts = episode_counts(episodes)
            rows.append({"vocabulary": f"{vocabulary}-{len(renderer.tokenizer)}", "results": "terse" if terse else "default",
                         **counts, "chars_per_token": chars / counts["total"]})
    base = rows[0]
    print(f"{len(days)} labelled train days, {args.days} drawn (seed {args.seed}); tokens per episode (means)")
    print(f"{'vocabulary':<16}{'results':<9}{'prompt':>8}{'tool':>8}{'sampled':>9}{'total':>8}{'chars/tok':>10}"
          f"{'prompt×':>9}{'tool×':>7}{'sampled×':>9}{'total×':>8}")
    for row in rows:
        ratios = "".join(f"{row[k] / base[k]:>{w}.3f}" for k, w in (("prompt", 9), ("tool", 7), ("sampled", 9),
                                                                      ("total", 8)))
        print(f"{row['vocabulary']:<16}{row['results']:<9}{row['prompt']:>8.1f}{row['tool']:>8.1f}"
              f"{row['sampled']:>9.1f}{row['total']:>8.1f}{row['chars_per_token']:>10.2f}{ratios}")


if __name__ == "__main__":
    main()
