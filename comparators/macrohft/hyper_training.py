"""Stage 2: the hyper-agent mixes the frozen sub-agents, with episodic memory and the DP teacher.

The sub-agents are frozen, so their Q-values at every (path, bar, previous action) are computed
once: `sub_q` (N, T, P, K, A). Each epoch runs all training chunks side by side from random
initial positions, ε-greedily on Q_mix = Σ_k w_k Q_k (`model.mix_q`), and per step (the original's
`train` loop):

    e   = encode(s, a_prev)                                  (memory key)
    q   = r + γ (1 − done) max_a' Q_mix(s', a')              (one-step return)
    q_mem = memory.query(e, a), or q when the memory has no answer
    memory.add(e, a, q);  replay.add(transition, q_mem)

and a gradient step on a replay batch after every 1/`updates_per_transition` transitions:

    a* = argmax_a Q_mix,w_φ(s', a),  y = r + γ (1 − done) Q_mix,w_φ'(s', a*)
    L  = mean (Q_mix(s, a) − y)² + α_mem · mean (Q_mix(s, a) − q_mem)² + β · KL(softmax Q_DP ‖ softmax Q_mix)

(only the hyper-agent's weights φ learn; target φ' soft-updated). After each epoch the greedy
mixed policy runs over the whole validation window as one path from flat; the epoch with the
highest reward sum is kept.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from comparators.macrohft.learning import epsilon, explore, soft_update, teacher_kl
from comparators.macrohft.memory import EpisodicMemory
from comparators.macrohft.model import MacroHFT, mix_q
from comparators.macrohft.paths import Paths
from comparators.macrohft.policy import greedy_path, path_rewards, q_table
from comparators.macrohft.replay import IndexReplay
from comparators.macrohft.settings import MacroHFTSettings
from comparators.macrohft.subagent_training import StageResult
from comparators.training_log import TrainingLog


def frozen_subagent_q(model: MacroHFT, paths: Paths, actions: int) -> torch.Tensor:
    """sub_q (N, T, P, K, A): every sub-agent's Q at every bar of every path and previous action."""
    n, t = paths.single.shape[:2]
    single, trend = paths.single.reshape(n * t, -1), paths.trend.reshape(n * t, -1)
    out = []
    with torch.no_grad():
        for previous in range(actions):
            prev = torch.full((n * t,), previous, dtype=torch.long)
            out.append(model.subagent_q(single, trend, prev).reshape(n, t, -1, actions))
    return torch.stack(out, dim=2)


def hyper_loss(model: MacroHFT, target: MacroHFT, paths: Paths, sub_q: torch.Tensor, rows: np.ndarray,
               memory: np.ndarray, settings: MacroHFTSettings) -> tuple[torch.Tensor, ...]:
    """(loss, TD, memory, KL terms) of a batch of index rows and their memory targets."""
    n, t, previous, action = (torch.from_numpy(rows[:, k]) for k in range(4))
    reward = paths.rewards[n, t, previous, action]
    done = (t + 1 == paths.steps).float()
    next_state = (paths.single[n, t + 1], paths.trend[n, t + 1], paths.context[n, t + 1], action)
    next_q = sub_q[n, t + 1, action]
    with torch.no_grad():
        best = mix_q(model.hyper(*next_state), next_q).argmax(dim=1, keepdim=True)
        y = reward + settings.gamma * (1.0 - done) * mix_q(target.hyper(*next_state), next_q).gather(1, best).squeeze(1)
    q_all = mix_q(model.hyper(paths.single[n, t], paths.trend[n, t], paths.context[n, t], previous),
                  sub_q[n, t, previous])
    q = q_all.gather(1, action[:, None]).squeeze(1)
    td = F.mse_loss(q, y)
    remembered = F.mse_loss(q, torch.from_numpy(memory))
    kl = teacher_kl(q_all, paths.teacher[n, t, previous])
    return td + settings.memory_weight * remembered + settings.hyper_kl_beta * kl, td, remembered, kl


def valid_reward(model: MacroHFT, valid: Paths, actions: int) -> float:
    """Reward sum of the greedy mixed policy over each validation path from flat, summed."""
    total = 0.0
    for n in range(valid.count):
        table = q_table(model, valid.single[n], valid.trend[n], valid.context[n], actions)
        total += path_rewards(valid.rewards[n].numpy(), greedy_path(table[:-1], 0), 0)
    return total


def train_hyper(model: MacroHFT, train: Paths, valid: Paths, settings: MacroHFTSettings, log: TrainingLog,
                rng: np.random.Generator) -> StageResult:
    """Stage 2 (module docstring); `model.hyper` ends with the kept weights."""
    actions = len(settings.positions)
    for param in model.subagents.parameters():
        param.requires_grad_(False)
    sub_q = frozen_subagent_q(model, train, actions)
    target = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.hyper.parameters(), lr=settings.lr)
    replay = IndexReplay(settings.buffer_size)
    memory = EpisodicMemory(settings.memory_capacity, settings.memory_k, 2 * settings.hyper_hidden)
    every = max(1.0, 1.0 / settings.updates_per_transition)
    ids = np.arange(train.count)
    best, best_epoch, best_state, updates, pending = -np.inf, 0, copy.deepcopy(model.hyper.state_dict()), 0, 0.0
    for epoch in range(settings.hyper_epochs):
        eps = epsilon(settings.hyper_epsilon, epoch)
        previous = rng.integers(0, actions, train.count)
        model.eval()
        for t in range(train.steps):
            prev = torch.from_numpy(previous)
            state = (train.single[:, t], train.trend[:, t], train.context[:, t])
            with torch.no_grad():
                greedy = mix_q(model.hyper(*state, prev), sub_q[ids, t, previous]).argmax(dim=1).numpy()
                action = explore(greedy, eps, actions, rng)
                act = torch.from_numpy(action)
                keys = model.hyper.encode(state[0], state[1], prev).numpy()
                reward = train.rewards[ids, t, previous, action].numpy()
                following = mix_q(model.hyper(train.single[:, t + 1], train.trend[:, t + 1], train.context[:, t + 1], act),
                                  sub_q[ids, t + 1, action]).max(dim=1).values.numpy()
            done = float(t + 1 == train.steps)
            q_step = reward + settings.gamma * (1.0 - done) * following
            remembered = memory.query(keys, action)
            replay.add(ids, t, previous, action, np.where(np.isnan(remembered), q_step, remembered).astype(np.float32))
            memory.add(keys, action, q_step)
            previous = action
            pending += train.count
            while pending >= every and replay.size >= settings.batch_size:
                pending -= every
                rows, targets = replay.sample(settings.batch_size, rng)
                loss, td, mem, kl = hyper_loss(model, target, train, sub_q, rows, targets, settings)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.hyper.parameters(), 1.0)
                optimizer.step()
                soft_update(model.hyper, target.hyper, settings.tau)
                updates += 1
                if updates % 50 == 0:
                    log.scalars(updates, **{"hyper/td": td.item(), "hyper/memory": mem.item(), "hyper/kl": kl.item()})
        score = valid_reward(model, valid, actions)
        log.step(**{"hyper/valid_reward": score, "hyper/epsilon": eps})
        if score > best:
            best, best_epoch, best_state = score, epoch + 1, copy.deepcopy(model.hyper.state_dict())
    model.hyper.load_state_dict(best_state)
    return StageResult(state=best_state, best_epoch=best_epoch, best_valid=float(best), updates=updates)
