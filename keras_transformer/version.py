"""The package version (also read by ``pyproject.toml``)."""

__version__ = "0.2.0"
