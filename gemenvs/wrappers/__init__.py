"""Wrappers over the suite's PettingZoo environments: the single-learner Gymnasium view.

``import gemenvs`` registers every game with Gymnasium through :mod:`gemenvs.wrappers.registration`,
which imports nothing heavy; :class:`~gemenvs.wrappers.single_agent.SingleAgentEnv` itself is
imported on first use (``gymnasium.make`` or ``from gemenvs.wrappers import SingleAgentEnv``).
Nothing here imports torch or the training package.
"""
from __future__ import annotations

from gemenvs.wrappers.registration import ENTRY_POINT, register_gymnasium

_LAZY = ("SingleAgentEnv", "FixedOpponents", "OpponentSampler", "build_opponent", "is_policy_path", "make_aec_env")

__all__ = ["ENTRY_POINT", "register_gymnasium", *_LAZY]


def __getattr__(name: str):
    """Import the single-learner view only when one of its names is used."""
    if name in _LAZY:
        from gemenvs.wrappers import single_agent

        return getattr(single_agent, name)
    raise AttributeError(f"module 'gemenvs.wrappers' has no attribute {name!r}")
