"""Play seeded games between agents and summarise them (win rates with 95% intervals, margins)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gemenvs.agents.base import Agent


def play_game(env, agents: Sequence[Agent], seed: int) -> dict:
    """Play one game on an AEC ``env`` with ``agents[i]`` in seat ``i``; return the final infos."""
    env.reset(seed=seed)
    for i, agent in enumerate(agents):
        agent.reset(seed=seed * 1009 + i)
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    final = {}
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            final[name] = info
            env.step(None)
            continue
        env.step(agents[seat[name]].act(obs["observation"], obs["action_mask"]))
    return final


def wilson_interval(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score 95% interval of a proportion ``wins / n``."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class MatchResult:
    """Outcome of a match of one focal agent against fixed opponents over many games."""

    games: int = 0
    wins: float = 0.0  # a shared win counts as 1/(number of winners)
    margins: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        """Fraction of games won (shared wins split)."""
        return self.wins / self.games if self.games else 0.0

    @property
    def win_ci(self) -> tuple[float, float]:
        """95% Wilson interval of the win rate."""
        return wilson_interval(self.wins, self.games)

    @property
    def mean_margin(self) -> float:
        """Mean of (own score - best other score)."""
        return float(np.mean(self.margins)) if self.margins else 0.0

    @property
    def margin_ci(self) -> tuple[float, float]:
        """Normal-approximation 95% interval of the mean margin."""
        if len(self.margins) < 2:
            return (self.mean_margin, self.mean_margin)
        half = 1.96 * float(np.std(self.margins, ddof=1)) / math.sqrt(len(self.margins))
        return (self.mean_margin - half, self.mean_margin + half)


def run_match(env_fn: Callable[[], object], focal: Agent, opponents: Sequence[Agent], games: int,
              seed: int = 0) -> MatchResult:
    """Play ``games`` games with ``focal`` rotating through every seat among ``opponents``."""
    env = env_fn()
    n = len(opponents) + 1
    result = MatchResult()
    for g in range(games):
        seat = g % n
        players = list(opponents[:seat]) + [focal] + list(opponents[seat:])
        final = play_game(env, players, seed + g)
        me = env.possible_agents[seat]
        info = final[me]
        winners = info["winners"]
        if me in winners:
            result.wins += 1.0 / len(winners)
        scores = info["scores"]
        result.scores.append(scores[me])
        result.margins.append(scores[me] - max(v for k, v in scores.items() if k != me))
        result.games += 1
    env.close()
    return result
