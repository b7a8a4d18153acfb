"""FinRL-style reinforcement-learning agents: a gymnasium environment over the simulator, stable-baselines3 policies."""
