"""Moved to :mod:`gemenvs.wrappers.registration`; this re-export keeps the old import path working."""
from gemenvs.wrappers.registration import ENTRY_POINT, register_gymnasium  # noqa: F401

__all__ = ["ENTRY_POINT", "register_gymnasium"]
