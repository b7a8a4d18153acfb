"""The user-error family: what a user can fix (a config value, a data file, a missing path, a
plugin that breaks its contract), as opposed to a bug.

Every `UserError` carries a one-line message that names the file, row/date or field and what is
wrong; the command-line entry points print that line as `error: ...` and exit with code 2
(`exit_on_user_error`). Anything else that escapes a command is a bug: it keeps its traceback
and the command exits with code 1. `DataError` and `ConfigError` are also `ValueError`s, so that
pydantic validators may raise them and code that catches `ValueError` still sees them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import ValidationError

USER_ERROR_EXIT = 2
"""The exit code of a command stopped by a `UserError` (a bug exits with 1 and its traceback)."""


class UserError(Exception):
    """Something the user can fix; its message is one line naming where and what."""


class DataError(UserError, ValueError):
    """Bad input data: a file, row, column or window that cannot be used as it is."""


class ConfigError(UserError, ValueError):
    """A configuration value that cannot be honoured (unknown ticker, empty window, ...)."""


class PluginError(UserError, ValueError):
    """A plugin (an installed framework package) that cannot be loaded or breaks the plugin contract."""


class MissingFileError(UserError, FileNotFoundError):
    """A file or folder named by the user (a model, a checkpoint, a data path) that is not there."""


class InUseError(UserError):
    """A file that another process holds (a run directory's journal being written by another run)."""


def one_line(error: BaseException) -> str:
    """`error` as one readable line: pydantic validation errors as `field: problem; ...`,
    anything else as the first line of its message."""
    if isinstance(error, ValidationError):
        return f"{error.title}: " + "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in error.errors())
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


@contextmanager
def exit_on_user_error() -> Iterator[None]:
    """Turn a `UserError` into its one `error:` line on stderr and exit code 2; let anything else
    (a bug) propagate with its traceback."""
    try:
        yield
    except UserError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        sys.exit(USER_ERROR_EXIT)
