"""FineFT (arXiv 2512.23773): selective ensemble-TD Q-learners, one best learner and one small VAE per
market dynamic, and VAE routing to a conservative policy, on the futures task (docs/fineft.md).

Stage I (`stage_one`): N Q-learners (`ensemble.EnsembleQ`) pretrained on DP-optimal and rule
rollouts, then trained with the selective ensemble-TD update (`selective`) and a KL term to the DP
teacher. Stage II (`stage_two`): per market dynamic the best learner on validation and a VAE
(`vae`) on the states of that dynamic. Stage III (`router`, `stage_three`): at each bar the VAEs'
ELBO quantiles decide whether a learner acts or the conservative policy holds or unwinds.
"""
