"""The version of gemenvs (the release in pyproject.toml)."""
__version__ = "0.1.0"
