"""Lookup tables of the batched MegaGem engine: gem counts as codes, missions met, observation values.

A hand, a Collection or any other count of gem cards per colour is held as one integer, its
*code* ``sum(count[c] * 7**c)`` (no colour has more than 6 cards, so a code is below 7**5 =
16807 and fits a uint16). Codes add: buying a gem adds ``7**colour``, revealing one subtracts it,
and emptying every hand into the Value Display adds the hands' codes. Everything the rules and
the observation need of a count is then one table look-up by code: the counts, the card total,
the single colour of a one-colour hand, the missions a Collection meets.

Observation tables hold each slot's float32 value computed exactly as the scalar encoder
(:mod:`gemenvs.megagem.encode`) computes it, so gathered observations are byte-identical.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from gemenvs.megagem.data import (
    AUCTION_AMOUNT, AUCTION_TYPE, CHART_NAMES, GEMS_PER_COLOUR, MISSIONS, NUM_AUCTION_CARDS, NUM_COLOURS,
    NUM_GEMS, TOTAL_INVEST, TOTAL_LOANS,
)
from gemenvs.megagem.encode import COIN_SCALE
from gemenvs.megagem.rules import gem_value

BASE = GEMS_PER_COLOUR + 1
NUM_CODES = BASE ** NUM_COLOURS  # 16807
#: 7**colour, with a sixth entry 0 for "no gem" (an empty gem-row slot, no reveal)
POW = np.array([BASE ** c for c in range(NUM_COLOURS)] + [0], dtype=np.uint16)

#: (NUM_CODES, 5) uint8: the count of each colour of a code
COUNTS = (np.arange(NUM_CODES)[:, None] // POW[:NUM_COLOURS].astype(np.int64) % BASE).astype(np.uint8)
#: (NUM_CODES,) uint8: the number of cards of a code
SIZE = COUNTS.sum(axis=1, dtype=np.uint8)
#: (NUM_CODES,) int8: the colour of a code holding one colour only, else -1 (a forced reveal)
SINGLE = np.where((COUNTS > 0).sum(axis=1) == 1, (COUNTS > 0).argmax(axis=1), -1).astype(np.int8)
#: (NUM_CODES,) uint8: the colour of a one-colour code, else 5 ("no gem": empty or several colours)
SINGLE_OR_NONE = np.where(SINGLE >= 0, SINGLE, NUM_COLOURS).astype(np.uint8)
#: (NUM_CODES,) bool: the code holds several colours (a reveal is a choice)
SEVERAL = (COUNTS > 0).sum(axis=1) > 1

#: (NUM_CODES,) uint8: how many colours a code holds; (NUM_CODES, 5) uint8: those colours, in order
NUM_HELD = (COUNTS > 0).sum(axis=1, dtype=np.uint8)
HELD = np.argsort(COUNTS == 0, axis=1, kind="stable").astype(np.uint8)

KIND_TREASURE, KIND_LOAN, KIND_INVEST = 0, 1, 2
#: per auction card kind: 0 treasure, 1 loan, 2 invest; its amount; the loan amount (0 if not a loan)
CARD_KIND = np.array([("treasure", "loan", "invest").index(t) for t in AUCTION_TYPE], dtype=np.uint8)
CARD_AMOUNT = np.array(AUCTION_AMOUNT, dtype=np.int16)
LOAN_AMOUNT = np.where(CARD_KIND == KIND_LOAN, CARD_AMOUNT, 0).astype(np.int16)
LOAN_AMOUNT_U8 = LOAN_AMOUNT.astype(np.uint8)
INVEST_AMOUNT = np.where(CARD_KIND == KIND_INVEST, CARD_AMOUNT, 0).astype(np.uint8)
#: gems a card buys (0 for a Loan or an Invest card)
TREASURE_GEMS = np.where(CARD_KIND == KIND_TREASURE, CARD_AMOUNT, 0).astype(np.uint8)
#: (4, 6) uint8: per card kind [loan amount, investment amount, gems bought, is an Invest card]: what
#: winning it adds to [loans owed, investment amounts, (locked bids: the bid if an Invest card)]
CARD_PROPS = np.stack([LOAN_AMOUNT_U8, INVEST_AMOUNT, TREASURE_GEMS, (CARD_KIND == KIND_INVEST).astype(np.uint8)])
NOT_TREASURE = CARD_KIND != KIND_TREASURE


def _met(kind: str, arg: tuple[int, ...], two_pairs: str) -> np.ndarray:
    """Whether each code's counts meet one mission card (``data.mission_met``, for all codes at once)."""
    c = COUNTS.astype(np.int64)
    if kind == "each":
        return np.all(c[:, list(arg)] >= 1, axis=1)
    if kind == "same":
        return c[:, arg[0]] >= 2
    if kind == "same_any":
        return c.max(axis=1) >= arg[0]
    if kind == "different":
        return (c > 0).sum(axis=1) >= arg[0]
    if kind == "two_pairs":
        return ((c >= 2).sum(axis=1) if two_pairs == "distinct" else (c // 2).sum(axis=1)) >= 2
    raise AssertionError(f"unknown mission kind {kind}")


@lru_cache(maxsize=None)
def missions_met(two_pairs: str) -> np.ndarray:
    """(NUM_CODES,) uint32: bit m set when a Collection of that code meets mission card m."""
    bits = np.zeros(NUM_CODES, dtype=np.uint32)
    for m, (_, _, kind, arg) in enumerate(MISSIONS):
        bits |= _met(kind, arg, two_pairs).astype(np.uint32) << np.uint32(m)
    return bits


def _f32(values) -> np.ndarray:
    """float64 values (the scalar encoder's Python floats) stored as float32, as it stores them."""
    return np.asarray(values, dtype=np.float64).astype(np.float32)


# count / 6 of the Display and own-hand slots: the encoder divides in float32
_SIXTHS32 = np.arange(NUM_GEMS + 1, dtype=np.float32) / np.float32(GEMS_PER_COLOUR)
#: (NUM_CODES, 5) float32: own-hand slots of a hand code
HAND_OBS = _SIXTHS32[COUNTS]
#: (NUM_CODES, 5) float32: collection slots of a Collection code (count / 6 in float64)
COLLECTION_OBS = _f32(COUNTS / GEMS_PER_COLOUR)
#: (NUM_CODES,) float32: hand_size slot of a hand code
HAND_SIZE_OBS = _f32(SIZE / GEMS_PER_COLOUR)
#: (5 charts * 7,) float32: gem_value slot of chart ch and Display count k at ch * 7 + k
GEM_VALUE_OBS = _f32([gem_value(ch, k) / 20.0 for ch in CHART_NAMES for k in range(BASE)])
#: (5, 7) int16: coins one Collection gem is worth, per chart and Display count
GEM_VALUE = np.array([[gem_value(ch, k) for k in range(BASE)] for ch in CHART_NAMES], dtype=np.int16)
#: (5 charts * 7,) int32: the same, flat (chart * 7 + Display count)
GEM_VALUE_I32 = GEM_VALUE.reshape(-1).astype(np.int32)
# The slots that are a count over a fixed scale are divided in float32 (np.divide(count, scale)):
# for integers below 2**24 that is exactly the float64 quotient stored as float32, as the scalar
# encoder computes it (k / d is either a float32 rounding boundary itself or at least 2**-29 ulp
# from one when d < 2**29, farther than float64's rounding error, so rounding twice agrees).
#: float32 divisors: coin amounts (coins, bid limits, locked bids, last bids), Display counts,
#: auction cards of one kind left
COIN_DIV, DISPLAY_DIV, DECK_KIND_DIV = np.float32(COIN_SCALE), np.float32(GEMS_PER_COLOUR), np.float32(12.0)
#: (3, 1, 1) float32: the divisors of the debt rows (loans owed, investment amounts, locked bids)
DEBT_DIVS = np.array([TOTAL_LOANS, TOTAL_INVEST, COIN_SCALE], np.float32)[:, None, None]
#: (26,) float32: round / 25
ROUND_OBS = _f32(np.arange(NUM_AUCTION_CARDS + 1) / NUM_AUCTION_CARDS)
#: (31,) float32: gem cards left in the deck / 30
GEM_DECK_OBS = _f32(np.arange(NUM_GEMS + 1) / 30.0)
#: (7, 5) float32: one-hot colour, row 5 and 6 (-1) all zero (an empty gem-row slot)
COLOUR_ONE_HOT = np.vstack([np.eye(NUM_COLOURS, dtype=np.float32), np.zeros((2, NUM_COLOURS), np.float32)])
#: (7, 6) float32: one-hot auction card kind, row 6 (also -1) all zero (no card)
CARD_ONE_HOT = np.vstack([np.eye(6, dtype=np.float32), np.zeros((1, 6), np.float32)])
#: (3, 2) float32: phase one-hot for bid, reveal, over
PHASE_OBS = np.array([[1, 0], [0, 1], [0, 0]], dtype=np.float32)


def tie_rank_obs(n: int) -> np.ndarray:
    """(n,) float32: tie_rank slot of tie-order place k (place / max(n - 1, 1) in float64)."""
    return _f32(np.arange(n) / max(n - 1, 1))


__all__ = [name for name in dir() if name.isupper()] + ["missions_met", "tie_rank_obs"]
