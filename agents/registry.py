"""Baseline agents by name, per game, so configs and CLIs can say ``opponents: heuristic``."""
from __future__ import annotations

import importlib

#: game name -> agent name -> "module:Class"; "random" works for every game
BASELINES: dict[str, dict[str, str]] = {
    "megagem": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "truthful": "gemenvs.agents.megagem:TruthfulAgent",
        "heuristic": "gemenvs.agents.megagem:HeuristicBidder",
        "tuned": "gemenvs.agents.megagem_tuned:TunedBidder",
    },
    "gem": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "greedy": "gemenvs.agents.gem:GemGreedyAgent",
    },
    "gemjam": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "rule": "gemenvs.agents.gemjam:GemJamRuleAgent",
    },
}


def baseline_names(game: str) -> list[str]:
    """Names of the baseline agents available for ``game``."""
    if game not in BASELINES:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(BASELINES))}")
    return list(BASELINES[game])


def make_agent(game: str, name: str, env, seed: int | None = None):
    """Build baseline ``name`` of ``game`` for ``env`` (e.g. ``make_agent("megagem", "heuristic", env)``)."""
    names = baseline_names(game)
    if name not in BASELINES[game]:
        raise ValueError(f"unknown agent {name!r} for {game}; known: {', '.join(names)}")
    module, cls = BASELINES[game][name].split(":")
    return getattr(importlib.import_module(module), cls).for_env(env, seed=seed)
