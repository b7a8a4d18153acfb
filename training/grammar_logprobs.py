"""Log-probabilities of the grammar-constrained policy, for the trainer's passes.

A constrained rollout samples each token from softmax(logits / T) restricted to the tokens the
grammar allows at that position. TRL scores a token with log_softmax over the whole vocabulary,
so the policy gradient and the KL term also move probability onto tokens the grammar never lets
the policy emit, and the policy that acts is whatever the renormalisation leaves. In the tiny
recipe the legal answers' share of the probability at `<answer>` (on the expert's episodes of the
valid split) fell from 0.99 at the warm start to 0.82-0.89 over 1,000 GRPO steps on every chosen
token, and to 0.09 in 400 steps with the loss on the decisions only (`loss_tokens: decisions`,
lr 1e-3), where the episodes also stopped calling tools against their own tool reward
(results/training/NOTES.md, "Stop 43"). Under this option nothing holds that share up (the
objective does not depend on it: 0.02 after 200 steps), so such a policy must be decoded with
its grammar, as validation and the benchmark do by default.

With `policy_logprobs: grammar` every scored token's log-probability is that of the policy that
sampled it:

    log π_G(a) = log p(a) − log Σ_{b allowed} p(b),    p = softmax(logits / T) over the vocabulary,

where the engine stored the grammar's support at each sampled position (`GrammarSupport`): the
allowed ids, or the ruled-out ids R, in which case log Σ_{b allowed} p(b) = log(1 − Σ_{b∈R} p(b)).
Positions without a support (forced tokens, tool results, no grammar) keep log p(a). The entropy
the pass returns is that of π_G where a support is stored,

    H_G = −Σ_{b allowed} π_G(b) log π_G(b),

so TRL's entropy bonus (`optimisation.entropy_coef`) and its `entropy` log act on the policy that
acts: at `<answer>` the entropy over the three answers, not over the vocabulary.

The pass materialises the logits of the completion positions (no fused LM head): (rows,
completion length, vocabulary) floats per micro-batch, fine for the tiny family's 4K vocabulary,
heavy for a 150K one.
"""

from __future__ import annotations

import torch

from llm_backends.types import GrammarSupport

NONE, ALLOWED, RULED_OUT = 0, 1, 2
"""The kinds of `support_tensors`: no support, allowed ids, ruled-out ids."""


def support_tensors(supports: list[list[GrammarSupport | None] | None], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row's completion tokens (padded to `length`): kind (rows, length) int8 and ids (rows,
    length, widest support) long, −1 where unused."""
    width = max((len(s.ids) for row in supports for s in row or [] if s is not None), default=1)
    kind = torch.zeros(len(supports), length, dtype=torch.int8)
    ids = torch.full((len(supports), length, width), -1, dtype=torch.long)
    for r, row in enumerate(supports):
        for t, support in enumerate(row or []):
            if support is not None:
                if t >= length:
                    raise ValueError(f"row {r} has a grammar support at completion token {t} of {length}")
                kind[r, t] = ALLOWED if support.allowed else RULED_OUT
                ids[r, t, :len(support.ids)] = torch.tensor(support.ids, dtype=torch.long)
    return kind, ids


def log_normalisers(log_probs: torch.Tensor, kind: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """log Σ_{b allowed} p(b) per position, (rows, T), from log_probs (rows, T, vocabulary); 0 where
    `kind` is NONE."""
    stored = log_probs.gather(-1, ids.clamp(min=0)).masked_fill(ids < 0, float("-inf"))
    mass = torch.logsumexp(stored, dim=-1)
    remainder = torch.log(-torch.expm1(mass.clamp(max=-1e-7)))      # log(1 − Σ_R p), R the ruled-out ids
    return torch.where(kind == ALLOWED, mass, torch.where(kind == RULED_OUT, remainder, torch.zeros_like(mass)))


def grammar_logps(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
                  kind: torch.Tensor, ids: torch.Tensor, temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """log π_G of the last `logits_to_keep` tokens of each row, (rows, logits_to_keep), and the
    entropy (nats) there: H_G where a support is stored, the vocabulary-wide entropy elsewhere."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=logits_to_keep + 1).logits
    log_probs = torch.log_softmax(logits[:, :-1].float() / temperature, dim=-1)
    labels = input_ids[:, -logits_to_keep:]
    kind, ids = kind.to(labels.device), ids.to(labels.device)
    normalisers = log_normalisers(log_probs, kind, ids)
    chosen = log_probs.gather(-1, labels[..., None]).squeeze(-1) - normalisers
    return chosen, constrained_entropy(log_probs, kind, ids, normalisers)


def constrained_entropy(log_probs: torch.Tensor, kind: torch.Tensor, ids: torch.Tensor,
                        normalisers: torch.Tensor) -> torch.Tensor:
    """H_G per position (rows, T) from log_probs (rows, T, vocabulary) and `log_normalisers`
    log Z: over the listed ids where they are the allowed ones; where they are ruled out,
    H_G = log Z − S / Z with S = Σ_{b allowed} p(b) log p(b) (Z ≥ 1e-7 there, see
    `log_normalisers`); where `kind` is NONE the vocabulary-wide entropy."""
    plogp = log_probs.exp() * log_probs
    every = plogp.sum(dim=-1)
    listed = log_probs.gather(-1, ids.clamp(min=0)) - normalisers[..., None]
    over_allowed = -(listed.exp() * listed).masked_fill(ids < 0, 0.0).sum(dim=-1)
    ruled_out_sum = plogp.gather(-1, ids.clamp(min=0)).masked_fill(ids < 0, 0.0).sum(dim=-1)
    over_rest = normalisers - (every - ruled_out_sum) / normalisers.exp()
    return torch.where(kind == ALLOWED, over_allowed, torch.where(kind == RULED_OUT, over_rest, -every))
