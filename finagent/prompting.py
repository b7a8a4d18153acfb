"""FinAgent's prompt templates (`finagent/prompts/*.md`): loaded once, filled with `string.Template`.

One template per step (named as the step in `finagent.outputs.STEPS`), the system prompt and one
file per trader persona. `templates_digest` hashes them all, so an edited prompt changes the
framework's fingerprint and its journaled decisions are made afresh.
"""

from __future__ import annotations

import functools
from pathlib import Path
from string import Template

from core.prompt_files import prompts_digest

PROMPTS = Path(__file__).resolve().parent / "prompts"


@functools.cache
def template(name: str) -> Template:
    """The template `prompts/<name>.md`."""
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8").strip())


def render(name: str, **fields: str) -> str:
    """Template `name` with every `$field` filled (a missing one is a KeyError naming it)."""
    return template(name).substitute(**fields)


def templates_digest() -> str:
    """SHA-256 over every template file's name and text."""
    return prompts_digest(PROMPTS)


def system_prompt(persona: str) -> str:
    """The system prompt of every step: the same text for every decision (the user message names the
    stock and the date), so an engine's prefix store can reuse its keys and values."""
    return render("system", persona=render(f"persona_{persona}"))
