"""The engine protocol every game implements: pure rules over plain-data states, no PettingZoo.

A game object holds validated options and is stateless; all game data lives in a state
object that the game creates and mutates. Players are seat numbers ``0..num_players-1``;
seat ``i+1`` sits to the left (clockwise) of seat ``i``.

A game writes only its rules (:class:`Game`'s abstract methods). The core gives it, once for
every game: action checking against the mask (the single source of legality), forced decisions
played by the engine and logged, the decision log and its per-viewer view, JSON round trips
validated by replaying the log, and a default full-state vector for centralised critics.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemenvs.core.spec import ActionSpec, ObservationSpec


class IllegalActionError(ValueError):
    """An action that the rules forbid in the current state (the message says why)."""


class StateError(ValueError):
    """A serialized state that is malformed, not JSON, or that no game of these options can reach."""


#: largest seed a state records (seeds are drawn in 0..MAX_SEED)
MAX_SEED = 2**63 - 1


@dataclass
class Results:
    """Final outcome: per-player scores, a per-player breakdown of each score, and the winners.

    ``rank_keys`` orders players for the "win" and "rank" rewards when the rulebook breaks
    score ties (e.g. GEM: points, then gems); it defaults to the scores themselves.
    """

    scores: list[float]
    breakdown: list[dict[str, float]]
    winners: list[int]
    extra: dict[str, Any] = field(default_factory=dict)
    rank_keys: list | None = None


def _same_kind(value: Any, allowed: Any) -> bool:
    """Whether ``value`` has the type of ``allowed`` (str for str, a plain int for int, ...)."""
    if allowed is None:
        return value is None
    if isinstance(allowed, bool):
        return isinstance(value, (bool, np.bool_))
    if isinstance(allowed, int):
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if isinstance(allowed, str):
        return isinstance(value, str)
    return type(value) is type(allowed)


def check_choice(name: str, value: Any, allowed) -> Any:
    """Validate an option against a finite set of allowed values (type and value), naming both on failure."""
    for a in allowed:
        if _same_kind(value, a) and value == a:
            return a
    raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """Validate a seed: None or an integer in 0..2**63-1."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be None or an integer in 0..2**63-1; got {seed!r}")
    return int(seed)


def as_action_id(action: Any) -> int | None:
    """``action`` as a plain int when it is an integer value (int, numpy integer, 0-d integer array), else None."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    return None


def check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """Validate an integer option in ``lo..hi``, naming it on failure."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}; got {value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    """Validate a boolean option, naming it on failure."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_json(value: Any, where: str = "state") -> None:
    """Raise StateError unless ``value`` is plain JSON data (dict with str keys, list, str, int, finite float, bool, None)."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if not np.isfinite(value):
            raise StateError(f"{where} is {value!r}: not a finite JSON number")
        return
    if isinstance(value, list):
        for k, v in enumerate(value):
            check_json(v, f"{where}[{k}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise StateError(f"{where} has a non-string key {_short(k)}")
            check_json(v, f"{where}.{k}")
        return
    raise StateError(f"{where} holds a {type(value).__name__}, which is not JSON data")


def same_data(a: Any, b: Any) -> bool:
    """Equality of JSON data that also compares types (``True`` is not ``1``, ``1.0`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    return a == b


def _short(value: Any, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters (error messages never echo a whole field)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Game(ABC):
    """Rules of one game for fixed options; see the module docstring for conventions.

    A game provides the rules (the abstract methods); the core provides everything else:
    :meth:`new_state` and :meth:`apply_legal` play forced decisions (a seat with a single legal
    action) and log every decision as ``[seat, action, forced]`` in ``state.log``;
    :meth:`why_illegal` and :meth:`apply` check actions against :meth:`legal_mask`, the single
    source of legality (:meth:`explain` only words why an action is not legal);
    :meth:`state_from_dict` rebuilds a state by replaying its seed and log;
    :meth:`visible_log` is the log as one seat may see it; :meth:`state_vector` is the full state.
    A state must carry ``state.log`` (the list above) and ``to_dict()`` (JSON data holding
    ``"seed"`` and ``"log"``); the game's other fields follow from those two by replay.
    """

    #: short identifier, e.g. "megagem"
    name: str = ""
    #: environment version, bumped when behaviour changes
    version: int = 0
    #: every supported number of seats
    player_counts: tuple[int, ...] = ()
    #: number of seats
    num_players: int
    #: layout of the flat observation vector
    spec: ObservationSpec
    #: layout of the single Discrete action space shared by all seats
    action_spec: ActionSpec
    #: divisor that turns final scores into rewards for the "score" and "margin" modes
    score_scale: float = 1.0
    #: upper bound on the number of decisions in one game (for documentation and tests)
    max_decisions: int = 10_000
    #: whether others may learn that a decision was forced; False hides it (it may reveal a private hand)
    forced_is_public: bool = False

    @property
    def num_actions(self) -> int:
        """Size of the Discrete action space (``action_spec.size``)."""
        return self.action_spec.size

    # ------------------------------------------------------------------ the rules (per game)

    @abstractmethod
    def options(self) -> dict[str, Any]:
        """The options this game was built with (enough to rebuild it)."""

    @abstractmethod
    def initial_state(self, seed: int):
        """The state after setup, all randomness drawn from ``seed``, with an empty ``log``."""

    @abstractmethod
    def to_act(self, state) -> tuple[int, ...]:
        """Seats that must act now (several during simultaneous decisions), in seat order."""

    @abstractmethod
    def legal_mask(self, state, player: int) -> np.ndarray:
        """An int8 mask over actions for ``player``; all zero when it is not to act."""

    @abstractmethod
    def explain(self, state, player: int, action: int) -> str:
        """Words for why ``action`` (an id the mask forbids for a seat to act) is illegal now."""

    @abstractmethod
    def play(self, state, player: int, action: int) -> None:
        """The rules' transition for a legal ``action`` of ``player`` (no logging, no forced moves)."""

    @abstractmethod
    def is_over(self, state) -> bool:
        """Whether the game has ended."""

    @abstractmethod
    def results(self, state) -> Results:
        """Final scores, breakdown and winners of a finished game."""

    @abstractmethod
    def observe(self, state, player: int) -> np.ndarray:
        """The float32 observation vector of ``player`` (seat-relative, laid out by ``spec``)."""

    @abstractmethod
    def render(self, state, viewer: int | None = None) -> str:
        """A readable text picture of the public state and ``viewer``'s private information."""

    @abstractmethod
    def resample_hidden(self, state, observer: int, rng: np.random.Generator):
        """A new state that ``observer`` cannot tell from ``state``: everything it cannot see
        (other hands, deck orders, sealed bids, the RNG) drawn afresh from ``rng``, consistent
        with everything it can. Its observation, mask and :meth:`visible_log` are unchanged."""

    def forced_action(self, state, player: int) -> int | None:
        """The only legal action of ``player`` when it has exactly one, else None (override for speed)."""
        legal = np.flatnonzero(self.legal_mask(state, player))
        return int(legal[0]) if legal.size == 1 else None

    def forcing_possible(self, state) -> bool:
        """False when, right after a decision, no seat can have a forced one (a cheap test a game
        may override for speed; it must never hide a forced decision: the contract suite checks)."""
        return True

    def log_action_hidden(self, state, index: int, viewer: int) -> bool:
        """Whether ``viewer`` may not see the action of another seat's decision ``state.log[index]``."""
        return False

    def game_log_size(self, state) -> int:
        """How many events the game's narrative log holds (0 for a game without one)."""
        return 0

    def game_log_entries(self, state, start: int = 0) -> list[tuple[int, str]]:
        """``(audience, sentence)`` of each event of the game's narrative log (spells, payments,
        ...) from index ``start``: audience -1 when every seat may see it, else the one seat that
        may; empty for a game without a narrative log."""
        return []

    def game_log(self, state, viewer: int | None, start: int = 0) -> list[str]:
        """The narrative log's sentences from index ``start`` that ``viewer`` may see (None: all)."""
        return [text for who, text in self.game_log_entries(state, start) if viewer is None or who in (-1, viewer)]

    def progress(self, state, player: int) -> float:
        """How far ``player`` is towards winning, in [0, 1] (default 0.0): a potential for optional
        reward shaping (:class:`~gemenvs.arena.SingleAgentEnv`'s ``shaping``), never part of the rules."""
        return 0.0

    def win_chance(self, state, player: int) -> float:
        """``player``'s chance to win from ``state`` by a model of the game (another shaping potential,
        :class:`~gemenvs.arena.SingleAgentEnv`'s ``potential="win_chance"``); a game without a model
        raises NotImplementedError (see :meth:`has_win_model`)."""
        raise NotImplementedError(f"{self.name} has no win model")

    @classmethod
    def has_win_model(cls) -> bool:
        """Whether the game implements :meth:`win_chance`."""
        return cls.win_chance is not Game.win_chance

    def action_name(self, action: int) -> str:
        """A short human label of an action id (default: its action-spec label, e.g. ``bid[3]``)."""
        return self.action_spec.label(action)

    # ------------------------------------------------------------------ given by the core

    def new_state(self, seed: int | None = None):
        """A fresh game from ``seed`` (None: a random one, recorded in the state), forced decisions played."""
        seed = check_seed(seed)
        if seed is None:
            seed = int(np.random.default_rng().integers(0, MAX_SEED))
        state = self.initial_state(seed)
        self._play_forced(state)
        return state

    def apply_legal(self, state, player: int, action: int) -> None:
        """Log and play a legal ``action`` of ``player``, then every forced decision that follows."""
        state.log.append([player, int(action), 0])
        self.play(state, player, int(action))
        self._play_forced(state)

    def apply(self, state, player: int, action) -> None:
        """Play ``action`` for ``player`` (see :meth:`apply_legal`); an illegal one raises IllegalActionError."""
        self.apply_legal(state, player, self.check_action(state, player, action))

    def _play_forced(self, state) -> None:
        """Play, and log as forced, every decision that has a single legal action."""
        if not self.forcing_possible(state):
            return
        while not self.is_over(state):
            for p in self.to_act(state):
                a = self.forced_action(state, p)
                if a is not None:
                    state.log.append([p, a, 1])
                    self.play(state, p, a)
                    break
            else:
                return

    def why_illegal(self, state, player: int, action) -> str | None:
        """Why ``action`` (any value) is illegal for ``player`` now, or ``None`` when the mask allows it."""
        a = as_action_id(action)
        n = self.num_actions
        if a is None:
            return f"actions are integers in 0..{n - 1}, not {type(action).__name__} {_short(action)}"
        if not 0 <= a < n:
            return f"out of range 0..{n - 1}"
        if as_action_id(player) is None or not 0 <= player < self.num_players:
            return f"no seat {_short(player)} in a {self.num_players}-player game"
        if self.is_over(state):
            return "the game is over"
        acting = self.to_act(state)
        if player not in acting:
            return f"it is not player {player}'s decision (to act: {', '.join(map(str, acting))})"
        if self.legal_mask(state, player)[a]:
            return None
        return self.explain(state, player, a) or "not legal now"

    def check_action(self, state, player: int, action) -> int:
        """Return ``action`` as an int if legal for ``player`` now, else raise IllegalActionError."""
        reason = self.why_illegal(state, player, action)
        if reason is not None:
            raise IllegalActionError(f"illegal action {_short(action)} ({self.safe_action_name(action)}) "
                                     f"by player {player}: {reason}")
        return int(action)

    def safe_action_name(self, action) -> str:
        """``action_name`` that never raises (for error messages)."""
        a = as_action_id(action)
        if a is not None and 0 <= a < self.num_actions:
            return self.action_name(a)
        return "not an action"

    def legal_actions(self, state, player: int) -> np.ndarray:
        """The legal action ids of ``player``, ascending."""
        return np.flatnonzero(self.legal_mask(state, player))

    def visible_log(self, state, viewer: int | None, start: int = 0) -> list[tuple[int, int | None, bool | None]]:
        """The decision log as ``viewer`` may see it: ``(seat, action, forced)`` per decision, with
        ``None`` for what it may not know (another seat's hidden action; whether another seat's
        decision was forced, unless ``forced_is_public``). ``viewer=None``: the whole log. ``start``:
        the decisions from that index on only."""
        return [self.visible_entry(state, viewer, k) for k in range(start, len(state.log))]

    def visible_entry(self, state, viewer: int | None, index: int) -> tuple[int, int | None, bool | None]:
        """Decision ``state.log[index]`` as ``viewer`` may see it now (an entry of :meth:`visible_log`)."""
        p, a, f = state.log[index]
        if viewer is None or p == viewer:
            return (p, a, bool(f))
        return (p, None if self.log_action_hidden(state, index, viewer) else a,
                bool(f) if self.forced_is_public else None)

    def state_from_dict(self, d: Any):
        """Rebuild a state from ``state.to_dict()`` by replaying its seed and log; anything the
        replay does not reproduce exactly (a state no game can reach) raises StateError."""
        check_json(d)
        if not isinstance(d, dict) or "seed" not in d or "log" not in d:
            raise StateError(f"a {self.name} state is a dict with 'seed' and 'log' (and the fields of to_dict())")
        try:
            seed = check_seed(d["seed"])
        except ValueError as e:
            raise StateError(str(e)) from None
        if seed is None:
            raise StateError("seed must be an integer, not None")
        log = d["log"]
        if not isinstance(log, list):
            raise StateError("log must be a list of [seat, action, forced] entries")
        for k, entry in enumerate(log):
            if not (isinstance(entry, list) and len(entry) == 3 and all(as_action_id(x) is not None for x in entry)
                    and entry[2] in (0, 1)):
                raise StateError(f"log[{k}] is {_short(entry)}, not [seat, action, forced 0/1]")
        state = self.new_state(seed)
        while len(state.log) < len(log):
            k = len(state.log)
            if state.log != log[:k]:
                break
            player, action, forced = log[k]
            if forced:
                raise StateError(f"log[{k}] is marked forced, but the replay offers a choice there")
            reason = self.why_illegal(state, player, action)
            if reason is not None:
                raise StateError(f"log[{k}]: player {player}'s action {action} is illegal in the replay: {reason}")
            self.apply_legal(state, player, action)
        if not same_data(state.log, log):
            k = next((i for i, (x, y) in enumerate(zip(state.log, log)) if not same_data(x, y)),
                     min(len(state.log), len(log)))
            raise StateError(f"log[{k}] differs from the replay (forced decisions are logged as the engine plays them)")
        mine = state.to_dict()
        missing, unknown = sorted(set(mine) - set(d)), sorted(set(d) - set(mine))
        if missing or unknown:
            raise StateError(f"keys differ from a {self.name} state: missing {missing}, unknown {unknown}")
        for key in mine:
            if not same_data(mine[key], d[key]):
                raise StateError(f"field {key!r} is not what the replay of seed and log gives")
        return state

    @property
    def state_spec(self) -> ObservationSpec:
        """Layout of :meth:`state_vector` (default: every seat's observation slices, prefixed ``seatK.``)."""
        spec = getattr(self, "_state_spec", None)
        if spec is None:
            spec = ObservationSpec()
            for p in range(self.num_players):
                for s in self.spec.slices:
                    spec.add(f"seat{p}.{s.name}", s.shape, f"seat {p}'s {s.name}", s.scale, s.low, s.high)
            self._state_spec = spec
        return spec

    def state_vector(self, state) -> np.ndarray:
        """The full state as one float32 vector for centralised critics (default: every seat's
        observation in seat order, so every private hand; laid out by :attr:`state_spec`)."""
        return np.concatenate([self.observe(state, p) for p in range(self.num_players)]).astype(np.float32, copy=False)
