"""A search agent for every game of the suite: information-set Monte Carlo tree search (ISMCTS).

Protocol for search agents (the match runner, :mod:`gemenvs.arena.match`, follows it): an agent
with the class attribute ``needs_state = True`` is asked for its decisions through
``act_with_state(state, seat, observation, action_mask)``, ``state`` being the engine state of the
game in progress (never to be mutated) and the rest what :meth:`Agent.act` gets. Such an agent may
only use what ``seat`` can see: :class:`ISMCTSAgent` first redraws everything hidden from its seat
through the game's ``resample_hidden(state, seat, rng)`` and never reads the state it was handed
again, so its decisions are the same for every state its seat cannot tell apart (a test re-deals
the hidden part and checks this). That takes a ``resample_hidden`` whose draw depends only on what
the observer sees and on ``rng`` (MegaGem's does).

The search (single-observer ISMCTS, Cowling, Powley & Whitehouse 2012, with the other seats
played by the rollout policy): each simulation takes one of the sampled states
(``determinizations`` of them, used in turn), walks down the tree of the agent's own decisions,
choosing by UCT among the candidate actions of each node, lets the rollout policy play every
other seat, adds one node, plays the rest of the game with the rollout policy for every seat,
and adds the final reward of the agent's seat to every edge it took. A node is one information
set of the agent's seat: its observation and mask at one of its own decisions (a child is keyed
by the action that led to it and that observation, so chance and hidden moves in between are
folded in). Progressive widening (``widening``) makes a node with ``n`` visits consider the
``1 + floor(widening * sqrt(n))`` legal actions whose ids lie nearest the rollout policy's own
choice (games lay related actions side by side, e.g. bid amounts), so a small budget refines the
baseline's choice instead of spreading over every bid. The decision is the most visited root
action (ties: higher mean reward, then the lower id).
"""
from __future__ import annotations

import importlib
import inspect
import math
import os
import re
from pathlib import Path

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions
from gemenvs.core.rewards import terminal_rewards

#: what a simulation's final reward for the agent's seat is
REWARDS = ("win", "margin", "score", "rank")


class ISMCTSAgent(BaseAgent):
    """Information-set MCTS over a core :class:`~gemenvs.core.engine.Game` (see the module docstring).

    Args:
        game: the engine of the game played (``env.unwrapped.game``; :meth:`for_env` passes it).
        simulations: simulations (one playout to the end of the game each) per decision, >= 1.
        determinizations: how many hidden states are sampled per decision (simulations use them in
            turn); default one per simulation; 1..simulations.
        rollout: policy of the other seats in the tree and of every seat in the playouts:
            ``"random"``, ``"heuristic"`` (the game's baseline: HeuristicBidder for MegaGem,
            GemGreedyAgent for GEM, GemJamRuleAgent for Gem Jam), another baseline name of the game
            (e.g. ``"tuned"``), or the path of a trained policy (``.zip`` or ``.npz``, sampled).
        exploration: the UCT constant ``c`` in ``mean + c * sqrt(ln N / n)``, >= 0 (the default suits
            ``"margin"``, whose values spread over a few tenths; about 0.7 suits ``"win"``).
        widening: progressive widening coefficient (> 0), or None to consider every legal action.
        reward: the playout's value for the agent's seat: ``"win"`` (1, shared wins split, else 0),
            ``"margin"`` (own score minus the best other, over the game's ``score_scale``),
            ``"score"`` or ``"rank"`` (as the environments' reward modes).
        seed: seed of the agent's own numpy Generator (every draw of the search comes from it).
    """

    name = "ismcts"
    #: the match runner hands this agent the engine state (see the module docstring)
    needs_state = True

    def __init__(self, game, simulations: int = 64, determinizations: int | None = None,
                 rollout: str | os.PathLike = "heuristic", exploration: float = 0.25,
                 widening: float | None = 1.0, reward: str = "margin", seed: int | None = None,
                 spec=None, num_actions: int | None = None, action_spec=None):
        if not hasattr(game, "resample_hidden") or not hasattr(game, "legal_mask"):
            raise TypeError(f"ISMCTSAgent searches a core Game engine (env.unwrapped.game); got {type(game).__name__}")
        super().__init__(game.spec if spec is None else spec, game.num_actions if num_actions is None else num_actions,
                         seed, game.action_spec if action_spec is None else action_spec)
        self.game = game
        self.simulations = _positive_int("simulations", simulations)
        if determinizations is not None:
            determinizations = _positive_int("determinizations", determinizations)
            if determinizations > self.simulations:
                raise ValueError(f"determinizations must be at most simulations ({self.simulations}); "
                                 f"got {determinizations}")
        self.determinizations = determinizations
        if isinstance(exploration, bool) or not isinstance(exploration, (int, float)) \
                or not math.isfinite(exploration) or exploration < 0:
            raise ValueError(f"exploration must be a finite number >= 0; got {exploration!r}")
        self.exploration = float(exploration)
        if widening is not None and (isinstance(widening, bool) or not isinstance(widening, (int, float))
                                     or not math.isfinite(widening) or widening <= 0):
            raise ValueError(f"widening must be None or a finite number > 0; got {widening!r}")
        self.widening = None if widening is None else float(widening)
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}; got {reward!r}")
        self.reward = reward
        self.rollout = rollout
        self._policies = [_rollout_policy(game, rollout) for _ in range(game.num_players)]
        #: facts of the last search: simulations, determinizations, visits per root action, decisions played
        self.last_search: dict = {}

    @classmethod
    def for_env(cls, env, seed: int | None = None, **kwargs) -> "ISMCTSAgent":
        """The agent for an environment: it searches ``env.unwrapped.game`` (kwargs: see the class)."""
        return cls(env.unwrapped.game, seed=seed, **kwargs)

    def __repr__(self) -> str:
        return (f"ISMCTSAgent(simulations={self.simulations}, determinizations={self.determinizations}, "
                f"rollout={str(self.rollout)!r}, exploration={self.exploration}, widening={self.widening}, "
                f"reward={self.reward!r})")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Not available: a search agent decides from the engine state (:meth:`act_with_state`)."""
        raise TypeError("ISMCTSAgent needs the engine state: play it through gemenvs.arena.match (play_game, "
                        "play_engine_game, run_match), which call act_with_state for agents with needs_state = True")

    # ------------------------------------------------------------------ deciding

    def act_with_state(self, state, seat: int, observation: np.ndarray | None = None,
                       action_mask: np.ndarray | None = None) -> int:
        """A legal action of ``seat`` found by searching states its seat cannot tell from ``state``.

        ``state`` is only passed to ``resample_hidden``: the search sees the sampled states alone.
        ``observation`` and ``action_mask`` (optional) must be the seat's own, as a check.
        """
        game = self.game
        samples = [game.resample_hidden(state, seat, self.rng) for _ in range(self.determinizations or 1)]
        del state  # from here on, only what the seat's view allows
        first = samples[0]
        mask = game.legal_mask(first, seat)
        if action_mask is not None and not np.array_equal(np.asarray(action_mask) != 0, mask != 0):
            raise ValueError("action_mask is not the legal mask of this seat in this state")
        if observation is not None and not np.array_equal(np.asarray(observation, np.float32), game.observe(first, seat)):
            raise ValueError("observation is not this seat's observation of this state")
        legal = legal_actions(mask)  # raises when the seat is not to act
        if legal.size == 1:
            self.last_search = {"simulations": 0, "determinizations": 0, "visits": {int(legal[0]): 0}, "decisions": 0}
            return int(legal[0])
        for policy in self._policies:
            policy.reset(seed=int(self.rng.integers(0, 2**63 - 1)))
        root = _Node(self._candidates(first, seat, mask))
        decisions = 0
        for k in range(self.simulations):
            if self.determinizations is None:  # a fresh sample per simulation
                s = game.resample_hidden(first, seat, self.rng) if k else first.copy()
            else:
                s = samples[k % len(samples)].copy()
            decisions += self._simulate(root, s, seat)
        best = max(root.order, key=lambda a: (root.visits[a], root.mean(a), -a))
        self.last_search = {"simulations": self.simulations, "determinizations": self.determinizations or self.simulations,
                            "visits": {a: root.visits[a] for a in root.order if root.visits[a]}, "decisions": decisions}
        return int(best)

    def _simulate(self, root: "_Node", s, seat: int) -> int:
        """One simulation from sampled state ``s`` (played on): selection, expansion, playout, backup.
        Returns the number of decisions it played."""
        game, policies = self.game, self._policies
        for policy in policies:
            policy.reset()  # no memory of another playout
        node, path, pending, decisions = root, [], None, 0
        while not game.is_over(s):
            p = game.to_act(s)[0]
            mask = game.legal_mask(s, p)
            if p == seat and node is not None:
                if pending is not None:  # an own decision reached after an own edge: find or add its node
                    key = (pending, game.observe(s, seat).tobytes(), mask.tobytes())
                    child = node.children.get(key)
                    if child is None:  # expansion: one node per simulation, then the playout
                        node.children[key] = _Node(self._candidates(s, seat, mask))
                        node = None
                    else:
                        node = child
                if node is not None:
                    a = node.select(self.exploration, self.widening)
                    path.append((node, a))
                    pending = a
                    game.apply_legal(s, p, a)
                    decisions += 1
                    continue
            game.apply_legal(s, p, int(policies[p].act(game.observe(s, p), mask)))
            decisions += 1
        value = self._value(s, seat)
        for n, a in path:
            n.total += 1
            n.visits[a] += 1
            n.value[a] += value
        return decisions

    def _candidates(self, s, seat: int, mask: np.ndarray) -> list[int]:
        """The legal actions of ``seat`` in the order widening adds them: the rollout policy's
        choice first, then by distance of id to it (lower id first on ties)."""
        legal = legal_actions(mask)
        choice = int(self._policies[seat].act(self.game.observe(s, seat), mask))
        return sorted((int(a) for a in legal), key=lambda a: (abs(a - choice), a))

    def _value(self, s, seat: int) -> float:
        """The final reward of ``seat`` in the finished game ``s`` (see ``reward``)."""
        res = self.game.results(s)
        if self.reward == "win":
            return 1.0 / len(res.winners) if seat in res.winners else 0.0
        return terminal_rewards(self.reward, res.scores, self.game.score_scale, res.rank_keys)[seat]


class _Node:
    """One information set of the searching seat: visit counts and summed rewards per candidate action."""

    __slots__ = ("order", "visits", "value", "total", "children")

    def __init__(self, order: list[int]):
        self.order = order
        self.visits = dict.fromkeys(order, 0)
        self.value = dict.fromkeys(order, 0.0)
        self.total = 0
        self.children: dict = {}

    def mean(self, a: int) -> float:
        """Mean reward of action ``a`` (0 when never tried)."""
        return self.value[a] / self.visits[a] if self.visits[a] else 0.0

    def select(self, c: float, widening: float | None) -> int:
        """The first untried candidate, else the UCT-best one among the first ``1 + widening*sqrt(n)``."""
        width = len(self.order) if widening is None else min(len(self.order), 1 + int(widening * math.sqrt(self.total)))
        candidates = self.order[:width]
        for a in candidates:
            if self.visits[a] == 0:
                return a
        log_n = math.log(self.total)
        return max(candidates, key=lambda a: self.value[a] / self.visits[a]
                   + c * math.sqrt(log_n / self.visits[a]))


#: what follows ``ismcts:`` in a registry name: the simulations per decision (1 to 9 digits, no leading zero)
_BUDGET = re.compile(r"[1-9][0-9]{0,8}")


def parse_name(name: str) -> dict:
    """The keyword arguments a registry name gives :class:`ISMCTSAgent`: ``"ismcts"`` -> ``{}`` (the
    default budget), ``"ismcts:64"`` -> ``{"simulations": 64}``; a ``ValueError`` says what is wrong with a bad one."""
    prefix, sep, rest = name.partition(":") if isinstance(name, str) else (name, "", "")
    if prefix != ISMCTSAgent.name:
        raise ValueError(f"{name!r} is not an {ISMCTSAgent.name} agent name")
    if not sep:
        return {}
    if _BUDGET.fullmatch(rest) is None:
        default = inspect.signature(ISMCTSAgent).parameters["simulations"].default
        raise ValueError(f"bad search agent name {name!r}: the budget after 'ismcts:' is the simulations per "
                         f"decision, an integer from 1 to 999999999 without leading zeros (e.g. ismcts:64); "
                         f"plain 'ismcts' runs {default}")
    return {"simulations": int(rest)}


def _positive_int(name: str, value) -> int:
    """``value`` as an int >= 1, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def _rollout_policy(game, rollout):
    """One seat's rollout agent for ``game``: a baseline by name (``"heuristic"``: the game's own) or a trained policy file."""
    from gemenvs.core.entry import RANDOM_AGENT, entry_of

    try:
        found = entry_of(game)
    except ValueError:
        found = None
    baselines = dict(found.baselines) if found is not None else {"random": RANDOM_AGENT}
    if isinstance(rollout, str) and rollout == "heuristic":
        if found is None:
            raise ValueError(f"no heuristic baseline for {game.name}; use rollout='random' or a policy path")
        rollout = found.heuristic_baseline  # the entry's rollout baseline
    if isinstance(rollout, str) and rollout in baselines:
        module, cls = baselines[rollout].split(":")
        return getattr(importlib.import_module(module), cls)(spec=game.spec, num_actions=game.num_actions,
                                                             action_spec=game.action_spec)
    from gemenvs.agents.policy import is_policy_file

    path = Path(rollout) if isinstance(rollout, (str, os.PathLike)) else None
    if path is None or not is_policy_file(path) or not path.is_file():
        known = ", ".join(["heuristic", *baselines])
        raise ValueError(f"unknown rollout policy {rollout!r} for {game.name}: use one of {known}, "
                         f"or the path of an existing trained policy (.zip or .npz)")
    from gemenvs.agents.policy import PolicyAgent

    policy = PolicyAgent.load(path, deterministic=False)
    if policy.observation_size != game.spec.size or policy.num_actions != game.num_actions:
        raise ValueError(f"the policy {path} reads {policy.observation_size} inputs and gives {policy.num_actions} "
                         f"actions; this game has {game.spec.size} and {game.num_actions}")
    return policy


__all__ = ["ISMCTSAgent", "REWARDS", "parse_name"]
