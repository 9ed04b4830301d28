"""The Agent protocol: an agent maps one seat's observation and action mask to an action id."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from gemenvs.core.spec import ActionSpec, ObservationSpec


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act`` and ``reset`` plays: it sees only its own seat's observation."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Choose a legal action id given the seat's flat observation and int8 action mask."""

    def reset(self, seed: int | None = None) -> None:
        """Forget per-game memory and reseed the agent's own randomness."""


class BaseAgent:
    """Convenience base: holds the observation spec, the action spec, the number of actions and a seeded RNG."""

    #: short name used in result tables and configs
    name = "agent"

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None):
        self.spec = spec
        self.action_spec = action_spec
        if num_actions is None and action_spec is not None:
            num_actions = action_spec.size
        self.num_actions = num_actions
        self.rng = np.random.default_rng(seed)

    @classmethod
    def for_env(cls, env, seed: int | None = None, **kwargs):
        """Build the agent for an environment (reads only its observation spec, action spec and action space)."""
        agent = env.possible_agents[0]
        return cls(spec=env.unwrapped.observation_spec, num_actions=int(env.action_space(agent).n), seed=seed,
                   action_spec=env.unwrapped.action_spec, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    #: whether ``act`` reads memory of the game in progress (what earlier calls saw). Such an agent
    #: plays one game at a time, so a batched environment keeps one instance per game and seat and
    #: resets it when its game starts. False: ``act`` depends only on its arguments and the agent's
    #: RNG, so one instance plays rows of many games at once (:meth:`act_batch`). True unless an
    #: agent says otherwise (the safe default).
    per_game_memory = True

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions ``(G,)`` int64 for ``G`` rows of observations ``(G, obs_dim)`` and masks ``(G, num_actions)``.

        The same choices as :meth:`act` called on the rows in order, drawing on the same RNG
        (agents override this with a vectorized version that keeps that promise). Rows are
        independent decisions: for an agent with ``per_game_memory`` they must come from one game.
        """
        return _act_rows(self, observations, action_masks)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal actions; raises if the mask allows none (the agent is not to act)."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("the action mask allows no action: this agent is not to act now")
    return legal


def act_batch(agent: Agent, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``agent.act_batch`` when the agent has one, else :meth:`Agent.act` row by row: actions ``(G,)`` int64."""
    method = getattr(agent, "act_batch", None)
    return method(observations, action_masks) if method is not None else _act_rows(agent, observations, action_masks)


def check_batch(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(observations, action_masks)`` as 2-D arrays with one row per decision (a ValueError says what is wrong)."""
    obs, masks = np.asarray(observations), np.asarray(action_masks)
    if obs.ndim != 2 or masks.ndim != 2 or len(obs) != len(masks):
        raise ValueError(f"act_batch takes observations (G, obs_dim) and masks (G, num_actions) with the same G; "
                         f"got shapes {obs.shape} and {masks.shape}")
    return obs, masks


def _act_rows(agent: Agent, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    obs, masks = check_batch(observations, action_masks)
    return np.array([agent.act(o, m) for o, m in zip(obs, masks)], dtype=np.int64).reshape(len(obs))


def legal_counts(action_masks: np.ndarray) -> np.ndarray:
    """Legal actions per row of ``action_masks`` ``(G, num_actions)``; raises if a row allows none."""
    counts = np.count_nonzero(action_masks, axis=1)
    if counts.size and not counts.all():
        row = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"row {row}: the action mask allows no action: this agent is not to act now")
    return counts


def decide(agent: Agent, state, seat: int, observation: np.ndarray, action_mask: np.ndarray) -> int:
    """``agent``'s action for ``seat``: the protocol of search agents lives here.

    An agent whose ``needs_state`` attribute is true (a search agent, e.g.
    :class:`~gemenvs.agents.search.ISMCTSAgent`) gets ``act_with_state(state, seat, observation,
    action_mask)`` with the engine ``state`` of the game in progress; it must not change that state
    and must decide only from what ``seat`` can see (it redraws the hidden part with the game's
    ``resample_hidden`` before searching). Every other agent gets ``act(observation, action_mask)``.
    """
    if getattr(agent, "needs_state", False):
        return agent.act_with_state(state, seat, observation, action_mask)
    return agent.act(observation, action_mask)


# ----------------------------------------------------------------------------- the end of a game, and forfeits

def forfeit_of(agent) -> str | None:
    """Why ``agent`` forfeited its current (or last) game, or None: an agent with a ``forfeit`` attribute (a
    protocol agent whose program timed out, crashed or answered badly; :mod:`gemenvs.agents.protocol`)."""
    reason = getattr(agent, "forfeit", None)
    return reason if isinstance(reason, str) else None


def _ranks(keys) -> list[float]:
    """Place of every seat by ``keys`` (1 = first, the highest key); tied seats share the mean of their places."""
    return [1 + sum(1 for o in keys if o > k) + 0.5 * (sum(1 for o in keys if o == k) - 1) for k in keys]


def _plain(key):
    return list(key) if isinstance(key, (tuple, list)) else float(key)


def standing(game, state, forfeits=None) -> tuple[list[int], list[float]]:
    """Winners and ranks (1 = first; tied seats share the mean of their places) of a finished game in which
    every seat with a reason in ``forfeits`` (one entry per seat, None for a seat that played on) lost: it
    is never a winner and ranks after every other seat. Without forfeits: the game's own winners, and the
    ranks of its rank keys (the scores unless the rules break ties)."""
    res = game.results(state)
    keys = [_plain(k) for k in (res.rank_keys if res.rank_keys is not None else res.scores)]
    out = [f is not None for f in forfeits] if forfeits is not None else [False] * len(keys)
    if not any(out):
        return [int(w) for w in res.winners], _ranks(keys)
    ranks = _ranks([(0 if o else 1, k) for o, k in zip(out, keys)])
    winners = [int(w) for w in res.winners if not out[w]]
    if not winners and not all(out):
        best = min(r for r, o in zip(ranks, out) if not o)
        winners = [p for p, (r, o) in enumerate(zip(ranks, out)) if not o and r == best]
    return winners, ranks


def end_game(agents, state) -> list[str | None]:
    """Tell the agents of a finished game (``agents[p]`` in seat ``p``; None for a seat played otherwise) that it
    is over: each with a ``game_over(state, seat, forfeits)`` method is called (a protocol agent sends its
    program the result). The forfeit reason of every seat (:func:`forfeit_of`), gathered first."""
    forfeits = [None if a is None else forfeit_of(a) for a in agents]
    for p, agent in enumerate(agents):
        hook = getattr(agent, "game_over", None)
        if hook is not None:
            hook(state, p, forfeits)
    return forfeits


def close_agents(agents) -> None:
    """Close every agent that holds something outside this process (``close()``: a protocol agent ends its
    program); each distinct agent once."""
    seen = set()
    for agent in agents:
        if agent is not None and id(agent) not in seen:
            seen.add(id(agent))
            close = getattr(agent, "close", None)
            if callable(close):
                close()
