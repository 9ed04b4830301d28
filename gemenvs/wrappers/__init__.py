"""Gymnasium registration of the suite's games (the single-learner view itself is :mod:`gemenvs.arena.single_agent`)."""
from __future__ import annotations

from gemenvs.wrappers.registration import ENTRY_POINT, register_gymnasium

__all__ = ["ENTRY_POINT", "register_gymnasium"]
