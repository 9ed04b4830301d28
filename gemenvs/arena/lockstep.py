"""Seeded games played side by side, each agent deciding for every game that waits on it in one call.

:func:`run_match_lockstep` plays the games :func:`~gemenvs.arena.match.run_match` plays (the same seeds,
seat rotation and reseeding, one AEC environment per game) and returns the same
:class:`~gemenvs.arena.match.MatchResult`, game for game; only the calls differ. At every round each
unfinished game offers its one decision, and each agent makes all of its decisions of the round through
its games table (:func:`games_table`):

* an agent with ``batch_games`` (HeuristicBidder and the tuned bidders: their
  :class:`~gemenvs.agents.megagem.batched.BidderGames`) plays with each (game, seat)'s memory in its table;
* a deterministic agent without memory of the game (``per_game_memory`` False, ``deterministic`` True: a
  deterministic PolicyAgent, TruthfulAgent) calls ``act_batch`` on the rows of every game at once;
* any other agent (RandomAgent, a sampling policy, an agent with memory but no table) plays through one
  copy per (game, seat), reset with the seed ``run_match`` resets it with, row by row.

Those tables make the agent's own choices (tests/test_lockstep.py compares whole matches with
``run_match``). A match with a search agent (``needs_state``) is played by ``run_match`` itself.
"""
from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gemenvs.agents.base import Agent, act_batch
from gemenvs.arena.match import MatchResult, agent_label, run_match


def plays_rows_of_any_game(agent: Agent) -> bool:
    """Whether ``agent.act`` depends on its arguments alone (no memory of the game, no randomness), so one
    ``act_batch`` call may hold rows of many games."""
    return (getattr(agent, "per_game_memory", True) is False and getattr(agent, "deterministic", False) is True
            and not getattr(agent, "needs_state", False))


class RowsTable:
    """A games table for an agent that :func:`plays_rows_of_any_game`: ``act_batch`` on the rows of any games."""

    def __init__(self, agent: Agent):
        self.agent = agent

    def reset(self, games=None) -> None:
        """Nothing to forget."""

    def act(self, observations: np.ndarray, action_masks: np.ndarray, games) -> np.ndarray:
        return act_batch(self.agent, observations, action_masks)


class CopiesTable:
    """A games table of copies of ``agent``, one per game, each reset with its own seed (:meth:`start`) and
    asked row by row: what reusing one agent reset at every game's start would choose."""

    def __init__(self, agent: Agent, num_games: int):
        self.agent, self.copies = agent, [None] * int(num_games)

    def start(self, game: int, seed: int) -> None:
        """Game ``game`` starts: a fresh copy of the agent, reset with ``seed``."""
        self.copies[game] = agent = copy.deepcopy(self.agent)
        agent.reset(seed=seed)

    def reset(self, games=None) -> None:
        """Nothing to do here (:meth:`start` gives each game its own copy)."""

    def act(self, observations: np.ndarray, action_masks: np.ndarray, games) -> np.ndarray:
        return np.array([self.copies[g].act(o, m) for g, o, m in zip(games, observations, action_masks)], np.int64)


def games_table(agent: Agent, num_games: int):
    """``agent`` playing ``num_games`` games at once: ``act(observations, masks, games)`` decides rows of those
    games (at most one per game per call) as ``agent.act`` of each game's own instance would."""
    if callable(getattr(agent, "batch_games", None)):
        return agent.batch_games(num_games)
    if plays_rows_of_any_game(agent):
        return RowsTable(agent)
    return CopiesTable(agent, num_games)


def _seat(agent: Agent, num_games: int, tables: list) -> tuple:
    """(table, member) for ``agent``: a member of an existing table that seats other agents too (``add_member``,
    e.g. one BidderGames for the bidders of one family: all their rows in one call), else its own table."""
    if callable(getattr(agent, "batch_games", None)):
        for table in tables:
            if callable(getattr(table, "add_member", None)) and table.num_games == num_games:
                try:
                    return table, table.add_member(agent)
                except ValueError:  # (another kind of bidder: not played by that table)
                    continue
        table = agent.batch_games(num_games)
        return table, (0 if callable(getattr(table, "add_member", None)) else None)
    return games_table(agent, num_games), None


def run_match_lockstep(env_fn: Callable[[], object], focal: Agent, opponents: Sequence[Agent], games: int,
                       seed: int = 0, save_dir: str | os.PathLike | None = None) -> MatchResult:
    """:func:`~gemenvs.arena.match.run_match`'s games and result, all ``games`` played side by side."""
    agents = [focal, *opponents]
    if any(getattr(a, "needs_state", False) for a in agents):
        return run_match(env_fn, focal, opponents, games, seed=seed, save_dir=save_dir)
    n = len(opponents) + 1
    envs = [env_fn() for _ in range(games)]
    seats = []  # per game, the agent (its index in agents) of every seat
    for g in range(games):
        at = g % n
        seats.append(list(range(1, at + 1)) + [0] + list(range(at + 1, n)))
    tables: dict[int, tuple] = {}  # id of an agent -> (its games table, its member index there or None)
    for agent in agents:
        if id(agent) not in tables:
            tables[id(agent)] = _seat(agent, games * n, [t for t, _ in tables.values()])
    index = {name: p for p, name in enumerate(envs[0].possible_agents)}
    for g, env in enumerate(envs):
        env.reset(seed=seed + g)
        for p, i in enumerate(seats[g]):
            table = tables[id(agents[i])][0]
            if isinstance(table, CopiesTable):
                table.start(g * n + p, (seed + g) * 1009 + p)
    finals: list[dict] = [{} for _ in range(games)]
    active = list(range(games))
    while active:
        waiting = []  # (game, seat, observation, mask) of every game's next decision
        for g in active:
            env = envs[g]
            while env.agents:
                name = env.agent_selection
                obs, _, term, trunc, info = env.last()
                if term or trunc:
                    finals[g][name] = info
                    env.step(None)
                    continue
                waiting.append((g, index[name], obs["observation"], obs["action_mask"]))
                break
        actions = {}
        for table in {id(tables[id(agents[seats[g][p]])][0]): tables[id(agents[seats[g][p]])][0]
                      for g, p, _, _ in waiting}.values():
            rows = [w for w in waiting if tables[id(agents[seats[w[0]][w[1]]])][0] is table]
            obs, masks = np.stack([w[2] for w in rows]), np.stack([w[3] for w in rows])
            games_of = np.array([g * n + p for g, p, _, _ in rows], np.int64)
            members = [tables[id(agents[seats[g][p]])][1] for g, p, _, _ in rows]
            chosen = table.act(obs, masks, games_of) if members[0] is None else table.act(obs, masks, games_of, members)
            actions.update({w[0]: int(a) for w, a in zip(rows, chosen)})
        for g, _, _, _ in waiting:
            envs[g].step(actions[g])
        active = [g for g, _, _, _ in waiting]
    folder = None
    if save_dir is not None:
        folder = Path(save_dir)
        folder.mkdir(parents=True, exist_ok=True)
    result = MatchResult()
    for g, env in enumerate(envs):
        if folder is not None:
            from gemenvs.recording import save_game

            raw = env.unwrapped
            save_game(folder / f"game_{seed + g}.jsonl", raw.game, raw.game_state,
                      players=[agent_label(agents[i]) for i in seats[g]])
        me = env.possible_agents[g % n]
        info = finals[g][me]
        winners = info["winners"]
        if me in winners:
            result.wins += 1.0 / len(winners)
        scores = info["scores"]
        result.scores.append(scores[me])
        result.margins.append(scores[me] - max(v for k, v in scores.items() if k != me))
        result.games += 1
        env.close()
    return result


__all__ = ["CopiesTable", "RowsTable", "games_table", "plays_rows_of_any_game", "run_match_lockstep"]
