"""EarnMore (Zhang et al., WWW 2024, arXiv 2311.10801): maskable stock pools for portfolio management.

One token per stock from its last `days` feature rows, a one-layer transformer encoder with a CLS
token, stocks replaced by a learned mask token in training (a one-layer decoder reconstructs their
windows), and SAC (stable-baselines3) over the tokens whose action is softmax weights on cash + the
stocks. At test time any sub-pool is served by masking the stocks outside it. `model` holds the
networks, `policy` their SB3 wiring and auxiliary losses, `env` the training environment, `data`
the feature tensor, `train` the training command and `agent` a loaded checkpoint. docs/earnmore.md
says what is faithful to the original and what differs.
"""
