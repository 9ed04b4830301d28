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
from gemenvs.megagem.batched.rng import PCG64Batch, pcg64_seed
from gemenvs.megagem.data import CHART_NAMES
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


class _Stream:
    """The ``next_uint32`` values of G generators, position by position, generated on demand in
    blocks into one buffer (grown, rarely, by doubling)."""

    BLOCK = 16

    def __init__(self, seeds: np.ndarray, count: int):
        self.gen = PCG64Batch(pcg64_seed(seeds))
        self.values = np.empty((count + count % 2, len(seeds)), np.uint32)
        self.filled = 0  # rows generated

    def ensure(self, count: int) -> np.ndarray:
        """The values, at least ``count`` positions of them generated."""
        if count > self.filled:
            want = self.filled + max(count - self.filled, self.BLOCK)
            want += want % 2
            if want > self.values.shape[0]:
                grown = np.empty((max(want, 2 * self.values.shape[0]), self.values.shape[1]), np.uint32)
                grown[:self.filled] = self.values[:self.filled]
                self.values = grown
            self.gen.fill(self.values[self.filled:want])
            self.filled = want
        return self.values


def _lemire(stream: _Stream, pos: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``integers(k)`` (Lemire's method) drawn at stream positions ``pos``: (values, positions after)."""
    g = np.arange(len(pos))
    threshold = np.uint64((2**32 - k) % k)
    pos = pos.copy()
    m = stream.ensure(int(pos.max()) + 1)[pos, g].astype(np.uint64) * np.uint64(k)
    pos += 1
    redo = (m & np.uint64(0xFFFFFFFF)) < threshold
    while redo.any():  # probability about k / 2**32 per game
        idx = redo.nonzero()[0]
        m[idx] = stream.ensure(int(pos.max()) + 1)[pos[idx], idx].astype(np.uint64) * np.uint64(k)
        pos[idx] += 1
        redo = (m & np.uint64(0xFFFFFFFF)) < threshold
    return (m >> np.uint64(32)).astype(np.uint8), pos


def _shuffle(x: np.ndarray, swaps: np.ndarray) -> None:
    """Fisher-Yates in place on x (L, G), one sequence per column: for i from L-1 down to 1, swap
    rows i and swaps[k] (the k-th draw) of every column."""
    g = x.shape[1]
    flat = x.reshape(-1)
    at = swaps.astype(np.intp)  # (L - 1, G): the flat index of the swapped entry of each column
    at *= g
    at += np.arange(g)
    for k, i in enumerate(range(x.shape[0] - 1, 0, -1)):
        xi = x[i].copy()
        x[i] = flat.take(at[k], mode="clip")
        flat[at[k]] = xi


#: games dealt together (the arrays of a chunk stay in the processor's caches)
CHUNK = 8192


def deal(opts: Options, seeds: np.ndarray) -> Deals:
    """The setup of one game per seed (uint64 array of ints in 0..2**63-1), as ``rules.new_state`` draws it."""
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1)
    parts = [_deal_chunk(opts, seeds[at:at + CHUNK]) for at in range(0, len(seeds), CHUNK)]
    if len(parts) == 1:
        return parts[0]
    return Deals(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in Deals.__dataclass_fields__})


def _deal_chunk(opts: Options, seeds: np.ndarray) -> Deals:
    g, n = seeds.shape[0], opts.num_players
    sizes = [NUM_GEMS, _NUM_AUCTION_CARDS, NUM_MISSIONS] + ([n] if opts.tie_break == "queue" else [])
    bounds = _interval_program(sizes)
    num = len(bounds)
    first = int(opts.value_chart == "random")
    stream = _Stream(seeds, 2 * ((first + num * 7 // 4 + 9) // 2))  # about 1.25 values per draw are used (up to 1.7)
    pos = np.zeros(g, dtype=np.int64)
    if first:
        chart, pos = _lemire(stream, pos, 5)
    else:
        chart = np.full(g, CHART_NAMES.index(opts.value_chart), dtype=np.uint8)
    start = int(pos.min())
    late = pos > start  # (the chart draw was rejected: probability 1 in 2**32 per game)

    # The interval draws, one stream position at a time for all games: a game at draw d takes the
    # value under draw d's mask, keeps it and moves to draw d+1 when it is within the bound. Past
    # its last draw a game keeps "drawing" (mask 0, always accepted), so d - num counts the
    # positions it went past its end.
    # (the draws are recorded position by position, row writes only: the value under the game's
    # current mask and whether it was kept; each game's kept values are then gathered in draw
    # order into rows 0, 1, 2, ... of ``swaps``: gathers are much cheaper than scatters in numpy)
    cap = stream.values.shape[0] + 64
    masks = np.array([_mask_of(b) for b in bounds] + [0] * (cap + 1), dtype=np.uint32)
    limits = np.array(bounds + [0] * (cap + 1), dtype=np.uint32)
    drawn = np.zeros((cap, g), dtype=np.uint8)   # drawn[t]: the masked value at position start + t
    kept = np.zeros((cap, g), dtype=np.bool_)    # ... and whether it was within the bound
    d = np.zeros(g, dtype=np.intp)
    mask_d, limit_d = masks.take(d, mode="clip"), limits.take(d, mode="clip")
    v = np.empty(g, np.uint32)
    t = start
    values = stream.ensure(t + 1)
    while True:
        if t >= stream.filled:
            values = stream.ensure(t + 1)
        if t - start >= cap:  # (a game needing this many values: beyond any seed seen)
            return _deal_chunk_by_numpy(opts, seeds)
        np.bitwise_and(values[t], mask_d, out=v)
        row = t - start
        np.copyto(drawn[row], v, casting="unsafe")
        np.less_equal(v, limit_d, out=kept[row])
        d += kept[row]
        masks.take(d, out=mask_d, mode="clip")
        limits.take(d, out=limit_d, mode="clip")
        t += 1
        if row + 1 >= num and (row + 1) % 4 == 0 and np.minimum.reduce(d) >= num:
            break
    # each game's kept values in draw order: nxt[r] is the row of the game's first kept value at
    # row r or later (filled from the last row back), followed draw by draw
    rows = t - start
    base = np.arange(g, dtype=np.intp)
    nxt = np.empty((rows + 1, g), dtype=np.int16)
    nxt[rows] = rows  # (never followed: every game keeps its last draws)
    for r in range(rows - 1, -1, -1):
        np.subtract(np.int16(r), nxt[r + 1], out=nxt[r])  # nxt[r] = r if kept[r] else nxt[r + 1]
        nxt[r] *= kept[r]
        nxt[r] += nxt[r + 1]
    nxt_flat, drawn_flat = nxt.reshape(-1), drawn.reshape(-1)
    swaps = np.empty((num, g), dtype=np.uint8)
    row_k, at = nxt[0].copy(), np.empty(g, dtype=np.intp)
    for k in range(num):
        np.copyto(at, row_k)
        at *= g
        at += base
        drawn_flat.take(at, out=swaps[k], mode="clip")
        if k + 1 < num:
            at += g
            nxt_flat.take(at, out=row_k, mode="clip")
    end = t - (d - num)  # the position after each game's last draw
    if late.any():
        return _deal_chunk_by_numpy(opts, seeds)

    gems = np.tile(_GEM_CARDS[:, None], (1, g))
    at = 0
    _shuffle(gems, swaps[at:at + NUM_GEMS - 1])
    at += NUM_GEMS - 1
    auction = np.tile(_AUCTION_CARDS[:, None], (1, g))
    _shuffle(auction, swaps[at:at + _NUM_AUCTION_CARDS - 1])
    at += _NUM_AUCTION_CARDS - 1
    perm = np.tile(np.arange(NUM_MISSIONS, dtype=np.uint8)[:, None], (1, g))
    _shuffle(perm, swaps[at:at + NUM_MISSIONS - 1])
    at += NUM_MISSIONS - 1
    queue = np.tile(np.arange(n, dtype=np.uint8)[:, None], (1, g))
    if opts.tie_break == "queue":
        _shuffle(queue, swaps[at:at + n - 1])

    # The first auction's tie (rulebook) draws integers(k) from the state after setup: one pick per k.
    picks = np.zeros(g, dtype=np.uint8)
    if opts.tie_break == "rulebook":
        for k_tied in range(2, n + 1):
            value, _ = _lemire(stream, end, k_tied)
            picks |= value << np.uint8(PICK_SHIFT[k_tied])
    return Deals(seeds=seeds, chart=chart, gems=gems.T.copy(), auction=auction.T.copy(),
                 missions=perm[:MISSIONS_IN_PLAY].T.copy(), queue=queue.T.copy(), tie_picks=picks)


def _deal_chunk_by_numpy(opts: Options, seeds: np.ndarray) -> Deals:
    """The same deal, game by game through ``np.random.default_rng`` (the scalar setup's own draws):
    the path for the rare chunk holding a game whose draws go where the vectorized replay does not."""
    from gemenvs.megagem.rules import new_state
    n, rows = opts.num_players, []
    for seed in seeds:
        s = new_state(opts, int(seed))
        hands = [c for hand in s.hands for c in range(5) for _ in range(hand[c])]
        picks = 0
        if opts.tie_break == "rulebook":
            for k in range(2, n + 1):
                rng = np.random.default_rng()
                rng.bit_generator.state = s.rng.bit_generator.state
                picks |= int(rng.integers(k)) << PICK_SHIFT[k]
        rows.append((CHART_NAMES.index(s.chart), hands + s.gem_row + s.gem_deck, [s.auction_card] + s.auction_deck,
                     s.missions, s.tie_queue or list(range(n)), picks))
    cols = list(zip(*rows))
    return Deals(seeds=seeds, chart=np.array(cols[0], np.uint8), gems=np.array(cols[1], np.uint8),
                 auction=np.array(cols[2], np.uint8), missions=np.array(cols[3], np.uint8),
                 queue=np.array(cols[4], np.uint8), tie_picks=np.array(cols[5], np.uint8))


__all__ = ["Deals", "PICK_MASK", "PICK_SHIFT", "deal"]
