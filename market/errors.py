"""Errors raised on bad market data or configuration.

Every error carries a one-line message that names the file, row/date or field and what is
wrong; the command-line entry points print that line and exit with a non-zero code.
"""


class DataError(ValueError):
    """Bad input data: a file, row, column or window that cannot be used as it is."""


class ConfigError(ValueError):
    """A configuration value that cannot be honoured (unknown ticker, empty window, ...)."""
