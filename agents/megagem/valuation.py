"""What a MegaGem seat can expect gems and lots to be worth: expected final gem values and mission gains.

Every gem card that starts in a hand ends in the Value Display, so the final Display count of colour
``c`` is ``display[c] + own_hand[c] + X`` where ``X`` is the number of colour-``c`` cards in the other
hands. The unseen cards of ``c`` (6 minus Display, own hand, all Collections and the face-up row) are
split between the other hands and the face-down deck, so ``X`` is hypergeometric: ``H`` draws (cards
in other hands) from ``U`` unseen cards of which ``U_c`` have colour ``c``. The expected chart value
over that distribution is the colour's expected final gem value.

The scalar functions read a decoded :class:`~gemenvs.agents.megagem.decode.View`; beside them, their
array forms for many rows at once (:func:`expected_values`, :func:`missions_met`,
:func:`gems_needed_table`), which give the same numbers.
"""
from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np

from gemenvs.agents.megagem.decode import CHARTS, View
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, GEMS_PER_COLOUR, MISSION_VALUE, MISSIONS, NUM_COLOURS

#: the kinds of auction card (``AUCTION_TYPE``)
LOAN, INVEST, TREASURE = "loan", "invest", "treasure"


def add_up(terms) -> float:
    """The sum of ``terms`` added left to right, one rounding per addition: what ``sum`` does up to Python
    3.11. (From 3.12 on ``sum`` compensates the rounding of float additions, so a bidder's numbers would
    depend on the interpreter; the batched twins add in this order too.)"""
    total = 0
    for x in terms:
        total = total + x
    return total


@cache
def hypergeom_pmf(total: int, good: int, draws: int) -> tuple[float, ...]:
    """P(k good cards among ``draws`` drawn from ``total`` of which ``good`` are good), k = 0..draws."""
    if total <= 0 or draws <= 0:
        return (1.0,)
    draws = min(draws, total)
    good = max(0, min(good, total))
    denom = math.comb(total, draws)
    return tuple(math.comb(good, k) * math.comb(total - good, draws - k) / denom for k in range(draws + 1))


@cache
def expected_value(chart: tuple, known: int, total: int, good: int, draws: int) -> float:
    """Expected chart value of a colour with ``known`` certain Display cards plus a hypergeometric rest."""
    top = len(chart) - 1
    return add_up(p * chart[min(known + k, top)] for k, p in enumerate(hypergeom_pmf(total, good, draws)))


def unseen_counts(v: View, include_own_hand: bool) -> list[int]:
    """Cards of each colour that the observer (or, without its hand, the public) cannot locate."""
    out = []
    for c in range(NUM_COLOURS):
        seen = v.display[c] + v.col_total[c] + v.row.count(c)
        if include_own_hand:
            seen += v.hand[c]
        out.append(max(0, GEMS_PER_COLOUR - seen))
    return out


def private_values(v: View) -> tuple[list[float], list[int]]:
    """Expected final value of one gem of each colour given the observer's hand; and unseen counts."""
    unseen = unseen_counts(v, True)
    total = sum(unseen)
    draws = sum(v.hand_size[1:])
    return [expected_value(v.chart, v.display[c] + v.hand[c], total, unseen[c], draws)
            for c in range(NUM_COLOURS)], unseen


def public_values(v: View, display=None, unseen=None, draws=None) -> list[float]:
    """Expected final value of each colour from public information only (all hands unknown)."""
    display = v.display if display is None else display
    unseen = unseen_counts(v, False) if unseen is None else unseen
    total = sum(unseen)
    draws = sum(v.hand_size) if draws is None else draws
    return [expected_value(v.chart, display[c], total, unseen[c], draws) for c in range(NUM_COLOURS)]


def lot_gems(v: View) -> list[int]:
    """Colours of the gems the current auction card sells (empty for loans and investments)."""
    if v.card < 0 or AUCTION_TYPE[v.card] != TREASURE:
        return []
    return v.row[:AUCTION_AMOUNT[v.card]]


# --------------------------------------------------------------------------- missions

def gems_needed(mission: int, counts) -> int:
    """Fewest gems to add to Collection ``counts`` to meet ``mission`` ("two pairs" read as "any")."""
    _, _, kind, arg = MISSIONS[mission]
    if kind == "each":
        return sum(1 for c in arg if counts[c] == 0)
    if kind == "same":
        return max(0, 2 - counts[arg[0]])
    if kind == "same_any":
        return max(0, arg[0] - max(counts))
    if kind == "different":
        return max(0, arg[0] - sum(1 for x in counts if x > 0))
    # two pairs
    pairs = sum(x // 2 for x in counts)
    odd = sum(1 for x in counts if x % 2)
    if pairs >= 2:
        return 0
    if pairs == 1:
        return 1 if odd else 2
    return 2 if odd >= 2 else (3 if odd == 1 else 4)


def mission_gain(v: View, player: int, gems: list[int], progress: tuple[float, ...]) -> float:
    """Mission coins ``player`` (seat-relative) expects to gain by adding ``gems`` to its Collection.

    ``progress[d]`` is the credit for an open mission still ``d`` gems short (``progress[0] = 1``).
    """
    if not gems or not v.open_missions:
        return 0.0
    return _mission_gain(v.open_missions, tuple(v.collection[player]), tuple(gems), tuple(progress))


@lru_cache(maxsize=1 << 16)
def _mission_gain(missions: tuple, before: tuple, gems: tuple, progress: tuple) -> float:
    after = list(before)
    for c in gems:
        after[c] += 1
    top = len(progress) - 1
    gain = 0.0
    for m in missions:
        d0, d1 = gems_needed(m, before), gems_needed(m, after)
        if d1 < d0:
            gain += MISSION_VALUE[m] * (progress[min(d1, top)] - progress[min(d0, top)])
    return gain



# --------------------------------------------------------------------------- many rows at once

#: bounds of the packed key of an expected value: chart, known, total unseen, unseen of the colour, draws
_EV_BOUNDS = (len(CHARTS), 16, 32, 8, 32)
#: what one step of each argument but the last adds to the packed key
_EV_STRIDES = tuple(math.prod(_EV_BOUNDS[i + 1:]) for i in range(len(_EV_BOUNDS) - 1))
_EV_TABLE: np.ndarray | None = None  # expected_value by packed key, filled as keys are met (NaN: not yet)


def expected_values(chart: np.ndarray, known: np.ndarray, total: np.ndarray, good: np.ndarray,
                     draws: np.ndarray) -> np.ndarray | None:
    """:func:`expected_value` for arrays of arguments (broadcast together), or None when an argument
    falls outside the table (never for observations of real games: the caller then plays row by row)."""
    global _EV_TABLE
    args = [np.asarray(a) for a in (chart, known, total, good, draws)]
    shape = np.broadcast_shapes(*(a.shape for a in args))
    key = np.zeros((), np.int64)
    for a, bound in zip(args, _EV_BOUNDS):  # (each argument checked and packed before broadcasting)
        if a.size and (a.min() < 0 or a.max() >= bound):
            return None
        key = key * bound + a
    key = np.broadcast_to(key, shape)
    if _EV_TABLE is None:
        _EV_TABLE = np.full(math.prod(_EV_BOUNDS), np.nan)
    values = _EV_TABLE.take(key)
    missing = np.isnan(values)
    if missing.any():
        for k in np.unique(key[missing]).tolist():
            c, rest = divmod(k, _EV_STRIDES[0])
            kn, rest = divmod(rest, _EV_STRIDES[1])
            t, rest = divmod(rest, _EV_STRIDES[2])
            g, d = divmod(rest, _EV_STRIDES[3])
            _EV_TABLE[k] = expected_value(CHARTS[c], kn, t, g, d)
        values = _EV_TABLE.take(key)
    return values


def missions_met(counts: np.ndarray) -> np.ndarray:
    """(G, missions) bool: Collection counts (G, 5) meet each mission card as :func:`gems_needed` reads it
    (``gems_needed == 0``; "two pairs" as any two pairs)."""
    ge1, ge2 = counts >= 1, counts >= 2
    met = np.zeros((len(counts), len(MISSIONS)), np.bool_)
    for i, (_, _, kind, arg) in enumerate(MISSIONS):
        if kind == "each":
            met[:, i] = ge1[:, list(arg)].all(axis=1)
        elif kind == "same":
            met[:, i] = ge2[:, arg[0]]
        elif kind == "same_any":
            met[:, i] = counts.max(axis=1) >= arg[0]
        elif kind == "different":
            met[:, i] = ge1.sum(axis=1) >= arg[0]
        else:  # two pairs
            met[:, i] = (counts // 2).sum(axis=1) >= 2
    return met


@cache
def missions_met_table() -> np.ndarray:
    """Bit ``m`` of entry ``code`` (Collection counts 0..6 per colour in base 7): the counts meet mission ``m``."""
    counts = (np.arange(7 ** NUM_COLOURS)[:, None] // 7 ** np.arange(NUM_COLOURS)) % 7
    return (missions_met(counts).astype(np.int64) << np.arange(len(MISSIONS))).sum(axis=1)



@cache
def gems_needed_table() -> np.ndarray:
    """(7**5, missions) int64: :func:`gems_needed` of every mission for Collection counts 0..6 per colour (base 7 code)."""
    counts = (np.arange(7 ** NUM_COLOURS)[:, None] // 7 ** np.arange(NUM_COLOURS)) % 7
    need = np.zeros((len(counts), len(MISSIONS)), np.int64)
    have = counts > 0
    pairs, odd = (counts // 2).sum(axis=1), (counts % 2).sum(axis=1)
    for i, (_, _, kind, arg) in enumerate(MISSIONS):
        if kind == "each":
            need[:, i] = (~have[:, list(arg)]).sum(axis=1)
        elif kind == "same":
            need[:, i] = np.maximum(0, 2 - counts[:, arg[0]])
        elif kind == "same_any":
            need[:, i] = np.maximum(0, arg[0] - counts.max(axis=1))
        elif kind == "different":
            need[:, i] = np.maximum(0, arg[0] - have.sum(axis=1))
        else:  # two pairs
            need[:, i] = np.where(pairs >= 2, 0, np.where(pairs == 1, np.where(odd > 0, 1, 2),
                                                          np.where(odd >= 2, 2, np.where(odd == 1, 3, 4))))
    return need


__all__ = ["INVEST", "LOAN", "TREASURE", "expected_value", "expected_values", "gems_needed", "gems_needed_table",
           "hypergeom_pmf", "lot_gems", "mission_gain", "missions_met", "missions_met_table", "private_values",
           "public_values", "unseen_counts"]
