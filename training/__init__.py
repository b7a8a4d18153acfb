"""GRPO training of the single agent with TRL (docs/training.md).

`train_single_agent.py` tells the story; the pieces: the recipe (`config`), the policy and its
rollout engine (`policy_model`), the prompts (`prompt_dataset`), the warm start
(`demonstrations`, `warm_start`), the rollout function (`rollouts`, `tool_curriculum`), the reward
functions (`reward_functions`), the trainer (`agent_trainer`, `grpo`, `trainer_arguments`), the
monitoring (`episode_stats`, `step_log`, `validation`, `curves`), the checkpoints
(`checkpoints`) and the proof's evaluation (`evaluation`).
"""
