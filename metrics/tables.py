"""Rendering result tables as Markdown and LaTeX, and formatting numbers with their CIs.

Cells are formatted to strings first (:func:`format_value`, :func:`format_ci`,
:func:`format_rate`), so the Markdown and the LaTeX version of a table show the same digits.
An interval printed without fixed digits gets as many decimals as show its width to two
significant digits (a 500-point-wide ARR interval prints no decimals). A rate always prints
with its count, and not at all when the count is below a minimum. Missing values print as
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
    """``value * scale`` with ``digits`` decimals (a value that rounds to zero has no sign); ``--`` for NaN/None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    text = f"{value * scale:.{digits}f}"
    return text.lstrip("-") if float(text) == 0.0 else text


def ci_decimals(low: float, high: float, scale: float = 1.0, significant: int = 2, most: int = 4) -> int:
    """Decimals that show the width of [low, high] x ``scale`` to ``significant`` digits, within [0, ``most``]."""
    width = abs(high - low) * scale
    if not math.isfinite(width) or width == 0.0:
        return min(1, most)
    return int(min(max(significant - 1 - math.floor(math.log10(width)), 0), most))


def format_ci(
    value: float, low: float, high: float, scale: float = 1.0, digits: int | None = None, marker: str = ""
) -> str:
    """``value [low, high]marker`` scaled by ``scale`` (100 for %), ``digits`` decimals (None: :func:`ci_decimals`)."""
    digits = ci_decimals(low, high, scale) if digits is None else digits
    point = format_value(value, scale, digits)
    if point == MISSING:
        return MISSING
    return f"{point} [{format_value(low, scale, digits)}, {format_value(high, scale, digits)}]{marker}"


def format_rate(successes: float, count: float, min_count: int = 5, scale: float = 100.0, digits: int = 1) -> str:
    """``rate (n=count)`` with rate = successes / count x ``scale``; ``-- (n=count)`` when count < ``min_count``."""
    count = 0 if count is None or (isinstance(count, float) and math.isnan(count)) else int(count)
    if count < max(min_count, 1):
        return f"{MISSING} (n={count})"
    return f"{format_value(successes / count, scale, digits)} (n={count})"


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
