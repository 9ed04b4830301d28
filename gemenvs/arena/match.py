"""Play seeded games between agents and summarise them (win rates with 95% intervals, margins)."""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gemenvs.agents.base import Agent, decide, end_game, forfeit_of, standing


class TimedAgent:
    """Wraps an agent and adds up the CPU time (``seconds``) and count (``decisions``) of its decisions."""

    def __init__(self, agent: Agent):
        self.agent, self.seconds, self.decisions = agent, 0.0, 0

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    @property
    def needs_state(self) -> bool:
        """Whether the timed agent is a search agent (see :func:`decide`)."""
        return bool(getattr(self.agent, "needs_state", False))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        t = time.thread_time()
        action = self.agent.act(observation, action_mask)
        self.seconds += time.thread_time() - t
        self.decisions += 1
        return action

    def act_with_state(self, state, seat: int, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The timed agent's ``act_with_state`` (a search agent's decision), timed like :meth:`act`."""
        t = time.thread_time()
        action = self.agent.act_with_state(state, seat, observation, action_mask)
        self.seconds += time.thread_time() - t
        self.decisions += 1
        return action

    @property
    def forfeit(self) -> str | None:
        """The timed agent's forfeit of its current game (:func:`~gemenvs.agents.base.forfeit_of`)."""
        return forfeit_of(self.agent)

    def game_over(self, state, seat: int, forfeits=None) -> None:
        """Passed on to the timed agent (:func:`~gemenvs.agents.base.end_game`)."""
        hook = getattr(self.agent, "game_over", None)
        if hook is not None:
            hook(state, seat, forfeits)

    def close(self) -> None:
        """Passed on to the timed agent (:func:`~gemenvs.agents.base.close_agents`)."""
        close = getattr(self.agent, "close", None)
        if callable(close):
            close()


def play_game(env, agents: Sequence[Agent], seed: int) -> dict:
    """Play one game on an AEC ``env`` with ``agents[i]`` in seat ``i``; return the final infos.
    A search agent (``needs_state``) is handed the engine state, ``env.unwrapped.game_state`` (:func:`decide`);
    at the end every agent hears that the game is over (:func:`~gemenvs.agents.base.end_game`)."""
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
        p = seat[name]
        env.step(decide(agents[p], env.unwrapped.game_state, p, obs["observation"], obs["action_mask"]))
    end_game(agents, env.unwrapped.game_state)
    return final


def play_engine_game(game, agents: Sequence[Agent], seed: int, agent_seeds: Sequence[int] | None = None):
    """Play one game directly on a core ``Game`` engine with ``agents[i]`` in seat ``i``; return the final state.

    The seat to act is the first of ``game.to_act`` (the AEC environment's order), each agent sees
    ``game.observe`` and ``game.legal_mask`` of its own seat only, and every action is checked by
    ``game.apply``; so ``state.log`` is the decision log and the game replays from ``seed`` + log.
    A search agent (``needs_state``) is handed ``state`` too (:func:`decide`).
    ``agent_seeds[i]`` (default ``seed * 1009 + i``) reseeds seat ``i``'s agent first. At the end every agent
    hears that the game is over (:func:`~gemenvs.agents.base.end_game`); a seat that forfeited (a protocol
    agent's program that failed: :func:`~gemenvs.agents.base.forfeit_of`) has lost it.
    """
    state = game.new_state(seed)
    for i, agent in enumerate(agents):
        agent.reset(seed=int(agent_seeds[i]) if agent_seeds is not None else seed * 1009 + i)
    while not game.is_over(state):
        p = game.to_act(state)[0]
        game.apply(state, p, decide(agents[p], state, p, game.observe(state, p), game.legal_mask(state, p)))
    end_game(agents, state)
    return state


def rotated_wins(game, focal: Agent, opponents: Sequence[Agent], seeds: Sequence[int]) -> float:
    """Wins of ``focal`` in engine games ``seeds`` (:func:`play_engine_game`), in seat ``seed % n`` with
    ``opponents`` in the other seats in order; a shared win counts 1 / (number of winners)."""
    wins = 0.0
    n = len(opponents) + 1
    for seed in seeds:
        p = seed % n
        players = list(opponents[:p]) + [focal] + list(opponents[p:])
        winners, _ = standing(game, play_engine_game(game, players, seed), [forfeit_of(a) for a in players])
        wins += (p in winners) / len(winners) if winners else 0.0
    return wins


def map_in_processes(workers: int, fn: Callable, *iterables) -> list:
    """``list(map(fn, *iterables))``, spread over ``workers`` processes (in this process for one: no pickling,
    so scripts loaded from a file path can run it in tests)."""
    if workers <= 1:
        return list(map(fn, *iterables))
    from gemenvs.core.entry import game_pool

    with game_pool(workers) as pool:
        return list(pool.map(fn, *iterables))


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
    #: the focal agent's forfeits (a protocol agent's program that failed): game index -> reason
    forfeits: dict[int, str] = field(default_factory=dict)

    @property
    def timeouts(self) -> int:
        """The focal agent's forfeits for being too slow (a decision's or the game's time limit)."""
        return sum(1 for r in self.forfeits.values() if r in ("timeout", "game timeout"))

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


def agent_label(agent) -> str:
    """A short name of an agent for saved games and tables: its ``name`` (``"heuristic"``), else its class name."""
    inner = getattr(agent, "agent", None)  # a TimedAgent names the agent it times
    if inner is not None and not hasattr(agent, "name"):
        return agent_label(inner)
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name and name != "agent":
        return name
    return type(agent).__name__


def run_match(env_fn: Callable[[], object], focal: Agent, opponents: Sequence[Agent], games: int,
              seed: int = 0, save_dir: str | os.PathLike | None = None) -> MatchResult:
    """Play ``games`` games with ``focal`` rotating through every seat among ``opponents``.

    With ``save_dir`` every game is also written there as a saved game (:mod:`gemenvs.recording`),
    ``game_<seed>.jsonl`` (the folder is created if needed; nothing is written elsewhere). A seat that
    forfeits a game (:func:`~gemenvs.agents.base.forfeit_of`) loses it; the focal agent's forfeits are in
    ``forfeits``.
    """
    env = env_fn()
    n = len(opponents) + 1
    result = MatchResult()
    folder = None
    if save_dir is not None:
        folder = Path(save_dir)
        folder.mkdir(parents=True, exist_ok=True)
    for g in range(games):
        seat = g % n
        players = list(opponents[:seat]) + [focal] + list(opponents[seat:])
        final = play_game(env, players, seed + g)
        if folder is not None:
            from gemenvs.recording import save_game

            raw = env.unwrapped
            save_game(folder / f"game_{seed + g}.jsonl", raw.game, raw.game_state,
                      players=[agent_label(a) for a in players])
        me = env.possible_agents[seat]
        info = final[me]
        winners = info["winners"]
        forfeits = [forfeit_of(a) for a in players]
        if any(forfeits):
            raw = env.unwrapped
            winners = [env.possible_agents[w] for w in standing(raw.game, raw.game_state, forfeits)[0]]
            if forfeits[seat] is not None:
                result.forfeits[g] = forfeits[seat]
        if me in winners:
            result.wins += 1.0 / len(winners)
        scores = info["scores"]
        result.scores.append(scores[me])
        result.margins.append(scores[me] - max(v for k, v in scores.items() if k != me))
        result.games += 1
    env.close()
    return result
