"""The setup of many MegaGem games at once: the same cards as the scalar ``rules.new_state(seed)``.

:func:`gemenvs.megagem.rules.new_state` draws, from ``np.random.default_rng(seed)`` and in this
order: the chart (``integers(5)``, only with ``value_chart="random"``), the shuffle of the 30 gem
cards, the shuffle of the 25 auction cards, ``permutation(30)`` for the missions and, with
``tie_break="queue"``, ``permutation(n)`` for the tie queue. Later it draws at most once more:
``integers(len(tied))`` to break a tie in the first auction (``tie_break="rulebook"``).

NumPy implements those draws on ``next_uint32`` values (:mod:`.rng` gives them for an array of
seeds): a shuffle is Fisher-Yates from the last position down, each swap index drawn by
``random_interval(i)`` (a value masked to the bit width of ``i``, rejected while above ``i``);
``integers(k)`` is Lemire's multiply-and-shift with its rare rejection. :func:`deal` replays that
program for every seed, one stream position at a time across all games, and precomputes the
first-auction tie pick for every possible number of tied bidders.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gemenvs.megagem.data import (
    AUCTION_COPIES, GEMS_PER_COLOUR, MISSIONS_IN_PLAY, NUM_AUCTION_KINDS, NUM_COLOURS, NUM_GEMS, NUM_MISSIONS,
)
from gemenvs.megagem.batched.rng import pcg64_seed, uint32_stream
from gemenvs.megagem.rules import Options

#: where the first-auction tie pick for k tied bidders (k = 2..5) sits in the packed ``tie_picks`` byte
PICK_SHIFT = {2: 0, 3: 1, 4: 3, 5: 5}
PICK_MASK = {2: 1, 3: 3, 4: 3, 5: 7}

_GEM_CARDS = np.repeat(np.arange(NUM_COLOURS, dtype=np.uint8), GEMS_PER_COLOUR)
_AUCTION_CARDS = np.repeat(np.arange(NUM_AUCTION_KINDS, dtype=np.uint8), AUCTION_COPIES)
_NUM_AUCTION_CARDS = len(_AUCTION_CARDS)


@dataclass
class Deals:
    """The setup of G games: what ``rules.new_state`` draws for each seed, as arrays."""

    seeds: np.ndarray      # (G,) uint64
    chart: np.ndarray      # (G,) uint8 index into CHART_NAMES
    gems: np.ndarray       # (G, 30) uint8: the shuffled gem cards (hands dealt from the front)
    auction: np.ndarray    # (G, 25) uint8: auction card kinds, next first
    missions: np.ndarray   # (G, 4) uint8: the four face-up mission cards
    queue: np.ndarray      # (G, n) uint8: the tie queue, front first (tie_break="queue"; else 0..n-1)
    tie_picks: np.ndarray  # (G,) uint8: packed first-auction tie picks (PICK_SHIFT/PICK_MASK)


def _interval_program(sizes: list[int]) -> list[int]:
    """The ``random_interval`` bounds of shuffling sequences of these lengths, in draw order."""
    return [i for n in sizes for i in range(n - 1, 0, -1)]


def _mask_of(bound: int) -> int:
    """The smallest all-ones bit mask covering ``bound`` (random_interval's mask)."""
    mask = bound
    for shift in (1, 2, 4, 8, 16):
        mask |= mask >> shift
    return mask


def _lemire(stream: np.ndarray, pos: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``integers(k)`` drawn at stream positions ``pos``: (values, positions after the draw)."""
    ar = np.arange(stream.shape[0])
    threshold = np.uint64((2**32 - k) % k)
    pos = pos.copy()
    m = stream[ar, pos].astype(np.uint64) * np.uint64(k)
    pos += 1
    redo = (m & np.uint64(0xFFFFFFFF)) < threshold
    while redo.any():  # probability about k / 2**32 per game
        idx = np.flatnonzero(redo)
        m[idx] = stream[idx, pos[idx]].astype(np.uint64) * np.uint64(k)
        pos[idx] += 1
        redo = (m & np.uint64(0xFFFFFFFF)) < threshold
    return (m >> np.uint64(32)).astype(np.uint8), pos


def _shuffle(x: np.ndarray, swaps: np.ndarray) -> None:
    """Apply Fisher-Yates in place: for i from the last position down, swap x[i] with x[swaps[:, k]]."""
    ar = np.arange(x.shape[0])
    for k, i in enumerate(range(x.shape[1] - 1, 0, -1)):
        j = swaps[:, k]
        xi = x[:, i].copy()
        x[:, i] = x[ar, j]
        x[ar, j] = xi


def deal(opts: Options, seeds: np.ndarray) -> Deals:
    """The setup of one game per seed (uint64 array of ints in 0..2**63-1), as ``rules.new_state`` draws it."""
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1)
    g, n = seeds.shape[0], opts.num_players
    ar = np.arange(g)
    bounds = _interval_program([NUM_GEMS, _NUM_AUCTION_CARDS, NUM_MISSIONS] + ([n] if opts.tie_break == "queue" else []))
    count = 2 * ((len(bounds) * 3 // 2 + 24) // 2)  # about 1.3 values per draw are used on average
    state = pcg64_seed(seeds)
    stream, state = uint32_stream(state, count)

    pos = np.zeros(g, dtype=np.int64)
    if opts.value_chart == "random":
        chart, pos = _lemire(stream, pos, 5)
    else:
        from gemenvs.megagem.data import CHART_NAMES
        chart = np.full(g, CHART_NAMES.index(opts.value_chart), dtype=np.uint8)

    # The interval draws, one stream position at a time for all games: a game at draw d takes
    # the value under draw d's mask, keeps it and moves to draw d+1 when it is within bounds.
    num = len(bounds)
    masks = np.array([_mask_of(b) for b in bounds] + [0], dtype=np.int64)
    limits = np.array(bounds + [-1], dtype=np.int64)  # the extra draw never accepts: a game stays done
    swaps = np.zeros((g, num + 1), dtype=np.int64)
    d = np.zeros(g, dtype=np.int64)
    while True:
        active = d < num
        if not active.any():
            break
        if pos.max() >= stream.shape[1] - 8:  # keep a margin for the tie picks
            more, state = uint32_stream(state, 64)
            stream = np.concatenate([stream, more], axis=1)
        v = stream[ar, pos].astype(np.int64) & masks[d]
        swaps[ar, d] = v
        pos += active
        d += v <= limits[d]

    k = 0
    gems = np.tile(_GEM_CARDS, (g, 1))
    _shuffle(gems, swaps[:, k:k + NUM_GEMS - 1])
    k += NUM_GEMS - 1
    auction = np.tile(_AUCTION_CARDS, (g, 1))
    _shuffle(auction, swaps[:, k:k + _NUM_AUCTION_CARDS - 1])
    k += _NUM_AUCTION_CARDS - 1
    perm = np.tile(np.arange(NUM_MISSIONS, dtype=np.uint8), (g, 1))
    _shuffle(perm, swaps[:, k:k + NUM_MISSIONS - 1])
    k += NUM_MISSIONS - 1
    missions = perm[:, :MISSIONS_IN_PLAY].copy()
    queue = np.tile(np.arange(n, dtype=np.uint8), (g, 1))
    if opts.tie_break == "queue":
        _shuffle(queue, swaps[:, k:k + n - 1])

    # The first auction's tie (rulebook) draws integers(k) from the state after setup: one pick per k.
    picks = np.zeros(g, dtype=np.uint8)
    if opts.tie_break == "rulebook":
        for k_tied in range(2, n + 1):
            value, _ = _lemire(stream, pos, k_tied)
            picks |= value << np.uint8(PICK_SHIFT[k_tied])
    return Deals(seeds=seeds, chart=chart, gems=gems, auction=auction, missions=missions, queue=queue,
                 tie_picks=picks)


__all__ = ["Deals", "PICK_MASK", "PICK_SHIFT", "deal"]
