"""A scalar MegaGem bidder's decisions kept for batched comparisons (tests of BidderGames and the valuation features)."""
from __future__ import annotations


class Recorder:
    """Plays ``agent`` and keeps every (observation, mask, action, ``last_valuation``) of its decisions
    (``last_valuation`` None where the agent set none: reveals, or agents without it)."""

    def __init__(self, agent):
        self.agent, self.rows = agent, []

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, obs, mask):
        self.agent.last_valuation = None
        action = self.agent.act(obs, mask)
        self.rows.append((obs.copy(), mask.copy(), action, self.agent.last_valuation))
        return action
