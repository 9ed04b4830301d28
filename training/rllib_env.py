"""Any game of the suite as an RLlib ``MultiAgentEnv``, seats named by their role in the league.

RLlib's own ``PettingZooEnv`` names agents by seat (``player_0`` ...) and plays every seat with
an RLlib policy. Self-play against a league needs two more things, so this small adapter over
our AEC environment (:func:`gemenvs.arena.single_agent.make_aec_env`) provides them:

* **Roles, not seats.** Every episode draws the *focal* seat (uniformly, or ``learner_seat``);
  the agents are named ``focal`` and ``opponent_1`` .. ``opponent_{n-1}`` clockwise from it.
  The policy mapping (:func:`gemenvs.training.rllib_backend.map_agent`) sends ``focal`` to the
  trained ``main`` policy and the opponents to ``main`` itself or to a frozen past version.
* **Baselines inside the environment.** With probability ``baseline_share`` an episode's
  opponent seats are played here by baseline agents of :mod:`gemenvs.agents` (one baseline
  name for all of them, or one per seat with ``seat_mix: per_seat``); they never appear as
  RLlib agents, so RLlib sees a one-agent episode of ``focal`` against them.

Observations are ``{"observations": float32 vector, "action_mask": float32 0/1 vector}`` (the
layout :class:`~gemenvs.training.rllib_module.MaskedActorCritic` reads). Only the seat to act
gets an observation; its reward is everything the AEC environment gave that seat since its last
decision. At the end of the game every role that played gets its final observation and reward,
and ``focal``'s info holds ``opponent`` (the baseline's name, or ``"league"``) and
``win_share`` (1/number of winners when it won, else 0), as :class:`SingleAgentEnv` reports them.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from gemenvs.arena.resolve import resolve_agent
from gemenvs.arena.single_agent import check_learner_seat, make_aec_env
from gemenvs.core.entry import restore_registry

FOCAL = "focal"
#: the label of an episode whose opponents are RLlib policies (main or its frozen versions)
LEAGUE = "league"


def role_names(num_players: int) -> list[str]:
    """``["focal", "opponent_1", ...]``: the agent ids of a ``num_players`` game."""
    return [FOCAL] + [f"opponent_{k}" for k in range(1, num_players)]


class GemenvsMultiAgentEnv(MultiAgentEnv):
    """One game of the suite for RLlib (see the module docstring).

    ``config`` (RLlib's ``env_config``): ``env_id``, ``options`` (game options), ``reward``
    (``win``/``score``/``rank``/``margin``), ``baselines`` (names played inside the env),
    ``baseline_share`` (in [0, 1]), ``seat_mix`` (``same`` or ``per_seat``), ``learner_seat``
    (the focal seat, or None to draw it), ``registry`` (:func:`gemenvs.core.entry.registry_state` of the driver:
    an env runner is a fresh process, and registers the driver's games, a user's own among them, first).
    """

    def __init__(self, config: dict | None = None):
        super().__init__()
        c = dict(config or {})
        restore_registry(c.get("registry", ()))
        self.aec = make_aec_env(c.get("env_id", "gemenvs/MegaGem-v0"), reward=c.get("reward", "win"),
                                **c.get("options", {}))
        self.raw = self.aec.unwrapped
        self.game = self.raw.game.name
        self.seats = list(self.raw.possible_agents)
        self.num_players = len(self.seats)
        self.learner_seat = check_learner_seat(c.get("learner_seat"), self.num_players)
        self.baseline_share = float(c.get("baseline_share", 0.0))
        self.seat_mix = c.get("seat_mix", "same")
        names = list(c.get("baselines", []))
        if self.baseline_share > 0 and not names:
            raise ValueError("baseline_share > 0 needs at least one baseline name")
        # one copy per opponent seat of every baseline, built once (a bad name fails here)
        self.baselines = {name: [resolve_agent(self.game, name, self.aec, seed=k) for k in range(self.num_players - 1)]
                          for name in names}
        first = self.seats[0]
        actions = int(self.raw.action_space(first).n)
        obs_space = spaces.Dict({
            "observations": self.raw.observation_space(first)["observation"],
            "action_mask": spaces.Box(0.0, 1.0, (actions,), np.float32),
        })
        self.possible_agents = role_names(self.num_players)
        self.agents = []
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(actions) for a in self.possible_agents}
        self.rng = np.random.default_rng()
        self.role: dict[str, str] = {}  # seat name -> role
        self.inside: dict[str, Any] = {}  # seat name -> baseline agent played here
        self.label = LEAGUE
        self.pending: dict[str, float] = {}
        self.seen: set[str] = set()
        self.to_act: str | None = None

    # ------------------------------------------------------------------ MultiAgentEnv API

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw the focal seat and the opponents, then play the baselines until an RLlib agent is to act."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        for _ in range(100):  # redeal a game that ends before any RLlib agent acts
            focal = int(self.rng.integers(self.num_players)) if self.learner_seat is None else self.learner_seat
            order = [self.seats[(focal + k) % self.num_players] for k in range(self.num_players)]
            self.role = dict(zip(order, self.possible_agents))
            self.inside, self.label = {}, LEAGUE
            if self.baselines and self.rng.random() < self.baseline_share:
                names = list(self.baselines)
                picks = ([names[int(self.rng.integers(len(names)))]] * (self.num_players - 1)
                         if self.seat_mix == "same" else
                         [names[int(self.rng.integers(len(names)))] for _ in range(self.num_players - 1)])
                for k, (seat, name) in enumerate(zip(order[1:], picks)):
                    agent = self.baselines[name][k]
                    agent.reset(seed=int(self.rng.integers(2**31)))
                    self.inside[seat] = agent
                self.label = "+".join(dict.fromkeys(picks))
            self.aec.reset(seed=int(self.rng.integers(2**31)))
            self.agents = [self.role[s] for s in self.seats if s not in self.inside]
            self.pending = {a: 0.0 for a in self.agents}
            self.seen = set()
            out = self._advance()
            if self.to_act is not None:
                return out[0], {}
        raise RuntimeError("100 games in a row ended before any RLlib agent's first decision")

    def step(self, action_dict: dict):
        """Play the action of the agent to act, then the baselines until an RLlib agent acts again or the game ends."""
        if self.to_act is None:
            raise RuntimeError("step() called after the episode ended: call reset() first")
        role = self.role[self.to_act]
        if role not in action_dict:
            raise ValueError(f"step() needs an action for {role!r}, the agent to act; got {sorted(action_dict)}")
        self._play(int(action_dict[role]))
        return self._advance()

    # ------------------------------------------------------------------ internals

    def _play(self, action: int) -> None:
        """One AEC step; every RLlib agent's reward of it goes to its pending reward."""
        self.aec.step(action)
        for seat, role in self.role.items():
            if role in self.pending:
                self.pending[role] += float(self.raw.rewards[seat])

    def _over(self) -> bool:
        return all(self.raw.terminations[s] or self.raw.truncations[s] for s in self.seats)

    def _observe(self, seat: str) -> dict:
        obs = self.raw.observe(seat)
        return {"observations": np.asarray(obs["observation"], np.float32).copy(),
                "action_mask": np.asarray(obs["action_mask"], np.float32)}

    def _advance(self):
        """Play baseline seats until an RLlib agent is to act (its observation) or the game ends (everyone's)."""
        while not self._over():
            seat = self.raw.agent_selection
            if seat in self.inside:
                obs = self.raw.observe(seat)
                self._play(int(self.inside[seat].act(obs["observation"], obs["action_mask"])))
                continue
            role = self.role[seat]
            self.to_act = seat
            self.seen.add(role)
            reward = {role: self.pending[role]}
            self.pending[role] = 0.0
            return ({role: self._observe(seat)}, reward, {"__all__": False}, {"__all__": False}, {})
        self.to_act = None
        seats = [s for s in self.seats if self.role[s] in self.seen]
        obs = {self.role[s]: self._observe(s) for s in seats}
        rewards = {self.role[s]: self.pending[self.role[s]] for s in seats}
        truncated = any(self.raw.truncations[s] for s in self.seats)
        terminateds = {**{self.role[s]: not truncated for s in seats}, "__all__": not truncated}
        truncateds = {**{self.role[s]: truncated for s in seats}, "__all__": truncated}
        infos = {}
        focal = next(s for s in self.seats if self.role[s] == FOCAL)
        if FOCAL in self.seen:
            final = self.raw.infos.get(focal, {})
            winners = final.get("winners", [])
            infos[FOCAL] = {"opponent": self.label,
                            "win_share": 1.0 / len(winners) if focal in winners else 0.0}
        return obs, rewards, terminateds, truncateds, infos
