"""Fixtures of the fault tests of the run side."""

from __future__ import annotations

import pytest
from harness_runs import Journaled


@pytest.fixture
def journaled(tmp_path) -> Journaled:
    """Runs into `tmp_path/journal.sqlite`."""
    return Journaled(tmp_path / "journal.sqlite")
