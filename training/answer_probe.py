"""Can a policy learn to answer from what it read? A supervised probe, never a warm start.

The scripted expert that reads news plays `--episodes` days of the train split and `--held-out`
days of the valid split (terse thinks, the policy's own tokens, `training.demonstrations`).
The policy is then trained on the expert's answers only: cross-entropy of the first answer
token after `<answer>`, everything before it as context, AdamW at `--lr`, batches of 8. After
each epoch it prints the teacher-forced accuracy (argmax over the first tokens of BUY, SELL and
HOLD against the expert's answer) on the training episodes and on the held-out ones. A policy
whose held-out accuracy stays at the share of the most common answer cannot map the result to
the answer at this budget, and GRPO, whose signal per episode is weaker than a label's, cannot
be expected to teach it either.

With `--target regime` the label is the day's regime action instead (BUY bullish, SELL bearish,
HOLD sideways; the days balanced as in training): what GRPO's reward actually asks for. The
expert's answer is a deterministic function of the news it read; the regime agrees with the news
only in part, so this probe says how many labels the achievable accuracy costs.

With `--learner reinforce` (needs `--target regime`) no label is shown: GRPO's signal on the
answer token alone. For each day `--generations` answers are sampled from the policy's
distribution over the three actions' first tokens, each rewarded with the recipe's R_result for
the day's regime, and the update is the policy gradient of `reinforce_loss`; each line then
also counts the episodes consumed (days × generations). Its curve against the supervised one,
at the batch of a GRPO step (`--batch 2 --generations 8`), says how many episodes the answer
costs when nothing else in the episode carries the advantage and the news is always read.

    python -m training.answer_probe outputs/train/cpu_tiny/seed-0/warm_start/policy
    python -m training.answer_probe PATH --epochs 8 --lr 1e-3 --episodes 384 --held-out 96 --seed 0
    python -m training.answer_probe PATH --target regime
    python -m training.answer_probe PATH --target regime --learner reinforce --batch 2 --generations 8

The market, splits, tickers and the recipe's protocol and model settings are those of
`configs/train_single_agent.yaml` (`--override` takes Hydra overrides, e.g. `train=cpu_tiny`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from configs import CONFIG_DIR
from core.config_keys import typed_config
from frameworks.registry import instantiate_or_explain
from market.decision import Action
from market.regime import ACTION_OF_REGIME
from single_agent.rewards import RewardConfig
from market.splits import Splits
from single_agent.tags import ANSWER_OPEN
from training.config import TrainConfig
from training.demonstrations import demonstration_episodes
from training.policy_model import load_policy, rollout_engine
from training.prompt_dataset import balanced_regimes, labelled_days



def first_answer_tokens(tokenizer) -> torch.Tensor:
    """The first token of BUY, SELL and HOLD (in `Action` order)."""
    return torch.tensor([tokenizer.encode(a.value, add_special_tokens=False)[0] for a in Action])


def answer_examples(episodes, tokenizer,
                    regimes: dict[tuple[str, str], str] | None = None) -> list[tuple[torch.Tensor, int]]:
    """(ids before the first answer token, the label's index in the action order) per episode: the
    expert's answer, or with `regimes` ((ticker, date) -> regime) the regime's action."""
    marker = tokenizer.encode(ANSWER_OPEN, add_special_tokens=False)
    firsts = first_answer_tokens(tokenizer).tolist()
    examples = []
    for episode in episodes:
        ids = episode.tokens.prompt_ids + episode.tokens.completion_ids
        at = max(i for i in range(len(ids) - len(marker)) if ids[i:i + len(marker)] == marker) + len(marker)
        label = (firsts.index(ids[at]) if regimes is None
                 else list(Action).index(Action(ACTION_OF_REGIME[regimes[episode.ticker, episode.date]])))
        examples.append((torch.tensor(ids[:at]), label))
    return examples


def answer_logits(model, examples, firsts: torch.Tensor) -> torch.Tensor:
    """(examples, 3): the log-probabilities over the whole vocabulary of the actions' first
    tokens after each example's context (as logits of the three actions they differ from the
    raw logits by a constant per example, so their softmax is the grammar's answer policy)."""
    return torch.stack([torch.log_softmax(model(ids[None]).logits[0, -1], dim=-1)[firsts] for ids, _ in examples])


def accuracy(model, examples, firsts: torch.Tensor) -> float:
    """Share of examples whose argmax over the actions' first tokens is the label."""
    return scores(model, examples, firsts)["accuracy"]


def scores(model, examples, firsts: torch.Tensor) -> dict[str, float]:
    """`accuracy` (argmax); `sampled`, the mean over examples of π(label) with π the softmax over
    the three actions: the accuracy of answers sampled from the policy, what GRPO's regime
    accuracy measures; each action's mean probability (a policy that has collapsed onto one
    answer puts ~1 on it); and `legal`, the mean probability over the whole vocabulary of the
    three first tokens, the share of the model's probability the grammar keeps at `<answer>`."""
    model.eval()
    with torch.no_grad():
        log_probs = answer_logits(model, examples, firsts)
    model.train()
    probs = torch.softmax(log_probs, dim=-1)
    labels = torch.tensor([label for _, label in examples])
    shares = probs.mean(dim=0).tolist()
    return {"accuracy": int((probs.argmax(dim=-1) == labels).sum()) / len(labels),
            "sampled": float(probs[torch.arange(len(labels)), labels].mean()),
            "legal": float(log_probs.exp().sum(dim=-1).mean()),
            **{action.value: share for action, share in zip(Action, shares)}}


def reward_table(reward: RewardConfig) -> torch.Tensor:
    """(label, action) -> R_result: row i is the regime whose action is the i-th `Action`."""
    regime_of = {action: regime for regime, action in ACTION_OF_REGIME.items()}
    return torch.tensor([[reward.result_matrix[regime_of[label.value]][action] for action in Action]
                         for label in Action])


def reinforce_loss(logits: torch.Tensor, labels: torch.Tensor, rewards: torch.Tensor, generations: int,
                   generator: torch.Generator, entropy_coef: float = 0.0, scale: bool = True) -> torch.Tensor:
    """The policy-gradient loss of `generations` sampled answers per example.

    a ~ softmax(logits) per example and draw; R = rewards[label, a]; A = R − mean of the
    example's R, divided by (std of A over the batch + 1e-4) with `scale` (GRPO's
    `scale_rewards: batch`); loss = −mean over examples and draws of A · log π(a) − c · mean
    over examples of H(π), with H the entropy (nats) of the answer distribution and c =
    `entropy_coef`. Unscaled and without the entropy term its gradient is an unbiased estimate
    of −∇ E[R] (times (G − 1)/G, the group mean being one of the G draws); with `generations`
    0 it is that gradient exactly: loss = −mean over examples of Σ_a π(a) R[label, a]."""
    log_probs = torch.log_softmax(logits, dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(dim=-1)
    if generations == 0:
        return -(log_probs.exp() * rewards[labels]).sum(dim=-1).mean() - entropy_coef * entropy.mean()
    answers = torch.multinomial(log_probs.detach().exp(), generations, replacement=True, generator=generator)
    returns = rewards[labels[:, None], answers]
    advantages = returns - returns.mean(dim=1, keepdim=True)
    if scale:
        advantages = advantages / (advantages.std() + 1e-4)
    return -(advantages * log_probs.gather(1, answers)).mean() - entropy_coef * entropy.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="a policy folder (e.g. a warm start's policy/)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--episodes", type=int, default=384, help="training days (expert episodes)")
    parser.add_argument("--held-out", type=int, default=96, help="valid-split days")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", choices=["expert", "regime"], default="expert",
                        help="label: the expert's answer, or the regime's action on balanced days")
    parser.add_argument("--learner", choices=["supervised", "reinforce"], default="supervised",
                        help="reinforce: sampled answers rewarded with R_result, no label shown (needs --target regime)")
    parser.add_argument("--batch", type=int, default=8, help="days per update")
    parser.add_argument("--generations", type=int, default=8,
                        help="reinforce: answers sampled per day (0: the exact expected-reward gradient, no sampling)")
    parser.add_argument("--no-scale", action="store_true", help="reinforce: advantages not divided by the batch std")
    parser.add_argument("--entropy-coef", type=float, default=0.0, help="reinforce: weight of the answer entropy bonus")
    parser.add_argument("--override", nargs="*", default=[], help="Hydra overrides of configs/train_single_agent.yaml")
    args = parser.parse_args()
    if args.learner == "reinforce" and args.target != "regime":
        parser.error("--learner reinforce rewards the regime's action: it needs --target regime")
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=args.override)
    config = typed_config(TrainConfig, OmegaConf.to_container(cfg.train, resolve=True), "train")
    torch.set_num_threads(config.torch_threads or torch.get_num_threads())
    torch.manual_seed(args.seed)
    data = instantiate_or_explain(cfg.data, "data")
    splits = typed_config(Splits, OmegaConf.to_container(cfg.split, resolve=True), "split")
    protocol, reward = config.protocol, config.reward
    tickers = list(cfg.tickers)
    model, tokenizer = load_policy(Path(args.policy), config.model)
    engine = rollout_engine(model, tokenizer, "probe")
    started = time.perf_counter()
    sets = {}
    for name, window, count, seed in (("train", splits.train, args.episodes, args.seed),
                                      ("held-out", splits.valid, args.held_out, args.seed + 1)):
        days = labelled_days(data, tickers, window, reward)
        if args.target == "regime":
            days = balanced_regimes(days, seed)
        episodes = demonstration_episodes(engine, protocol, data, days, count, seed, randomise=False, terse=True)
        regimes = ({(row.ticker, f"{row.date:%Y-%m-%d}"): row.regime for row in days.itertuples(index=False)}
                   if args.target == "regime" else None)
        sets[name] = answer_examples(episodes, tokenizer, regimes)
        shares = pd.Series([list(Action)[label].value for _, label in sets[name]]).value_counts(normalize=True)
        agreement = np.mean([episode.final_action is list(Action)[label]
                             for episode, (_, label) in zip(episodes, sets[name])])
        print(f"{name}: {len(sets[name])} expert episodes, labels {shares.round(2).to_dict()}, "
              f"the expert's answer is the label on {agreement:.3f}")
    firsts = first_answer_tokens(tokenizer)
    train, held_out = sets["train"], sets["held-out"]
    held = scores(model, held_out, firsts)
    print(f"before: train {accuracy(model, train, firsts):.3f}, held-out {held['accuracy']:.3f} "
          f"(sampled {held['sampled']:.3f}, legal answer mass {held['legal']:.3f})")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    rewards, generator, episodes = reward_table(reward), torch.Generator().manual_seed(args.seed), 0
    model.train()
    for epoch in range(args.epochs):
        order, total = np.random.default_rng(args.seed + epoch).permutation(len(train)), 0.0
        for begin in range(0, len(order), args.batch):
            optimizer.zero_grad()
            batch = [train[i] for i in order[begin:begin + args.batch]]
            logits, labels = answer_logits(model, batch, firsts), torch.tensor([label for _, label in batch])
            if args.learner == "reinforce":
                loss = reinforce_loss(logits, labels, rewards, args.generations, generator, args.entropy_coef,
                                      scale=not args.no_scale)
                episodes += len(batch) * args.generations
            else:
                loss = torch.nn.functional.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        consumed = f", {episodes} episodes" if args.learner == "reinforce" else ""
        held = scores(model, held_out, firsts)
        shares = " / ".join(f"{held[action.value]:.2f}" for action in Action)
        print(f"epoch {epoch + 1}: {args.learner} loss {total / len(train):.3f}, train {accuracy(model, train, firsts):.3f}, "
              f"held-out {held['accuracy']:.3f} (sampled {held['sampled']:.3f}, BUY / SELL / HOLD {shares}){consumed} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
