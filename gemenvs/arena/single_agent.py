"""One learner seat of any gemenvs AEC game as a ``gymnasium.Env``, the other seats played by opponents.

``reset`` draws the learner's seat (or uses a fixed one) and the opponents of the episode,
then plays the opponents until the learner is to act. ``step`` plays the learner's action and
then the opponents again, until the learner is to act or the game ends. The reward is always
**the learner's own** reward from the AEC environment, summed over every step played since the
learner's last decision (so a lost game returns the learner's negative reward, never the
winner's; compare the PettingZoo bug report at
https://github.com/Farama-Foundation/PettingZoo/issues/1147).

Optional potential-based reward shaping (Ng, Harada and Russell 1999, "Policy invariance under
reward transformations"): with ``shaping`` w > 0 each learner step also earns
``w * (shaping_gamma * phi(s') - phi(s))``, where ``phi(s)`` is the game's
:meth:`~gemenvs.core.engine.Game.progress` of the learner's seat at its decision ``s``, ``s'`` its
next decision, and ``phi`` is 0 once the game is over. Over an episode the extra rewards add up
to ``-w * phi(first decision)`` when ``shaping_gamma`` is 1 (0 in a game where nobody starts with
progress), and for any ``shaping_gamma`` equal to the learner's discount the optimal policy is
unchanged: shaping only brings credit forward (in Gem Jam, a share of w/4 for each gem added
towards a set, the rest of w/4 when the set completes, as much back when gems or sets are lost).
Off (0.0) by default. ``potential="win_chance"`` takes ``phi`` from the game's win model instead
(:meth:`~gemenvs.core.engine.Game.win_chance`; Gem Jam's fitted conditional logit, which weighs the
other players' positions too), for games that have one.

The observation is the learner's flat observation vector; the legal-action mask comes from
:meth:`SingleAgentEnv.action_masks` (what sb3-contrib's MaskablePPO calls, through
``SubprocVecEnv`` too) and from ``info["action_mask"]``. Opponents see only what the AEC
environment shows their own seat.

Opponents can be given as:

* a baseline name (``"random"``, ``"heuristic"``, ...): a fresh copy in every other seat; a search
  agent's name (``"ismcts:8"``) too: opponents with ``needs_state`` are handed the engine state
  (:func:`gemenvs.agents.base.decide`), the learner only ever gets its observation and mask;
* the path of a saved policy (``.zip`` from MaskablePPO, ``.npz`` from ``PolicyAgent.save``);
* an :class:`~gemenvs.agents.base.Agent` object (the same object plays every other seat);
* a list of the above, one per opponent seat, in clockwise order from the learner;
* an :class:`OpponentSampler`, asked for new opponents before every episode (the self-play pool).

With ``features`` (:mod:`gemenvs.agents.features`) the learner's observation has the features' numbers
appended: computed from the observation and mask, or, for features that need the engine state (Gem Jam's
``gemjam_lookahead_advice``), from the state through the features' own ``from_state`` (a search from the
learner's seat that reads only what the seat can see); once the game is over they are zeros.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces

from gemenvs.agents.base import Agent
from gemenvs.agents.base import decide
from gemenvs.arena.resolve import AgentSpec, resolve_agent
from gemenvs.core.envbase import RENDER_FPS, RENDER_MODES

#: the shaping potentials: names of :class:`~gemenvs.core.engine.Game` methods ``(state, player) -> float``
POTENTIALS = ("progress", "win_chance")

#: what an opponent seat can be given as (see the module docstring)


@runtime_checkable
class OpponentSampler(Protocol):
    """Chooses the opponents of each episode (for example a self-play pool)."""

    def sample(self, env, rng: np.random.Generator, num_opponents: int) -> tuple[str, list[Agent]]:
        """A label of the draw (for statistics) and one agent per opponent seat, clockwise from the learner."""


class FixedOpponents:
    """The same opponents every episode (one spec per seat, or one spec for every seat), built by
    :meth:`build` when the environment is made, so a bad name or file fails there."""

    def __init__(self, specs: AgentSpec | Sequence[AgentSpec]):
        if not isinstance(specs, (str, Agent)):
            if isinstance(specs, (bytes, dict)) or not isinstance(specs, Sequence) or not specs:
                raise TypeError("opponents must be a baseline name, a policy path, an Agent, a non-empty list of "
                                f"those, or an OpponentSampler; got {specs!r}")
            for spec in specs:
                if not isinstance(spec, (str, Agent)):
                    raise TypeError(f"each opponent must be a baseline name, a policy path or an Agent; got {spec!r}")
        self.specs = specs
        self.agents: list[Agent] | None = None
        self.label = ""

    def build(self, env, num_opponents: int) -> None:
        """Build one agent per opponent seat of ``env`` (a ``ValueError`` names a bad spec)."""
        specs = [self.specs] * num_opponents if isinstance(self.specs, (str, Agent)) else list(self.specs)
        if len(specs) != num_opponents:
            raise ValueError(f"{len(specs)} opponents given for {num_opponents} opponent seats")
        game = env.unwrapped.game.name
        self.agents = [resolve_agent(game, s, env) for s in specs]
        self.label = "+".join(s if isinstance(s, str) else type(s).__name__ for s in specs)

    def sample(self, env, rng: np.random.Generator, num_opponents: int) -> tuple[str, list[Agent]]:
        """The agents built once, the same every episode."""
        if self.agents is None:
            self.build(env, num_opponents)
        return self.label, self.agents


def check_learner_seat(seat: Any, num_players: int) -> int | None:
    """``seat`` as a plain int seat of a ``num_players`` game, or None; anything else is an error naming it."""
    if seat is None:
        return None
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)):
        raise TypeError(f"learner_seat must be an int seat in 0..{num_players - 1} or None; got {seat!r}")
    if not 0 <= seat < num_players:
        raise ValueError(f"learner_seat must be in 0..{num_players - 1} or None; got {seat!r}")
    return int(seat)


def make_aec_env(env_id: str, **options):
    """An AEC environment from PettingZoo's registry (``import gemenvs`` registers the suite's games)."""
    import pettingzoo

    import gemenvs  # noqa: F401 - registers the suite's environments

    return pettingzoo.make("aec", env_id, **options)


class SingleAgentEnv(gymnasium.Env):
    """A gymnasium view of one learner seat of an AEC game (see the module docstring).

    Args:
        env_id: PettingZoo registry id of the game, e.g. ``"gemenvs/MegaGem-v0"``.
        opponents: who plays the other seats (see the module docstring); names, files and the number
            of opponents are checked here, so a bad one fails at construction, not at ``reset``.
        learner_seat: the learner's seat, or ``None`` to draw it uniformly every episode.
        illegal_action: ``"terminate"`` ends the episode with the env's illegal-action reward for
            the learner (what ``check_env``'s random actions need); ``"raise"`` raises.
        render_mode: ``"ansi"`` or ``"human"`` (the game's text picture, seen by the learner), or
            ``"rgb_array"`` (the same view as an (H, W, 3) uint8 picture, for RecordVideo).
        env_fn: build the AEC environment with this instead of ``env_id`` (given the options).
        shaping: weight w >= 0 of the potential-based shaping reward (see the module docstring); 0: off.
        shaping_gamma: the discount in [0, 1] of that shaping, which should be the learner's own.
        potential: the shaping's ``phi``: ``"progress"`` (:meth:`Game.progress`) or ``"win_chance"``
            (:meth:`Game.win_chance`, for games with a win model).
        features: observation features appended to the learner's observation: a registered name
            (:data:`gemenvs.agents.features.FEATURES`, built with ``features_options``, by default the game's
            options) or an :class:`~gemenvs.agents.features.ObservationFeatures`; None: none.
        **options: game and reward options passed to the AEC environment (``num_players``, ``reward``...).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(self, env_id: str = "gemenvs/MegaGem-v0", opponents: Any = "random",
                 learner_seat: int | None = None, illegal_action: str = "terminate",
                 render_mode: str | None = None, env_fn: Callable[..., Any] | None = None,
                 shaping: float = 0.0, shaping_gamma: float = 1.0, potential: str = "progress",
                 features: Any = None, features_options: dict | None = None, **options):
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise'; got {illegal_action!r}")
        for key, value, high in (("shaping", shaping, None), ("shaping_gamma", shaping_gamma, 1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) \
                    or value < 0 or (high is not None and value > high):
                rule = "a number >= 0" if high is None else f"a number in [0, {high:g}]"
                raise ValueError(f"{key} must be {rule}; got {value!r}")
        if potential not in POTENTIALS:
            raise ValueError(f"potential must be one of {', '.join(map(repr, POTENTIALS))}; got {potential!r}")
        self.shaping, self.shaping_gamma, self.potential = float(shaping), float(shaping_gamma), potential
        self._potential = 0.0
        make = env_fn or (lambda **kw: make_aec_env(env_id, **kw))
        # in "human" mode the AEC env would print after every step, opponents' too, each from the
        # seat to act (their hands on screen): it renders text here, and this view prints the learner's
        inner_mode = "ansi" if render_mode == "human" else render_mode
        self.aec = make(illegal_action=illegal_action, render_mode=inner_mode, **options)
        self.raw = self.aec.unwrapped
        self.agent_names = list(self.raw.possible_agents)
        self.num_players = len(self.agent_names)
        if potential == "win_chance" and not self.raw.game.has_win_model():
            raise ValueError(f"potential 'win_chance': {self.raw.game.name} has no win model; use 'progress'")
        self.learner_seat = check_learner_seat(learner_seat, self.num_players)
        if isinstance(opponents, OpponentSampler):
            self.opponents: OpponentSampler = opponents
        else:
            fixed = FixedOpponents(opponents)
            fixed.build(self.aec, self.num_players - 1)
            self.opponents = fixed
        self.render_mode = render_mode
        first = self.agent_names[0]
        self.observation_space = self.raw.observation_space(first)["observation"]
        self.features = self._build_features(features, features_options)
        if self.features is not None:  # the features' numbers after the observation's, unbounded
            box = self.observation_space
            k = self.features.size
            self.observation_space = spaces.Box(
                np.concatenate([box.low.ravel(), np.full(k, -np.inf, np.float32)]),
                np.concatenate([box.high.ravel(), np.full(k, np.inf, np.float32)]), dtype=np.float32)
        self.action_space = spaces.Discrete(int(self.raw.action_space(first).n))
        self.learner = first
        self.seat = 0
        self.episode_label = ""
        self._seat_agents: dict[str, Agent] = {}
        self._mask = np.zeros(self.action_space.n, dtype=np.int8)
        self._last_obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        self._over = True

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: draw the seat and opponents, play until the learner is to act."""
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(100):  # redeal a game that ends before the learner ever acts
            self.seat = int(rng.integers(self.num_players)) if self.learner_seat is None else self.learner_seat
            self.learner = self.agent_names[self.seat]
            label, agents = self.opponents.sample(self.aec, rng, self.num_players - 1)
            self.episode_label = label
            others = [self.agent_names[(self.seat + k) % self.num_players] for k in range(1, self.num_players)]
            self._seat_agents = dict(zip(others, agents))
            for agent in agents:
                agent.reset(seed=int(rng.integers(2**31)))
            self.aec.reset(seed=int(rng.integers(2**31)))
            if self.features is not None:
                self.features.reset(seed=int(rng.integers(2**31)))
            self._over = False
            self._play_opponents()  # rewards before the learner's first decision are zero in every game
            if not self._over:
                break
        else:
            raise RuntimeError("100 games in a row ended before the learner's first decision")
        self._potential = self._progress()
        if self.render_mode == "human":
            self.render()
        return self._observation(), {"action_mask": self._mask.copy(), "learner_seat": self.seat}

    def step(self, action):
        """Play the learner's ``action``, then the opponents until the learner acts again or the game ends."""
        if self._over:
            raise RuntimeError("step() called after the episode ended: call reset() first")
        self.aec.step(action)
        reward = float(self.raw.rewards[self.learner])
        reward += self._play_opponents()
        if self.shaping:
            potential = 0.0 if self._over else self._progress()
            reward += self.shaping * (self.shaping_gamma * potential - self._potential)
            self._potential = potential
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        if self._over:
            info.update(self._final_info())
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self._over, False, info

    def update_opponents(self, *args, **kwargs) -> None:
        """Forward to the opponent sampler's ``update`` (how a trainer reaches worker processes)."""
        self.opponents.update(*args, **kwargs)

    def action_masks(self) -> np.ndarray:
        """The learner's legal-action mask now (all zero once the episode is over)."""
        return self._mask.astype(bool)

    def render(self):
        """The table as the learner sees it: the text (``render_mode`` ``"ansi"`` returns it,
        ``"human"`` prints it, as ``reset`` and ``step`` do after the learner's turn: never an
        opponent's view) or the picture (``"rgb_array"``)."""
        view = getattr(self.raw, "render_view", None)  # (an env from env_fn may lack it)
        out = self.aec.render() if view is None else view(self.learner)
        if self.render_mode == "human":
            print(out)
            return None
        return out

    def close(self) -> None:
        """Close the AEC environment, and end the programs of opponents that play over the protocol."""
        from gemenvs.agents.base import close_agents

        self.aec.close()
        close_agents(getattr(self.opponents, "agents", None) or [])

    # ------------------------------------------------------------------ internals

    def _play_opponents(self) -> float:
        """Step opponents until the learner is to act or the game ends; the learner's reward meanwhile."""
        reward = 0.0
        raw = self.raw
        while True:
            if raw.terminations[self.learner] or raw.truncations[self.learner]:
                self._over = True
                self._mask = np.zeros(self.action_space.n, dtype=np.int8)
                return reward
            name = raw.agent_selection
            obs = raw.observe(name)
            if name == self.learner:
                self._mask = obs["action_mask"]
                self._last_obs = obs["observation"]
                return reward
            # a search opponent (needs_state) is handed the engine state; the learner never is
            action = decide(self._seat_agents[name], raw.game_state, self.agent_names.index(name), obs["observation"],
                            obs["action_mask"])
            self.aec.step(action)
            reward += float(raw.rewards[self.learner])

    def _progress(self) -> float:
        """The shaping potential of the learner's seat now (``potential``: the game's progress or its win
        chance; 0.0 when shaping is off)."""
        if not self.shaping:
            return 0.0
        return float(getattr(self.raw.game, self.potential)(self.raw.game_state, self.seat))

    def _build_features(self, features: Any, options: dict | None):
        """The observation features the learner reads (None: none), checked against this game."""
        if features is None:
            return None
        from gemenvs.agents.features import ObservationFeatures, make_features

        game = self.raw.game
        if isinstance(features, str):
            return make_features(features, game.options() if options is None else options, game=game.name)
        if not isinstance(features, ObservationFeatures):
            raise TypeError(f"features must be a registered name or an ObservationFeatures; "
                            f"got {type(features).__name__}")
        if features.game != game.name:
            raise ValueError(f"the observation features {features.name} read {features.game}, not {game.name}")
        return features

    def _observation(self) -> np.ndarray:
        if self._over:
            obs = np.asarray(self.raw.observe(self.learner)["observation"], dtype=np.float32).copy()
            return obs if self.features is None else np.concatenate([obs, np.zeros(self.features.size, np.float32)])
        obs = np.asarray(self._last_obs, dtype=np.float32).copy()
        if self.features is None:
            return obs
        if self.features.needs_state:
            return self.features.augment_state(obs, self.raw.game_state, self.seat)
        return self.features.augment(obs, self._mask)

    def _final_info(self) -> dict[str, Any]:
        """Outcome of the finished game for the learner: win share, score and margin when the game scored."""
        info: dict[str, Any] = {"learner_seat": self.seat, "opponent": self.episode_label}
        final = self.raw.infos.get(self.learner, {})
        if "illegal_action" in final:
            info["illegal_action"] = final["illegal_action"]["reason"]
            info["win_share"] = 0.0
            return info
        winners = final.get("winners", [])
        info["win_share"] = 1.0 / len(winners) if self.learner in winners else 0.0
        if "scores" in final:
            scores = final["scores"]
            info["score"] = float(scores[self.learner])
            info["margin"] = float(scores[self.learner] - max(v for k, v in scores.items() if k != self.learner))
        return info
