"""RandomAgent: uniform over the legal actions, for any game of the suite."""
from __future__ import annotations

import numpy as np

from gemenvs.agents.base import BaseAgent, check_batch, legal_actions, legal_counts

_U32 = np.uint64(0xFFFFFFFF)


class RandomAgent(BaseAgent):
    """Plays a uniformly random legal action."""

    name = "random"
    per_game_memory = False

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The choices :meth:`act` makes on the rows in order, from the same RNG stream, in one pass.

        ``rng.integers(k)`` draws one 32-bit word of the generator and keeps ``(word * k) >> 32``
        (Lemire's method; nothing is drawn when ``k`` is 1), redrawing only when the low half of
        ``word * k`` falls below ``(2**32 - k) % k``, a chance under ``k / 2**32``. So the words of
        all rows are drawn at once; in the rare batch where a row would redraw, the generator is
        put back and the rows are played one by one. Either way the generator ends where the
        calls of ``act`` row by row leave it (tested).
        """
        _, masks = check_batch(observations, action_masks)
        counts = legal_counts(masks)
        if len(masks) < 8:  # a few rows: act row by row is quicker than the numpy pass
            return super().act_batch(observations, action_masks)
        choose = counts > 1
        k = counts[choose].astype(np.uint64)
        saved = self.rng.bit_generator.state
        words = self.rng.integers(0, 1 << 32, size=k.size, dtype=np.uint64)
        scaled = words * k
        if np.any((scaled & _U32) < ((np.uint64(1 << 32) - k) % k)):
            self.rng.bit_generator.state = saved
            return super().act_batch(observations, action_masks)
        pick = np.zeros(len(masks), np.int64)
        pick[choose] = (scaled >> np.uint64(32)).astype(np.int64)
        # the pick-th legal action of each row: the first column whose running count of legal ones exceeds pick
        running = np.cumsum(masks != 0, axis=1)
        return np.argmax(running > pick[:, None], axis=1).astype(np.int64)
