"""FinAgent (Zhang et al., KDD 2024): market intelligence, a per-ticker memory, two levels of reflection.

`finagent.agent` decides a day's contexts in five steps; the framework adapter is
`frameworks.finagent.FinAgent`; docs/finagent.md describes the whole and how it differs from the original.
"""
