"""The vocabulary every room shares: the error classes (`core.errors`) and strict config keys
(`core.config_keys`). It imports nothing of the project, so any folder may import it."""
