"""The engine protocol every game implements: pure rules over plain-data states, no PettingZoo.

A game object holds validated options and is stateless; all game data lives in a state
object that the game creates and mutates. Players are seat numbers ``0..num_players-1``;
seat ``i+1`` sits to the left (clockwise) of seat ``i``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gemenvs.core.spec import ObservationSpec


class IllegalActionError(ValueError):
    """An action that the rules forbid in the current state (the message says why)."""


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


def check_choice(name: str, value: Any, allowed) -> Any:
    """Validate an option against a finite set of allowed values, naming both on failure."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


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


class Game(ABC):
    """Rules of one game for fixed options; see the module docstring for conventions."""

    #: short identifier, e.g. "megagem"
    name: str = ""
    #: environment version, bumped when behaviour changes
    version: int = 0
    #: number of seats
    num_players: int
    #: size of the single Discrete action space shared by all seats
    num_actions: int
    #: layout of the flat observation vector
    spec: ObservationSpec
    #: divisor that turns final scores into rewards for the "score" and "margin" modes
    score_scale: float = 1.0
    #: upper bound on the number of decisions in one game (for documentation and tests)
    max_decisions: int = 10_000

    @abstractmethod
    def options(self) -> dict[str, Any]:
        """The options this game was built with (enough to rebuild it)."""

    @abstractmethod
    def new_state(self, seed: int | None = None):
        """A fresh game state, with all randomness drawn from ``seed``."""

    @abstractmethod
    def to_act(self, state) -> tuple[int, ...]:
        """Seats that must act now (several during simultaneous decisions), in seat order."""

    @abstractmethod
    def legal_mask(self, state, player: int) -> np.ndarray:
        """An int8 mask over actions for ``player``; all zero when it is not to act."""

    @abstractmethod
    def illegal_reason(self, state, player: int, action: int) -> str | None:
        """Why ``action`` by ``player`` is illegal now, or ``None`` when it is legal."""

    @abstractmethod
    def apply_legal(self, state, player: int, action: int) -> None:
        """Play an ``action`` already known to be legal for ``player``, mutating ``state``."""

    def apply(self, state, player: int, action) -> None:
        """Play ``action`` for ``player``, mutating ``state``; an illegal one raises IllegalActionError."""
        self.apply_legal(state, player, self.check_action(state, player, action))

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
    def action_name(self, action: int) -> str:
        """A short human label of an action id."""

    def why_illegal(self, state, player: int, action) -> str | None:
        """Why ``action`` (any value) is illegal for ``player`` now, or ``None`` when legal."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if not (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
                return f"actions are integers in 0..{self.num_actions - 1}, not {type(action).__name__}"
        a = int(action)
        if not 0 <= a < self.num_actions:
            return f"out of range 0..{self.num_actions - 1}"
        return self.illegal_reason(state, player, a)

    def check_action(self, state, player: int, action) -> int:
        """Return ``action`` as an int if legal for ``player`` now, else raise IllegalActionError."""
        reason = self.why_illegal(state, player, action)
        if reason is not None:
            raise IllegalActionError(f"illegal action {action!r} ({self.safe_action_name(action)}) "
                                     f"by player {player}: {reason}")
        return int(action)

    def safe_action_name(self, action) -> str:
        """``action_name`` that never raises (for error messages)."""
        try:
            a = int(action)
        except (TypeError, ValueError):
            return "not an action"
        if 0 <= a < self.num_actions and a == action:
            return self.action_name(a)
        return "not an action"
