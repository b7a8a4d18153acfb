"""AlphaMix (KDD 2023, "AlphaMix: a mixture of diversified experts for quantitative trading"),
reimplemented for the portfolio task: a pool of BatchEnsemble MLP experts that predict up/down per
stock from its last 10 days of features (`batch_ensemble`), an as-needed router that adds expert
groups until it judges the mixture right and a greedy selective ensemble (`router`, `selection`),
the pool and router in one checkpointed module (`model`), the datasets (`data`) and the training
command `python -m comparators.alphamix.train` (`train`). docs/alphamix.md compares it with the
original code.
"""
