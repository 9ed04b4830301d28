"""Terminal reward schemes shared by every game: win, score, rank, margin."""
from __future__ import annotations

from collections.abc import Sequence

from gemenvs.core.engine import check_choice

REWARD_MODES = ("win", "score", "rank", "margin")


def check_reward_mode(mode: str) -> str:
    """Validate a ``reward`` option value (a str, one of :data:`REWARD_MODES`)."""
    return check_choice("reward", mode, REWARD_MODES)


def terminal_rewards(mode: str, scores: Sequence[float], scale: float, keys: Sequence | None = None) -> list[float]:
    """Per-player rewards at the end of a game.

    ``keys`` (default: the scores) order the players for ``win`` and ``rank``, so a game whose
    rulebook breaks score ties can pass (score, tiebreak) tuples.
    ``win``: +1 for every player with the top key (ties share the win), -1 for the others.
    ``score``: own score / ``scale``.
    ``rank``: +1 for first, -1 for last, linear between; tied players share the mean of their ranks.
    ``margin``: (own score - best other score) / ``scale``.
    """
    n = len(scores)
    ranked = list(scores) if keys is None else list(keys)
    if mode == "win":
        best = max(ranked)
        return [1.0 if k == best else -1.0 for k in ranked]
    if mode == "score":
        return [float(s) / scale for s in scores]
    if mode == "rank":
        if n == 1:
            return [0.0]
        out = []
        for s in ranked:
            above = sum(1 for t in ranked if t > s)
            tied = sum(1 for t in ranked if t == s)
            mean_rank = above + (tied - 1) / 2.0  # 0 = first
            out.append(1.0 - 2.0 * mean_rank / (n - 1))
        return out
    if mode == "margin":
        out = []
        for i, s in enumerate(scores):
            other = max(t for j, t in enumerate(scores) if j != i)
            out.append(float(s - other) / scale)
        return out
    raise ValueError(f"unknown reward mode {mode!r}")
