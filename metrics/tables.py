"""Rendering result tables as Markdown and LaTeX, and formatting numbers with their CIs.

Cells are formatted to strings first (:func:`format_value`, :func:`format_ci`), so the
Markdown and the LaTeX version of a table show the same digits. Missing values print as
``--``. LaTeX tables need ``\\usepackage{booktabs}`` (rules) and ``\\usepackage{multirow}``
(tables with a two-level index).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

MISSING = "--"
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                   "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}",
                   "<": r"\textless{}", ">": r"\textgreater{}"}


def format_value(value: float, scale: float = 1.0, digits: int = 2) -> str:
    """``value * scale`` with ``digits`` decimals; ``--`` for NaN/None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{value * scale:.{digits}f}"


def format_ci(value: float, low: float, high: float, scale: float = 1.0, digits: int = 2, marker: str = "") -> str:
    """``value [low, high]marker``, each scaled by ``scale`` (100 for percentages)."""
    point = format_value(value, scale, digits)
    if point == MISSING:
        return MISSING
    return f"{point} [{format_value(low, scale, digits)}, {format_value(high, scale, digits)}]{marker}"


def format_columns(numbers: pd.DataFrame, formats: Mapping[str, tuple[str, float, int]]) -> pd.DataFrame:
    """The columns of ``numbers`` named in ``formats`` ({column: (heading, scale, digits)}), as strings.

    Each value is ``format_value(value, scale, digits)``; the columns come in the order of
    ``formats``, under their headings; a column ``numbers`` lacks is left out.
    """
    return pd.DataFrame(
        {heading: numbers[column].map(lambda v, s=scale, d=digits: format_value(v, s, d))
         for column, (heading, scale, digits) in formats.items() if column in numbers},
        index=numbers.index,
    )


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; the index becomes the first column."""
    frame = table.reset_index()
    header = [str(column) for column in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in frame.itertuples(index=False):
        cells = [MISSING if pd.isna(cell) else str(cell).replace("|", "\\|") for cell in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def latex_escape(text: str) -> str:
    """``text`` with LaTeX special characters escaped."""
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def to_latex(table: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs LaTeX table with an escaped caption and ``\\label{tab:<label>}``."""
    body = table.to_latex(escape=True, na_rep=MISSING)
    return (
        "\\begin{table}[ht]\n\\centering\n\\small\n"
        f"\\caption{{{latex_escape(caption)}}}\n\\label{{tab:{label}}}\n{body}\\end{{table}}\n"
    )


def write_table(table: pd.DataFrame, name: str, tables_dir: Path, caption: str) -> tuple[Path, Path]:
    """Write ``tables_dir/<name>.md`` (caption as a heading line) and ``<name>.tex``; return both paths."""
    tables_dir.mkdir(parents=True, exist_ok=True)
    markdown = tables_dir / f"{name}.md"
    latex = tables_dir / f"{name}.tex"
    markdown.write_text(f"**{caption}**\n\n{to_markdown(table)}")
    latex.write_text(to_latex(table, caption, name))
    return markdown, latex
