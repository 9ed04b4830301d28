"""Everything that seats agents at a table: matches, the single-learner Gymnasium view, batched self-play, the
opponent pool, evaluations, tournaments and the bidding benchmark.

Light names are imported here; the heavier views load on first use (``from gemenvs.arena import SingleAgentEnv``
imports Gymnasium's wrapper only then). Nothing here imports torch or the training package.
"""
from __future__ import annotations

import importlib

from gemenvs.arena.match import MatchResult, TimedAgent, play_engine_game, play_game, rotated_wins, run_match, wilson_interval

#: name -> module of the names loaded on first use
_LAZY = {
    "SingleAgentEnv": "gemenvs.arena.single_agent",
    "FixedOpponents": "gemenvs.arena.single_agent",
    "OpponentSampler": "gemenvs.arena.single_agent",
    "AgentSpecError": "gemenvs.arena.resolve",
    "agent_label": "gemenvs.arena.resolve",
    "resolve_agent": "gemenvs.arena.resolve",
    "make_aec_env": "gemenvs.arena.single_agent",
    "BatchedSelfPlay": "gemenvs.arena.batched_selfplay",
    "BatchedVectorEnv": "gemenvs.arena.batched_selfplay",
    "make_vector_env": "gemenvs.arena.batched_selfplay",
    "BatchedVecEnv": "gemenvs.arena.batched_vec_env",
    "PoolOpponents": "gemenvs.arena.pool",
    "evaluate": "gemenvs.arena.evaluate",
    "run_tournament": "gemenvs.arena.tournament",
    "make_spec": "gemenvs.arena.tournament",
    "run_benchmark": "gemenvs.arena.benchmark",
}

__all__ = ["MatchResult", "TimedAgent", "play_engine_game", "play_game", "rotated_wins", "run_match", "wilson_interval",
           *_LAZY]


def __getattr__(name: str):
    """Load a name of :data:`_LAZY` from its module on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gemenvs.arena' has no attribute {name!r}")
