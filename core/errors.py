"""Errors raised on bad market data or configuration.

Every error carries a one-line message that names the file, row/date or field and what is
wrong; the command-line entry points print that line and exit with a non-zero code.
"""

from pydantic import ValidationError


class DataError(ValueError):
    """Bad input data: a file, row, column or window that cannot be used as it is."""


class ConfigError(ValueError):
    """A configuration value that cannot be honoured (unknown ticker, empty window, ...)."""


def one_line(error: BaseException) -> str:
    """`error` as one readable line: pydantic validation errors as `field: problem; ...`,
    anything else as the first line of its message."""
    if isinstance(error, ValidationError):
        return f"{error.title}: " + "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in error.errors())
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
