"""RandomAgent: uniform over the legal actions, for any game of the suite."""
from __future__ import annotations

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions


class RandomAgent(BaseAgent):
    """Plays a uniformly random legal action."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        return int(legal[self.rng.integers(legal.size)])
