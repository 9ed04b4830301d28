"""Reading a MegaGem observation back into named quantities in game units (:class:`Decoder`, :class:`View`).

The decoder goes through the environment's :class:`~gemenvs.core.spec.ObservationSpec`: every slot is
multiplied back by its slice's scale and rounded (all MegaGem quantities are integers), one-hot blocks
become indices. :func:`onehot_rows` is the same reading of one-hot blocks for many rows at once.
"""
from __future__ import annotations

import numpy as np

from gemenvs.core.spec import ObservationSpec
from gemenvs.megagem.data import NUM_COLOURS, VALUE_CHARTS

CHARTS = tuple(VALUE_CHARTS.values())  # in observation one-hot order A..E


class View:
    """One seat's observation in game units (seat-relative per-player lists; index 0 = self)."""

    __slots__ = (
        "bidding",
        "card",
        "chart",
        "coins",
        "col_total",
        "collection",
        "deck_left",
        "display",
        "gem_deck",
        "hand",
        "hand_size",
        "investment",
        "last_bids",
        "last_winner",
        "loans",
        "locked",
        "missions",
        "n",
        "open_missions",
        "owner",
        "round",
        "row",
        "tie_random",
        "tie_rank",
    )


class Decoder:
    """Decodes MegaGem observations through the spec, in the same units as ``spec.decode``, quickly.

    Every slot is multiplied back by its slice's scale and rounded to an integer (all MegaGem
    quantities are integers in game units); one-hot blocks become indices.
    """

    def __init__(self, spec: ObservationSpec):
        if spec is None:
            raise ValueError("MegaGem agents need the observation spec (use Agent.for_env(env))")
        self.spec = spec
        self.size = spec.size
        self.scale = np.concatenate([np.full(s.size, s.scale) for s in spec.slices])
        self.sl = {s.name: (s.offset, s.stop) for s in spec.slices}
        self.n = spec["hand_size"].size
        self.num_missions = spec["mission"].shape[1]
        self.num_mission_slots = spec["mission"].shape[0]

    def __call__(self, obs: np.ndarray) -> View:
        obs = np.asarray(obs)
        if obs.shape != (self.size,):
            raise ValueError(f"observation has shape {obs.shape}, spec expects ({self.size},)")
        x = np.rint(obs * self.scale).astype(np.int64).tolist()
        n, sl = self.n, self.sl
        v = View()
        v.n = n

        def block(name):
            a, b = sl[name]
            return x[a:b]

        v.bidding = block("phase")[0] == 1
        v.chart = CHARTS[onehot(block("value_chart"))]
        v.round = block("round")[0]
        v.card = onehot(block("auction_card"))
        v.deck_left = block("auction_deck_left")
        row = block("gem_row")
        v.row = [c for c in (onehot(row[:NUM_COLOURS]), onehot(row[NUM_COLOURS:])) if c >= 0]
        v.gem_deck = block("gem_deck_left")[0]
        v.display = block("display")
        v.hand = block("own_hand")
        v.hand_size = block("hand_size")
        v.coins = block("coins")
        col = block("collection")
        v.collection = [col[NUM_COLOURS * p:NUM_COLOURS * (p + 1)] for p in range(n)]
        v.col_total = [sum(col[c::NUM_COLOURS]) for c in range(NUM_COLOURS)]
        v.loans = block("loans")
        v.investment = block("investment")
        v.locked = block("locked")
        mis, own = block("mission"), block("mission_owner")
        m = self.num_missions
        missions, owner = [], []
        for i in range(self.num_mission_slots):
            k = onehot(mis[m * i:m * (i + 1)])
            if k >= 0:
                missions.append(k)
                owner.append(onehot(own[(n + 1) * i:(n + 1) * (i + 1)]) - 1)  # -1 open, else claimer
        v.missions, v.owner = missions, owner
        v.open_missions = tuple(k for k, o in zip(missions, owner) if o < 0)
        v.last_bids = block("last_bids")
        v.last_winner = onehot(block("last_winner"))
        v.tie_rank = block("tie_rank")
        v.tie_random = block("tie_random")[0] == 1
        return v


def onehot(xs: list) -> int:
    """Index of the 1 in a decoded one-hot block, -1 if the block is all zero."""
    return xs.index(1) if 1 in xs else -1


def onehot_rows(block: np.ndarray) -> np.ndarray:
    """Per row, the index of the first 1 of a decoded one-hot block, -1 if none (``onehot`` row by row)."""
    return first_true(block == 1)


def first_true(one: np.ndarray) -> np.ndarray:
    """Per row of a bool array, the index of its first True, -1 if none."""
    return np.where(one.any(axis=1), np.argmax(one, axis=1), -1)


def decodes_to_one(values: np.ndarray) -> np.ndarray:
    """Where ``np.rint(values)`` is 1 (the decoding of a one-hot slot that is set), without rounding:
    ``rint`` rounds half to even, so exactly the values strictly between 0.5 and 1.5."""
    return (values > 0.5) & (values < 1.5)


__all__ = ["CHARTS", "Decoder", "View", "decodes_to_one", "first_true", "onehot", "onehot_rows"]
