"""A run's budget is work (decisions, games, epochs); ``max_train_minutes`` is an opt-in guard that may cut it.

A seeded run does the same work on any machine, so it ends with the same model and the same table.
The wall-clock guard, when a config sets it, is checked between units of work (teacher games,
cloning batches, rollouts); the first check past the limit records what was cut, in words, and
every later phase of training is skipped. The final table's header, ``results.json`` and the run's
last line then say that the result is not the documented one.
"""
from __future__ import annotations

import time


class TimeLimit:
    """The ``max_train_minutes`` guard of one run segment (None: no limit), started when it is made."""

    def __init__(self, minutes: float | None):
        self.minutes = minutes
        self.start = time.monotonic()
        self.cut: str | None = None  # what the guard cut, once it has: "the warm start after 120 of 4000 teacher games"

    @property
    def seconds(self) -> float:
        """Wall time since the guard started."""
        return time.monotonic() - self.start

    @property
    def hit(self) -> bool:
        """Whether the guard has cut the run."""
        return self.cut is not None

    def allows(self, where: str | None = None) -> bool:
        """True while there is time left (always, without a limit). The first call past the limit records
        ``where`` (what was cut, e.g. ``"PPO after 1,200,000 of 2,000,000 decisions"``) and returns False,
        as does every call after it."""
        if self.cut is not None:
            return False
        if self.minutes is None or self.seconds <= 60 * self.minutes:
            return True
        self.cut = where or "training"
        return False

    def message(self) -> str | None:
        """The sentence the run prints and writes when the guard cut it (None when it did not)."""
        if self.cut is None:
            return None
        return (f"stopped by the time limit (max_train_minutes: {self.minutes:g}) in {self.cut}; "
                f"the result is not the documented one")


def count(n: int) -> str:
    """``1234567`` as ``1,234,567``."""
    return f"{int(n):,}"


__all__ = ["TimeLimit", "count"]
