"""Rule baselines: classic technical strategies and references, as plugins like any other."""
