"""A folder of prompt templates (`<role>.md`) and the digest a framework's fingerprint covers.

    digest = SHA-256 over, for every `*.md` file in name order: name ‖ 0x00 ‖ bytes ‖ 0x00
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable


def package_prompts(package: str) -> Traversable:
    """The `prompts` folder shipped inside `package`."""
    return resources.files(package) / "prompts"


@cache
def read_template(folder: Traversable, role: str) -> str:
    """The text of `folder/<role>.md`, stripped."""
    return (folder / f"{role}.md").read_text(encoding="utf-8").strip()


def prompts_digest(folder: Traversable) -> str:
    """SHA-256 over every template file's name and text (module docstring)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.endswith(".md"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
