"""Randomised members of the tuned MegaGem bidder family, for opponent pools and held-out evaluation.

Member ``k`` is the :class:`~gemenvs.agents.megagem.tuned.ParametricBidder` whose weights are the
tuned ones for the table's player count (:class:`~gemenvs.agents.megagem.tuned.TunedBidder`'s,
:data:`~gemenvs.agents.megagem.tuned.DEFAULT_WEIGHTS` where no tuned file or entry exists) moved
by ``spread`` x each weight's tuning step x a standard normal draw, clipped to the weight's
bounds (:func:`~gemenvs.agents.megagem.tuned.random_weights`). The draws of member ``k`` come from
``numpy.random.default_rng([FAMILY_SALT, k])`` alone, so a member is the same agent in every
process, run and seat, and ``spread`` only scales how far it moves (the same direction at every
spread; spread 0 is the tuned bidder itself).

Members are named ``tuned_family:K`` (spread :data:`DEFAULT_SPREAD`) or ``tuned_family:K:SPREAD``
and built by name like any baseline: ``make_agent("megagem", "tuned_family:3", env)``, as a pool
baseline (``pool.family`` in a training config adds members ``0 .. members-1``) or as an
evaluation opponent (members the pool never held, e.g. ``tuned_family:100``, are held-out styles).
They are not in the baselines of the game's entry, so default opponent lists are unchanged.
"""
from __future__ import annotations

import math
import re

import numpy as np

from gemenvs.agents.megagem.tuned import TunedBidder, random_weights
from gemenvs.core.spec import ActionSpec, ObservationSpec

#: the name prefix of every member
FAMILY = "tuned_family"
#: spread of a member named without one, in tuning steps per weight
DEFAULT_SPREAD = 1.0
#: first entry of every member's seed sequence (member k draws from default_rng([FAMILY_SALT, k]))
FAMILY_SALT = 20261130
_NAME = re.compile(r"(?P<k>[0-9]+)(?::(?P<spread>[^:]+))?")


def member_name(k: int, spread: float = DEFAULT_SPREAD) -> str:
    """The agent name of member ``k`` at ``spread`` (``tuned_family:3``, ``tuned_family:3:0.5``)."""
    name = f"{FAMILY}:{k}" if float(spread) == DEFAULT_SPREAD else f"{FAMILY}:{k}:{float(spread)!r}"
    parse_member(name)  # a ValueError for a bad k or spread
    return name


def parse_member(name: str) -> tuple[int, float]:
    """``(k, spread)`` of a member name; a ``ValueError`` says what is wrong with a bad one."""
    prefix, _, rest = name.partition(":")
    if prefix != FAMILY:
        raise ValueError(f"{name!r} is not a {FAMILY} member name")
    grammar = f"a member is named {FAMILY}:K or {FAMILY}:K:SPREAD (K = 0, 1, 2, ...; SPREAD >= 0, in tuning steps)"
    m = _NAME.fullmatch(rest)
    if m is None:
        raise ValueError(f"bad member name {name!r}: {grammar}")
    spread = DEFAULT_SPREAD
    if m["spread"] is not None:
        try:
            spread = float(m["spread"])
        except ValueError:
            raise ValueError(f"bad member name {name!r}: spread {m['spread']!r} is not a number; {grammar}") from None
        if not math.isfinite(spread) or spread < 0:
            raise ValueError(f"bad member name {name!r}: spread must be a finite number >= 0; {grammar}")
    return int(m["k"]), spread


def member_weights(k: int, center: dict, spread: float = DEFAULT_SPREAD) -> dict[str, float]:
    """The weights of member ``k``: ``center`` moved by ``spread`` tuning steps x member k's normal draws."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"a member index is an integer >= 0; got {k!r}")
    return random_weights(np.random.default_rng([FAMILY_SALT, int(k)]), center=center, spread=spread)


class FamilyBidder(TunedBidder):
    """Member ``member`` of the tuned bidder family at ``spread`` (see the module docstring);
    ``center_source`` says where the centre weights came from (TunedBidder's ``weights_source``)."""

    name = FAMILY

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None, member: int = 0, spread: float = DEFAULT_SPREAD,
                 weights_file=None):
        super().__init__(spec, num_actions, seed, action_spec, weights_file=weights_file)
        self.member, self.spread = int(member), float(spread)
        self.center_source = self.weights_source
        self.set_weights(member_weights(member, self.weights, spread))
        self.weights_source = f"{FAMILY} member {self.member} at spread {self.spread:g} around {self.center_source}"


def make_member(env, name: str, seed: int | None = None) -> FamilyBidder:
    """The member named ``name`` (``tuned_family:K[:SPREAD]``) for ``env`` (the registry's builder)."""
    k, spread = parse_member(name)
    return FamilyBidder.for_env(env, seed=seed, member=k, spread=spread)


__all__ = ["DEFAULT_SPREAD", "FAMILY", "FAMILY_SALT", "FamilyBidder", "make_member", "member_name", "member_weights",
           "parse_member"]
