"""B MegaGem games held in numpy arrays and stepped in lockstep.

Every game of a :class:`BatchedMegaGem` waits, between steps, on one decision point: the sealed
bids of a round (every seat with a choice bids at once) or the reveal of the round's winner.
:meth:`BatchedMegaGem.step` takes one action per seat of every game, ``(B, n_players)``, and plays
every game's decision point with the forced decisions in it (the scalar core's rule: a seat whose
mask has a single legal action), as ``Game.apply_legal`` does: a seat whose bid limit is 0 bids
0, a winner holding one colour reveals it. Finished games are scored and, by default, dealt afresh.

**Forced rounds.** A round in which every bid is forced (no seat has coins and the card is not a
Loan) is a decision point with no seat to act: ``to_act()`` is all False for that game, its masks
are all zero, and the next step plays the round (the actions given for the game are ignored).
The scalar engine plays such rounds at once, inside the decision that leads to them; here each
takes one step, so that no game's run of them makes every step pay for a pass over a few games
(at B = 1024 some game starts one in almost every step). So game ``b`` is in the state the
scalar engine reaches with the same choices whenever a seat of it is to act or it is over, and
between two of the scalar engine's states while it plays forced rounds
(:meth:`BatchedMegaGem.to_dict` then gives the state the scalar engine is in: the forced rounds
played up to the next choice).

The step, the observations and the masks are vectorized over games and seats; the step runs one
pass through bid, reveal and round end. The only Python loop over games is a cache blocking:
``observations`` moves the slots of 128 games at a time into place. Every seat's mask is a row
of one table (its row number is kept after every step), so masks, random legal actions and the
action check are look-ups; the auction's winner (``tie_break="rulebook"``) is one look-up by
last winner, first-auction draws and tied seats.

Layout: per-seat state is seat-major, ``(n, B)`` (every operation runs along contiguous rows of B
games), per-game state is ``(B,)`` or ``(B, k)``; the fields are views of two blocks (bytes and
words, ``_allocate_state``), so that a subset of games is gathered and written back in two calls.
Gem counts are codes (:mod:`.tables`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from gemenvs.core.engine import MAX_SEED, IllegalActionError, check_int, check_seed, same_data
from gemenvs.core.rewards import check_reward_mode
from gemenvs.megagem import rules
from gemenvs.megagem.batched import tables as T
from gemenvs.megagem.batched.deal import PICK_MASK, PICK_SHIFT, deal
from gemenvs.megagem.data import (
    AUCTION_COPIES, CHART_NAMES, COLOURS, MISSION_VALUE, MISSIONS_IN_PLAY, NUM_AUCTION_CARDS, NUM_AUCTION_KINDS,
    NUM_COLOURS, NUM_GEMS, NUM_MISSIONS,
)
from gemenvs.megagem.game import SCORE_SCALE, MegaGem

BID, REVEAL, OVER = 0, 1, 2
_PHASE_NAMES = (rules.BID, rules.REVEAL, rules.OVER)
_NO_GEM = NUM_COLOURS  # "no gem": an empty row slot, no reveal (POW and the one-hot tables give 0)
_NO_CARD = 6           # "no card" row of the card one-hot tables
_A_LOAN = 2            # an auction card kind that is a Loan
# rows of the engine's uint8 and int8 blocks of per-game state (``_allocate_state``)
_CHART, _SOLD, _TURNED, _ROUND, _PHASE, _TIE_PICKS = range(6)
_DISPLAY = 6
_DECK_LEFT = _DISPLAY + NUM_COLOURS
_MISSIONS = _DECK_LEFT + NUM_AUCTION_KINDS
_U8_ROWS = _MISSIONS + MISSIONS_IN_PLAY
_OWNER, _CARD, _WINNER, _LAST_WINNER = 0, MISSIONS_IN_PLAY, MISSIONS_IN_PLAY + 1, MISSIONS_IN_PLAY + 2
_I8_ROWS = _LAST_WINNER + 1  # (the mission rows end the uint8 rows and the owner rows start the int8 ones: adjacent)
_DEBTS = _U8_ROWS + _I8_ROWS  # (the byte block: the uint8 rows, the int8 rows, then the debts, 3 per seat)
_REVEAL_FORCED_BIT = 0x80
_OBS_BLOCK = 128  # games whose per-seat observation slots are gathered and copied at once
_ROW_SHIFT = 7
_ROW_WIDTH = 1 << _ROW_SHIFT  # entries per row of the flat mask tables (more than any num_actions)

_U64 = np.uint64
_LOSS_WIN = np.array([-1.0, 1.0])  # the "win" reward of a loser and of a top scorer
_GOLDEN = _U64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of ``x + golden ratio`` (uint64 arrays, wrapping)."""
    z = x + _GOLDEN
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def game_seeds(seed: int, slots, episodes) -> np.ndarray:
    """The seed of episode ``episodes`` (0, 1, ...) of game slot ``slots`` in a batch seeded ``seed``.

    ``splitmix64(splitmix64(splitmix64(seed) + slot) + episode) >> 1`` on uint64 with wrap-around,
    where ``splitmix64(x)`` is SplitMix64's output for ``x + 0x9E3779B97F4A7C15``: an integer in
    0..2**63-1, the seed the scalar ``MegaGem(...).new_state(seed)`` takes. Batches seeded
    differently (e.g. one per worker, seeds 0, 1, 2, ...) share no games in practice.
    """
    with np.errstate(over="ignore"):
        base = _splitmix64(np.asarray(seed, dtype=_U64))
        z = _splitmix64(base + np.asarray(slots, dtype=_U64))
        return _splitmix64(z + np.asarray(episodes, dtype=_U64)) >> _U64(1)


@dataclass
class StepResult:
    """What one :meth:`BatchedMegaGem.step` finished: games that ended, with their final results.

    ``done[b]`` is True for a game that ended during the step; ``scores``, ``winners`` and
    ``rewards`` hold that game's final scores (the scalar ``Results.scores``), its winners (every
    top scorer) and the terminal rewards of the engine's ``reward`` mode (the scalar
    ``terminal_rewards``), and are 0 / False for the other games; ``seeds[b]`` is the seed of the
    game that ended. With ``auto_reset`` the game is dealt afresh before ``step`` returns.
    """

    done: np.ndarray      # (B,) bool
    scores: np.ndarray    # (B, n) int32
    winners: np.ndarray   # (B, n) bool
    rewards: np.ndarray   # (B, n) float64
    seeds: np.ndarray     # (B,) uint64


class _Openings:
    """Games as dealt (``rules.new_state``), in the engine's blocks (see ``_allocate_state``): one
    record of bytes per game, holding the seed, the word block, the prefix codes, the byte block
    and the card rows as views (so that the pool hands out openings with one gather)."""

    def __init__(self, record: np.ndarray, n: int, fs: int):
        g, (w, p, b, r) = len(record), _Openings.layout(n, fs)
        self.record = record
        self.seeds = record[:, 0:8].view(_U64)[:, 0]
        self.words = record[:, w:p].view(np.int16).reshape(g, 5, n)
        self.prefix = record[:, p:b].view(np.uint16)
        self.bytes = record[:, b:r]
        self.rows = record[:, r:r + fs + 2 + NUM_AUCTION_CARDS]

    @staticmethod
    def layout(n: int, fs: int) -> tuple[int, int, int, int]:
        """Where the word block, the prefix codes, the byte block and the rows start in a record."""
        w = 8
        p = w + 10 * n
        b = p + 2 * (fs + 1)
        return w, p, b, b + _DEBTS + 3 * n

    @staticmethod
    def record_size(n: int, fs: int) -> int:
        """Bytes per record (a multiple of 8, so that every record's seed is aligned)."""
        return -(-(_Openings.layout(n, fs)[3] + fs + 2 + NUM_AUCTION_CARDS) // 8) * 8

    @classmethod
    def dealt(cls, opts: rules.Options, seeds: np.ndarray) -> "_Openings":
        """The openings of the games of ``seeds`` (:func:`~.deal.deal`)."""
        d = deal(opts, seeds)
        g, n, k = len(seeds), opts.num_players, opts.hand_size
        for_sale = d.gems[:, n * k:]
        fs = for_sale.shape[1]
        o = cls(np.zeros((g, cls.record_size(n, fs)), np.uint8), n, fs)
        o.seeds[:] = d.seeds
        np.cumsum(T.POW[for_sale], axis=1, dtype=np.uint16, out=o.prefix[:, 1:])
        u8, i8 = o.bytes[:, :_U8_ROWS], o.bytes[:, _U8_ROWS:_DEBTS].view(np.int8)
        u8[:, _CHART] = d.chart
        u8[:, _TURNED] = min(2, fs)
        u8[:, _ROUND] = 1
        u8[:, _TIE_PICKS] = d.tie_picks
        first = d.auction[:, 0]
        u8[:, _DECK_LEFT:_DECK_LEFT + NUM_AUCTION_KINDS] = np.array(AUCTION_COPIES, np.uint8) - (
            first[:, None] == np.arange(NUM_AUCTION_KINDS))
        u8[:, _MISSIONS:_MISSIONS + MISSIONS_IN_PLAY] = d.missions
        i8[:] = -1
        i8[:, _CARD] = first
        seat16, codes = o.words[:, :3], o.words[:, 3:].view(np.uint16)  # coins, tie places, last bids; hands, Collections
        seat16[:, 0] = opts.start_coins
        np.put_along_axis(seat16[:, 1], d.queue.astype(np.int64), np.arange(n, dtype=np.int16)[None, :], axis=1)
        codes[:, 0] = T.POW[d.gems[:, :n * k].reshape(g, n, k)].sum(axis=2, dtype=np.uint16)
        o.rows[:] = np.concatenate([for_sale, np.full((g, 2), _NO_GEM, np.uint8), d.auction], axis=1)
        return o


class _DealPool:
    """Openings dealt in advance, ``depth`` future episodes per slot, so that resets stay cheap.

    Dealing costs a fixed number of numpy calls however many games it deals, so the pool deals
    the next episodes of every slot at once and hands them out as games end.
    """

    def __init__(self, opts: rules.Options, seed: int, num_games: int, depth: int, for_sale: int):
        self.opts, self.seed, self.depth, self.for_sale = opts, seed, depth, for_sale
        self.held_to = np.zeros(num_games, dtype=np.int64)  # one past the last episode held, per slot
        self.store = np.zeros((num_games * depth, _Openings.record_size(opts.num_players, for_sale)), np.uint8)

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return self.store.nbytes

    def take(self, slots: np.ndarray, episodes: np.ndarray, playing: np.ndarray) -> _Openings:
        """The openings of (slot, episode) pairs, about to be played; ``playing`` (B,) is the episode
        every slot plays once they are dealt."""
        if np.logical_or.reduce(episodes >= self.held_to.take(slots)):
            next_needed = playing.astype(np.int64) + 1  # each slot's next unplayed episode
            next_needed[slots] -= 1
            self._refill(next_needed)
        at = slots * self.depth + episodes % self.depth
        return _Openings(self.store.take(at, axis=0), self.opts.num_players, self.for_sale)

    def _refill(self, next_needed: np.ndarray) -> None:
        """Hold episodes next_needed .. next_needed + depth - 1 of every slot."""
        start = np.maximum(self.held_to, next_needed)
        stop = next_needed + self.depth
        count = np.maximum(stop - start, 0)
        slots = np.repeat(np.arange(len(start)), count)
        episodes = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + np.repeat(start, count)
        dealt = _Openings.dealt(self.opts, game_seeds(self.seed, slots, episodes))
        at = slots * self.depth + episodes % self.depth
        self.store[at] = dealt.record
        self.held_to = np.maximum(self.held_to, stop)


class BatchedMegaGem:
    """``num_games`` MegaGem games with the same options, stepped together (see the module docstring).

    ``options`` are the scalar :class:`~gemenvs.megagem.game.MegaGem` options (``num_players``,
    ``value_chart``, ``tie_break``, ``reveal_after``, ``two_pairs``, ``public_bids``), validated
    by it; ``reward`` is the terminal reward mode of the environments (``"win"``, ``"score"``,
    ``"rank"``, ``"margin"``). ``seed``: see :meth:`reset`. ``auto_reset``: deal a finished game
    afresh within the step that ends it (else it stays over until :meth:`reset_finished`).
    ``record``: keep each game's bids and reveals, which :meth:`to_dict` needs (at most 8 bytes a
    round). ``check``: reject illegal actions (a ValueError naming the game, seat and action);
    unchecked illegal actions corrupt the games.
    """

    def __init__(self, num_games: int, *, seed: int | None = None, reward: str = "win", auto_reset: bool = True,
                 record: bool = False, check: bool = True, **options):
        self.game = MegaGem(**options)
        self.opts = self.game.opts
        self.num_games = B = check_int("num_games", num_games, 1, 1 << 24)
        self.num_players = n = self.opts.num_players
        self.reward = check_reward_mode(reward)
        self.auto_reset, self.record, self.check = bool(auto_reset), bool(record), bool(check)
        self.num_actions = self.game.num_actions
        self.obs_dim = self.game.spec.size
        self._reveal_start = self.game.action_spec["reveal"].start
        self._for_sale = NUM_GEMS - n * self.opts.hand_size
        self._treasure_only = self.opts.reveal_after == "treasure_only"
        self._queue = self.opts.tie_break == "queue"
        self._met = T.missions_met(self.opts.two_pairs)
        self._ar = np.arange(B)
        self._seat_at = self._ar * n  # + seat: its entry in a (B, n) array
        self._mission_value = np.array(MISSION_VALUE, dtype=np.int32)
        self._owner_one_hot = np.eye(n + 1, n, dtype=np.int32)  # by mission owner (-1: the last row, zeros)
        self._counts_t = np.ascontiguousarray(T.COUNTS.T)        # (5, codes)
        self._forced_bits = (np.uint8(1) << np.arange(n, dtype=np.uint8))[:, None]
        self._row_slots = np.arange(2, dtype=np.uint8)[:, None]
        self._kinds8 = np.arange(NUM_AUCTION_KINDS, dtype=np.uint8)[:, None]
        self._colours8 = np.arange(NUM_COLOURS, dtype=np.uint8)[:, None]
        self._seat8 = np.arange(n, dtype=np.int8)[:, None]
        self._seat_bits = (np.uint8(1) << np.arange(n, dtype=np.uint8))[:, None]
        # seat q's place in the tie order after seat w won: (q - w - 1) % n, (n, w)
        # (and, in column n, that is -1 by wrap-around, the first auction's order 0..n-1)
        self._place_after = np.concatenate([(np.arange(n)[:, None] - np.arange(n)[None, :] - 1) % n,
                                            np.arange(n)[:, None]], axis=1).astype(np.int16)
        self._win = _winner_table(n)
        self._allocate_state()
        self._allocate_outputs()
        self._pool: _DealPool | None = None
        self.reset(seed)

    # ------------------------------------------------------------------ state

    def _allocate_state(self) -> None:
        """The game state: a few blocks, each field a row (or rows) of one of them, so that a field
        is a contiguous array of games and dealing a game writes one column of each block."""
        B, n, fs = self.num_games, self.num_players, self._for_sale
        z = np.zeros
        self.seeds = z(B, _U64)                  # seed of each game (scalar new_state(seed))
        self.episodes = z(B, np.uint32)          # games finished in each slot before this one
        # the byte block: uint8 fields, int8 fields, debts; the word block: int16 fields, codes
        self._bytes = z((_DEBTS + 3 * n, B), np.uint8)
        self._u8 = self._bytes[:_U8_ROWS]
        self.chart = self._u8[_CHART]            # index into CHART_NAMES
        self.sold = self._u8[_SOLD]              # gems sold
        self.turned = self._u8[_TURNED]          # gems turned face up: the row is gems[sold:turned]
        self.round = self._u8[_ROUND]            # auctions started
        self.phase = self._u8[_PHASE]            # BID, REVEAL, OVER
        self.tie_picks = self._u8[_TIE_PICKS]    # first-auction tie draws (deal.py), tie_break="rulebook"
        self.display = self._u8[_DISPLAY:_DISPLAY + NUM_COLOURS]
        self.deck_left = self._u8[_DECK_LEFT:_DECK_LEFT + NUM_AUCTION_KINDS]  # auction cards of each kind face down
        self.missions = self._u8[_MISSIONS:_MISSIONS + MISSIONS_IN_PLAY]
        self._i8 = self._bytes[_U8_ROWS:_DEBTS].view(np.int8)
        self._i8[:] = -1
        self.card = self._i8[_CARD]              # card being auctioned, -1 when over
        self.winner = self._i8[_WINNER]          # the winner who must reveal, else -1
        self.last_winner = self._i8[_LAST_WINNER]
        self.mission_owner = self._i8[_OWNER:_OWNER + MISSIONS_IN_PLAY]
        self._words = z((5, n, B), np.int16)
        self._seat16 = self._words[:3]           # per seat: coins, place in this auction's tie order, last bid
        self.coins, self.tie_place, self.last_bids = self._seat16
        self._codes = self._words[3:].view(np.uint16)  # per seat: hand, Collection (codes, tables.py)
        self.hands, self.collections = self._codes
        self.debts = self._bytes[_DEBTS:].reshape(3, n, B)  # per seat: [loans owed, investment amounts, locked bids]
        self._row_len = fs + 2 + NUM_AUCTION_CARDS
        self._rows = z((B, self._row_len), np.uint8)
        self.gems = self._rows[:, :fs + 2]       # colours of the gems for sale in order, then 2 x "no gem"
        self.auction = self._rows[:, fs + 2:]    # auction card kinds in deck order
        self.prefix = z((B, fs + 1), np.uint16)  # code of the first j gems for sale (what a purchase adds)
        self._rows_flat, self._prefix_flat = self._rows.reshape(-1), self.prefix.reshape(-1)
        self._gems_base = np.arange(B, dtype=np.int64) * self._row_len
        self._auction_base = self._gems_base + (fs + 2 - 1)  # + round: the card of that round
        self._prefix_base = np.arange(B, dtype=np.int64) * (fs + 1)
        if self.record:
            self.rec_bids = z((B, NUM_AUCTION_CARDS, n), np.uint8)
            self.rec_winner = z((B, NUM_AUCTION_CARDS), np.int8)
            self.rec_reveal = z((B, NUM_AUCTION_CARDS), np.int8)
            self.rec_forced = z((B, NUM_AUCTION_CARDS), np.uint8)  # forced-bid seat bits, 0x80 forced reveal

    _POOL_GAMES = 32768  # openings dealt in advance: this many games, 2 to 64 per slot

    _STATE_FIELDS = ("seeds", "episodes", "_bytes", "_words", "_rows", "prefix")
    _RECORD_FIELDS = ("rec_bids", "rec_winner", "rec_reveal", "rec_forced")

    @property
    def state_bytes(self) -> int:
        """Bytes of game state per game (the arrays the rules read and write; no record, no buffers)."""
        return sum(getattr(self, f).nbytes for f in self._STATE_FIELDS) // self.num_games

    @property
    def record_bytes(self) -> int:
        """Bytes per game of the bid and reveal record kept with ``record=True`` (0 without)."""
        return sum(getattr(self, f).nbytes for f in self._RECORD_FIELDS) // self.num_games if self.record else 0

    @property
    def buffer_bytes(self) -> dict[str, int]:
        """Bytes per game of the observation and mask buffers, their scratch space, and the openings
        dealt in advance."""
        B = self.num_games
        scratch = sum(x.nbytes for x in (self._source_t, self._seat_rows, self._one_hots_seen, self._one_hot_at,
                                         self._one_hot_row))
        return {"observations": self._obs.nbytes // B, "masks": self._mask.nbytes // B,
                "observation_scratch": scratch // B, "deal_pool": self._pool.nbytes // B}

    def _allocate_outputs(self) -> None:
        B, n, D, A = self.num_games, self.num_players, self.obs_dim, self.num_actions
        m = MISSIONS_IN_PLAY
        self._obs = np.zeros((B, n, D), np.float32)
        self._obs_view = self._obs.view()
        self._obs_view.flags.writeable = False
        self._mask = np.zeros((B, n, A), np.bool_)
        self._mask_view = self._mask.view(np.int8)
        self._mask_view.flags.writeable = False
        # Every seat's mask is one row of ``_mask_table``, its row number in ``_choice`` (``_refresh``):
        # 0 no choice, bid limit + 1 for a bidder, ``_reveal_row`` + the colours held (bits) for the
        # winner that chooses a reveal. ``_nth[r, k]`` is the k-th legal action of row r,
        # ``_count[r]`` their number: a uniform random legal action and the action check are look-ups.
        rs = self._reveal_start
        bid_rows = np.arange(A)[None, :] <= np.arange(-1, self.opts.max_bid + 1)[:, None]
        held = (np.arange(1 << NUM_COLOURS)[:, None] >> np.arange(NUM_COLOURS)) & 1
        reveal_rows = np.zeros((1 << NUM_COLOURS, A), np.bool_)
        reveal_rows[:, rs:rs + NUM_COLOURS] = held
        self._reveal_row = len(bid_rows)
        self._mask_table = np.concatenate([bid_rows, reveal_rows])
        # (the flat tables have rows of _ROW_WIDTH entries, zero beyond the actions: action & 127
        # indexes a row, and equals the action only for actions in 0..127)
        wide = np.zeros((len(self._mask_table), _ROW_WIDTH), np.bool_)
        wide[:, :A] = self._mask_table
        self._mask_table_flat = wide.reshape(-1)
        self._count = self._mask_table.sum(axis=1).astype(np.float64)
        nth = np.full(wide.shape, -1, np.int64)
        for r, row in enumerate(self._mask_table):
            legal = np.flatnonzero(row)
            nth[r, :legal.size] = legal
        self._nth_flat = nth.reshape(-1)
        held_bits = (T.COUNTS > 0).astype(np.int16) @ (np.int16(1) << np.arange(NUM_COLOURS, dtype=np.int16))
        self._reveal_rows = held_bits + np.int16(self._reveal_row)  # a revealing winner's row, by hand code
        o = {s.name: s.offset for s in self.game.spec.slices}
        self._off = o
        assert o["hand_size"] == o["bid_limit"] + 1 and o["mission"] == o["hand_size"] + 10 * n
        # Every dynamic slot of every seat is read from one column of values per game in
        # ``_source_t`` (L, P): each feature is a row of games, written by one table look-up per
        # feature (a count over a fixed scale: one float32 division, tables.py). The public head
        # (phase, value_chart .. display) is the same for every seat; the rest is seat-relative:
        # seat p's slot for relative player k reads player (p + k) % n. Rows hold P floats, B
        # rounded up to whole blocks of games (_OBS_BLOCK), plus 8 unused, so that consecutive
        # rows are not a multiple of 4 KiB apart: reading a column across rows would otherwise
        # thrash the cache.
        layout: dict[str, int] = {}
        size = 0

        def put(name: str, count: int) -> None:
            nonlocal size
            layout[name] = size
            size += count
        put("phase", 2)
        put("value_chart", 5)
        put("rule_options", 4)
        put("head", o["own_hand"] - o["gem_value"])
        assert o["own_hand"] == size  # the public slots: the same for every seat
        put("gems", NUM_COLOURS * 2 * n)  # [colour, hand / Collection, player]: one look-up of the codes
        put("bid_limit", n)
        put("players", 5 * n)             # [feature (hand_size, coins, loans, investment, locked), player]
        put("last", 3 * n)                # [feature (last_bids, last_winner, tie_rank), player]
        put("tie_random", 1)
        self._layout = layout
        assert layout["tie_random"] == layout["last"] + 3 * n  # (one look-up writes last_winner .. tie_random)
        self._block = C = min(B, _OBS_BLOCK)
        self._padded = -(-B // C) * C + 8
        self._source_t = np.zeros((size, self._padded), np.float32)
        rel = (np.arange(n)[:, None] + np.arange(n)[None, :]) % n  # rel[p, k]
        L, colour = layout, np.arange(NUM_COLOURS)
        seat_part = [np.broadcast_to(np.arange(o["own_hand"]), (n, o["own_hand"])),                    # the public head
                     L["gems"] + colour[None, :] * 2 * n + np.arange(n)[:, None],                      # own hand
                     L["bid_limit"] + np.arange(n)[:, None]]
        seat_part += [L["players"] + f * n + rel for f in (0, 1)]                                      # hand_size, coins
        seat_part += [(L["gems"] + n + colour[None, None, :] * 2 * n + rel[:, :, None]).reshape(n, -1)]  # [k, colour]
        seat_part += [L["players"] + f * n + rel for f in (2, 3, 4)]                                   # loans .. locked
        tail = [L["last"] + f * n + rel for f in (0, 1, 2)] + [np.full((n, 1), L["tie_random"])]
        self._seat_width = sum(x.shape[1] for x in seat_part)  # slots 0 .. mission, then last_bids ..
        self._seat_index = np.concatenate(seat_part + tail, axis=1)  # (n, per-seat slots): source rows
        assert self._seat_width == o["mission"]
        assert self._seat_index.shape[1] - self._seat_width == D - o["last_bids"]
        # The mission and mission_owner slots (one-hots, 4 x 30 and 4 x (n + 1) per seat) change only
        # when a game is dealt or a mission claimed: they stay in the buffer, and ``_write_one_hots``
        # moves the one of every (mission, game) whose value differs from the one written
        # (``_one_hots_seen``). The values are the byte rows of the missions then of their owners
        # (adjacent, ``_one_hot_values``: (2 * 4, B) uint8, an open mission's owner -1 read as 255);
        # seat p's slot of value v in row r is ``_one_hot_slot[_one_hot_row[r * B + b] + v, p]``: v
        # for a mission (row offset 0), and for an owner (offset 256) 0 open, else 1 + (owner - p) % n.
        # The buffer starts as mission 0 everywhere and every mission open.
        assert o["mission_owner"] - o["mission"] == m * NUM_MISSIONS
        assert o["last_bids"] - o["mission_owner"] == m * (n + 1)
        assert _U8_ROWS == _MISSIONS + m and _OWNER == 0
        self._one_hot_values = self._bytes[_MISSIONS:_MISSIONS + 2 * m]
        self._one_hots_seen = np.zeros((2 * m, B), np.uint8)
        self._one_hots_seen[m:] = 255
        owner_slot = np.zeros((256, n), np.intp)  # by owner as uint8 (255: open)
        owner_slot[:n] = 1 + rel.argsort(axis=1).T
        self._one_hot_slot = np.concatenate([np.repeat(np.arange(256, dtype=np.intp)[:, None], n, axis=1), owner_slot])
        game_at = np.arange(B, dtype=np.int64) * (n * D)  # (row, game b) -> flat index of its slots, seat 0
        first_slot = np.concatenate([o["mission"] + np.arange(m) * NUM_MISSIONS, o["mission_owner"] + np.arange(m) * (n + 1)])
        self._one_hot_at = (game_at[None, :] + first_slot[:, None]).reshape(-1)
        self._one_hot_row = np.repeat(np.array([0, 256], np.intp), m * B)
        self._seat_at_obs = np.arange(n, dtype=np.int64) * D
        for i in range(m):
            self._obs[:, :, o["mission"] + i * NUM_MISSIONS] = 1.0
            self._obs[:, :, o["mission_owner"] + i * (n + 1)] = 1.0
        # a block of games' per-seat rows (seat-major)
        self._seat_rows = np.zeros((n, self._seat_index.shape[1], C + 8), np.float32)
        # tables with the value axis first, so that look-ups write whole rows of games
        assert np.array_equal(T.HAND_OBS, T.COLLECTION_OBS)  # (one table for both: half the cache it takes)
        self._gem_obs_t = np.ascontiguousarray(T.HAND_OBS.T)
        self._phase_obs_t = np.ascontiguousarray(T.PHASE_OBS.T)
        self._chart_obs_t = np.eye(5, dtype=np.float32)
        opts = self.opts  # rule_options: [two_pairs="distinct", reveal_after="treasure_only", public_bids, queue]
        self._source_t[L["rule_options"]:L["rule_options"] + 4] = np.array(
            [opts.two_pairs == "distinct", opts.reveal_after == "treasure_only", opts.public_bids,
             opts.tie_break == "queue"], dtype=np.float32)[:, None]
        self._card_obs_t = np.ascontiguousarray(T.CARD_ONE_HOT.T)
        self._colour_obs_t = np.ascontiguousarray(T.COLOUR_ONE_HOT.T)
        # mission owner slots by owner + 1: [open, claimed by 0, ..., claimed by n-1]
        self._owner_obs = np.eye(n + 1, dtype=np.float32)
        self._tie_rank_obs = T.tie_rank_obs(n)
        # tie_break="rulebook": the slots last_winner (one-hot), tie_rank and tie_random of every
        # player depend on the last winner only; by last winner (column n, -1: none yet)
        last = np.zeros((2 * n + 1, n + 1), np.float32)
        last[:n, :n] = np.eye(n, dtype=np.float32)
        last[n:2 * n, :n] = self._tie_rank_obs[self._place_after[:, :n]]
        last[2 * n, n] = 1.0  # before the first auction's winner is known, ties are drawn at random
        self._last_winner_obs = last
        self._gem_deck_obs = T.GEM_DECK_OBS[self._for_sale - np.arange(self._for_sale + 1)]  # by gems turned

    def reset(self, seed: int | None = None) -> None:
        """Deal every game afresh: slot b plays ``game_seeds(seed, b, 0)``, its next games episodes 1, 2, ...

        ``seed=None`` draws a base seed from the operating system (recorded in ``self.seed``).
        """
        seed = check_seed(seed)
        if seed is None:
            seed = int(np.random.default_rng().integers(0, MAX_SEED))
        self.seed = seed
        B = self.num_games
        depth = int(np.clip(-(-self._POOL_GAMES // B), 2, 64))
        self._pool = _DealPool(self.opts, seed, B, depth, self._for_sale)
        self.episodes[:] = 0
        slots = np.arange(B)
        self._deal_into(slots, self._pool.take(slots, np.zeros(B, np.int64), self.episodes))
        self._refresh()

    def reset_finished(self) -> np.ndarray:
        """Deal the next episode into every game that is over (``auto_reset=False``); return their indices."""
        idx = (self.phase == OVER).nonzero()[0]
        if idx.size:
            self._next_episode(idx)
            self._refresh()
        return idx

    def _next_episode(self, idx: np.ndarray) -> None:
        episodes = self.episodes.take(idx) + np.uint32(1)
        self.episodes[idx] = episodes
        self._deal_into(idx, self._pool.take(idx, episodes.astype(np.int64), self.episodes))

    def _deal_into(self, idx: np.ndarray, d: _Openings) -> None:
        """Set games ``idx`` to their openings ``d``: the state of ``rules.new_state`` (round 1 started)."""
        self.seeds[idx] = d.seeds
        self._bytes[:, idx] = d.bytes.T
        self._words[:, :, idx] = d.words.transpose(1, 2, 0)
        self._rows[idx] = d.rows
        self.prefix[idx] = d.prefix
        if self.record:
            self.rec_reveal[idx] = -1

    def _refresh(self) -> None:
        """Recompute what the masks, observations and the next step read (after any change)."""
        self._card = self.card.astype(np.intp)
        self._card_props = T.CARD_PROPS.take(self._card, axis=1)  # (4, B): loan, investment, gems, is Invest
        self._limit = self.coins + self._card_props[0]  # bid limit: coins (+ the loan)
        self._bidding = self.phase == BID
        self._revealing = self.phase == REVEAL
        self._bidders = self._bidding & (self._limit > 0)  # (n, B): a limit of 0 was bid for (forced)
        choice = (self._limit + np.int16(1)) * self._bidders  # each seat's mask row (see _allocate_outputs)
        self._winner_revealing = None
        if np.logical_or.reduce(self._revealing, axis=None):
            self._winner_revealing = rw = (self._seat8 == self.winner) & self._revealing
            choice += rw * self._reveal_rows.take(self.hands)
        self._choice = choice.astype(np.intp)
        self._choice_at = self._choice << _ROW_SHIFT  # (its first entry in the flat tables)
        self._choosers = choice > 0

    # ------------------------------------------------------------------ queries

    def to_act(self) -> np.ndarray:
        """(B, n) bool: the seats with a choice now (a forced decision is played by the step; a game at
        a round whose every bid is forced has none)."""
        return self._choosers.T.copy()

    def num_to_act(self) -> int:
        """How many seats of all games have a choice now (``to_act().sum()``)."""
        return int(np.count_nonzero(self._choosers))

    def action_masks(self) -> np.ndarray:
        """(B, n, num_actions) int8 legal-action masks, equal to the scalar ``legal_mask(state, p)``.

        A read-only view of the engine's buffer, rewritten by the next call: copy it to keep it.
        """
        self._mask_table.take(self._choice.T, axis=0, out=self._mask, mode="clip")
        return self._mask_view

    def observations(self) -> np.ndarray:
        """(B, n, obs_dim) float32 observations, byte-identical to the scalar ``observe(state, p)``.

        A read-only view of the engine's buffer, rewritten by the next call: copy it to keep it.
        """
        obs, o, L, n, B = self._obs, self._off, self._layout, self.num_players, self.num_games
        s = self._source_t[:, :B]
        self._phase_obs_t.take(self.phase, axis=1, out=s[0:2], mode="clip")
        self._chart_obs_t.take(self.chart, axis=1, out=s[L["value_chart"]:L["value_chart"] + 5], mode="clip")
        h = L["head"]  # gem_value, round, auction_card, auction_deck_left, gem_row, gem_deck_left, display
        T.GEM_VALUE_OBS.take(self.display + self.chart * np.uint8(7), out=s[h:h + 5], mode="clip")
        T.ROUND_OBS.take(self.round, out=s[h + 5], mode="clip")
        self._card_obs_t.take(self.card, axis=1, out=s[h + 6:h + 12], mode="wrap")
        np.divide(self.deck_left, T.DECK_KIND_DIV, out=s[h + 12:h + 18])
        at = self.sold + self._row_slots  # (2, B): the two gem-row slots
        row = self._rows_flat.take(self._gems_base + at)  # (a slot not turned: 8 or more, an all-zero one-hot)
        row |= np.greater_equal(at, self.turned).view(np.uint8) << np.uint8(3)
        self._colour_obs_t.take(row, axis=1, out=s[h + 18:h + 28].reshape(2, 5, B).transpose(1, 0, 2), mode="clip")
        self._gem_deck_obs.take(self.turned, out=s[h + 28], mode="clip")
        np.divide(self.display, T.DISPLAY_DIV, out=s[h + 29:h + 34])
        at = L["gems"]  # the hands and the Collections (adjacent code rows)
        self._gem_obs_t.take(self._codes, axis=1, out=s[at:at + 10 * n].reshape(5, 2, n, B), mode="clip")
        at = L["bid_limit"]
        np.divide(self._limit * self._bidding, T.COIN_DIV, out=s[at:at + n])
        at = L["players"]
        T.HAND_SIZE_OBS.take(self.hands, out=s[at:at + n], mode="clip")
        np.divide(self.coins, T.COIN_DIV, out=s[at + n:at + 2 * n])
        debts = self.debts
        np.divide(debts, T.DEBT_DIVS, out=s[at + 2 * n:at + 5 * n].reshape(3, n, B))
        at = L["last"]
        if self.opts.public_bids:
            np.divide(self.last_bids, T.COIN_DIV, out=s[at:at + n])
        if self._queue:
            self._owner_obs[1:].take(self.last_winner + np.int8(1), axis=1, out=s[at + n:at + 2 * n], mode="clip")
            self._tie_rank_obs.take(self.tie_place, out=s[at + 2 * n:at + 3 * n], mode="clip")
        else:  # last_winner, tie_rank, tie_random (adjacent rows) by the last winner
            self._last_winner_obs.take(self.last_winner, axis=1, out=s[at + n:at + 3 * n + 1], mode="wrap")
        # every seat's slots (the public head and the seat-relative ones) gathered whole (seat-major)
        # and transposed into place, a block of games at a time (so that the rows gathered stay in
        # cache while they are copied)
        w, C = self._seat_width, self._block
        for c0 in range(0, B, C):
            c1 = min(B, c0 + C)
            rows = self._source_t[:, c0:c0 + C + 8].take(self._seat_index, axis=0, out=self._seat_rows, mode="clip")
            rows = rows[:, :, :c1 - c0].transpose(2, 0, 1)  # (games, n, per-seat slots)
            obs[c0:c1, :, 0:w] = rows[:, :, :w]
            obs[c0:c1, :, o["last_bids"]:] = rows[:, :, w:]
        self._write_one_hots()
        return self._obs_view

    def _write_one_hots(self) -> None:
        """Move the one-hot of every mission and mission owner (row, game) whose value differs from
        the one written (``_one_hots_seen``) in every seat's slots: the slot of the value written
        to 0, that of the value now to 1 (see ``_allocate_outputs``)."""
        now, seen = self._one_hot_values.reshape(-1), self._one_hots_seen.reshape(-1)
        k = (now != seen).nonzero()[0]
        if not k.size:
            return
        new, old, row = now.take(k), seen.take(k), self._one_hot_row.take(k)
        first = self._one_hot_at.take(k)[:, None] + self._seat_at_obs  # (K, n)
        flat, slot = self._obs.reshape(-1), self._one_hot_slot
        flat.put(first + slot.take(old + row, axis=0), 0.0)
        flat.put(first + slot.take(new + row, axis=0), 1.0)
        seen.put(k, new)

    def random_actions(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """(B, n) int64 actions drawn uniformly among each seat's legal actions (-1 for seats not to act).

        ``rng``: a numpy ``Generator`` (drawn from), else a seed for a new one (``None``: fresh
        entropy), as ``np.random.default_rng`` takes it. The k-th legal action of the seat's mask
        row, k drawn uniformly; a (n, B) array transposed.
        """
        if not isinstance(rng, np.random.Generator):
            try:
                seed = check_seed(rng, "rng")
            except ValueError:
                raise ValueError(f"rng must be a numpy Generator, an integer seed or None; got {rng!r}") from None
            rng = np.random.default_rng(seed)
        u = rng.random((self.num_players, self.num_games))
        u *= self._count.take(self._choice)
        actions = self._nth_flat.take(self._choice_at + u.astype(np.intp))
        return actions.T

    # ------------------------------------------------------------------ the step

    def step(self, actions) -> StepResult:
        """Play one decision point in every game (see the module docstring) and return what ended.

        ``actions``: (B, n) integers, one per seat of every game; entries of seats that are not
        to act (``to_act()`` False: forced, waiting, or a game that is over) are ignored, by
        convention -1. An illegal action of a seat to act raises
        :class:`~gemenvs.core.engine.IllegalActionError` (a ValueError) naming the game, the seat
        and the action, before any game changes.
        """
        a = np.asarray(actions)
        B, n = self.num_games, self.num_players
        if a.shape != (B, n):
            raise ValueError(f"actions must have shape (num_games, num_players) = ({B}, {n}); got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers; got dtype {a.dtype}")
        play = a
        if a.dtype.kind == "u" and a.dtype.itemsize >= 8:  # uint64 and the int64 tables mix as float64: as int64
            play = np.minimum(a, np.iinfo(np.int64).max).astype(np.int64)  # (past int64: out of range, named as given)
        at = play.T
        if self.check:
            self._check(a, at)
        if self._winner_revealing is not None:  # the revealing winner's action: reveal_start + colour
            colour = play.reshape(-1).take(self._seat_at + self.winner, mode="clip").astype(np.uint8)
        else:
            colour = None
        result = self._end_games(self._play(at, colour))
        if self.auto_reset and np.logical_or.reduce(result.done):
            self._next_episode(result.done.nonzero()[0])
        self._refresh()
        return result

    def _check(self, a: np.ndarray, at: np.ndarray) -> None:
        """Raise IllegalActionError for the first illegal action of a seat to act (game, then seat order)."""
        limit = self._limit
        low = at & (_ROW_WIDTH - 1)
        legal = self._mask_table_flat.take(self._choice_at + low)  # (the mask entry of the action)
        legal &= low == at
        if not np.logical_or.reduce(legal < self._choosers, axis=None):
            return
        bad = self._choosers & ~legal
        b, p = (int(x) for x in np.argwhere(bad.T)[0])
        action = int(a[b, p])
        A = self.num_actions
        name = self.game.action_name(action) if 0 <= action < A else "not an action"
        if not 0 <= action < A:
            reason = f"out of range 0..{A - 1}"
        elif self._bidding[b]:
            if action >= self._reveal_start:
                reason = "this is a bidding decision; reveal actions are not allowed"
            else:
                lim = int(limit[p, b])
                reason = f"bid {action} exceeds the limit of {lim} (coins{' + loan' if lim > self.coins[p, b] else ''})"
        elif action < self._reveal_start:
            reason = "the winner must reveal a gem from its hand, not bid"
        else:
            reason = f"no {COLOURS[action - self._reveal_start]} gem in hand"
        raise IllegalActionError(f"game {b}: illegal action {action} ({name}) by seat {p}: {reason}")

    def _play(self, at: np.ndarray, colour: np.ndarray) -> np.ndarray:
        """Every game's decision point, all games at once: the auctions of the bidding games (bids
        from ``at``, (n, B); a seat not bidding bids 0), the reveals (``colour``, or forced), then
        the end of the rounds. Returns the games that ended.

        (Masked updates are ``np.copyto(x, new, where=mask)`` or arithmetic with boolean arrays.)
        """
        fs, n = self._for_sale, self.num_players
        g = self._bidding
        bids = at.astype(np.int16) * self._bidders  # a seat with a bid limit of 0 bids 0 (forced)
        # Step 2: the highest bid wins; among tied bidders, the earliest place in the tie order.
        top = np.maximum.reduce(bids, axis=0)
        if self._queue:  # (bid * 8 - place is distinct for every seat: exactly one seat has the largest)
            key = bids * np.int16(8) - self.tie_place
            w = np.add.reduce(self._seat8 * (key == np.maximum.reduce(key, axis=0)), axis=0, dtype=np.int8)
        else:  # the tie order starts left of the last winner (docs/megagem.md "Ties"); in the first auction a
            # tied bidder is drawn (the draws were made at the deal): ``_win`` by last winner, draws, ties
            at = self.last_winner.astype(np.intp)
            at <<= 8
            at += self.tie_picks
            at <<= n
            at += np.add.reduce((bids == top) * self._seat_bits, axis=0, dtype=np.intp)
            w = self._win.take(at)
        w -= self.winner  # (revealing games keep theirs: w = winner + (w - winner) * g, cheaper than np.where)
        w *= g
        w += self.winner
        is_w = self._seat8 == w
        won = is_w & g
        # Treasure: the gems at the front of the row (a 2-gem card with one gem left buys it)
        sold = self.sold
        props = self._card_props
        k = np.minimum(props[2], fs - sold)
        k *= g
        at = self._prefix_base + sold
        self.collections += won * (self._prefix_flat.take(at + k) - self._prefix_flat.take(at))
        sold += k
        # docs/megagem.md "Loans and investments": a Loan pays its amount and the winner pays its bid; an Invest
        # card locks the bid.
        self.coins += won * (props[0] - top)
        debts = props[:3].copy()  # (3, B): loan owed, investment, (locked bid)
        np.multiply(top, props[3], out=debts[2], casting="unsafe")
        self.debts += won * debts[:, None, :]
        if self._queue:  # the winner goes to the back of the queue
            place = self.tie_place
            moved = place - (place > np.add.reduce(place * is_w, axis=0, dtype=np.int16))
            moved += is_w * (np.int16(n - 1) - moved)
            np.copyto(place, moved, where=g)
        self.last_bids *= ~g
        self.last_bids += bids
        self.winner[:] = w
        lw = self.last_winner
        lw += (w - lw) * g
        if not self._queue:  # the tie order starts left of the last winner: seat q's place is (q - w - 1) % n
            self._place_after.take(lw, axis=1, out=self.tie_place, mode="wrap")
        # Step 3: the winner reveals a gem, unless its hand is empty (or, with reveal_after=
        # "treasure_only", the card is not a Treasure); none in the round that sells the last gem:
        # every hand is revealed at the end anyway. A one-colour hand reveals it (forced).
        hand_w = np.einsum("nb,nb->b", self.hands, is_w)  # (einsum: faster than product and sum here)
        live = sold < fs
        live &= g
        if self._treasure_only:
            live &= props[2] > 0
        hand_w *= live
        choice = T.SEVERAL.take(hand_w)  # several colours: the winner chooses (phase REVEAL)
        c = T.SINGLE_OR_NONE.take(hand_w)  # the colour revealed now (5: none)
        if colour is not None:  # (revealing games: c is 5 here, and the winner's action is reveal_start + colour)
            colour -= np.uint8((self._reveal_start + _NO_GEM) % 256)
            colour *= self._revealing
            c += colour
        self.phase |= choice  # (BID = 0 -> REVEAL = 1)
        if self.record:
            idx = g.nonzero()[0]
            r = self.round[idx].astype(np.int64) - 1
            self.rec_bids[idx, r] = bids[:, idx].T
            self.rec_winner[idx, r] = w[idx]
            self.rec_forced[idx, r] = np.add.reduce((self._limit[:, idx] == 0) * self._forced_bits, axis=0, dtype=np.uint8)
            forced = live & (c < _NO_GEM)
            self._record_reveals(self._revealing | forced, c, forced)
        self.hands -= is_w * T.POW.take(c)
        self.display += self._colours8 == c
        finishing = g & ~choice
        finishing |= self._revealing
        return self._finish_rounds(finishing, w, is_w)

    def _record_reveals(self, reveal: np.ndarray, c: np.ndarray, forced: np.ndarray) -> None:
        idx = reveal.nonzero()[0]
        r = self.round[idx].astype(np.int64) - 1
        self.rec_reveal[idx, r] = c[idx]
        self.rec_forced[idx, r] |= forced[idx].astype(np.uint8) * np.uint8(_REVEAL_FORCED_BIT)

    def _finish_rounds(self, g: np.ndarray, w: np.ndarray, is_w: np.ndarray) -> np.ndarray:
        """Steps 4-7 for games ``g`` won by ``w`` (``is_w``: (n, B) the winner's seat): refill the row,
        claim missions, then the next round or the end. Returns the games that ended."""
        fs = self._for_sale
        # docs/megagem.md "Missions": open missions go to the first player clockwise from the winner whose
        # Collection meets them. Only the winner's Collection changed this round, and every other
        # player's was checked after every earlier round, so only the winner can claim.
        bits = self._met.take(np.einsum("nb,nb->b", self.collections, is_w))
        claim = (bits >> self.missions) & np.uint32(1)
        claim &= g
        claim = claim.astype(np.bool_)
        claim &= self.mission_owner < 0
        self.mission_owner += claim * (w - self.mission_owner)  # (-1 -> w)
        self.winner |= -g.view(np.int8)  # (-> -1)
        turned = self.turned  # refill the row
        turned += (np.minimum(self.sold + np.uint8(2), np.uint8(fs)) - turned) * g
        ending = self.sold >= fs  # the last gem is sold: the game ends
        ending &= g
        starting = g & ~ending
        self.round += starting
        card = self._rows_flat.take(self._auction_base + self.round)
        self.card += (card.view(np.int8) - self.card) * starting
        self.deck_left -= (self._kinds8 == card) & starting
        self.phase *= ~starting  # (-> BID = 0)
        return ending

    def _end_games(self, ended: np.ndarray) -> StepResult:
        """Game end for games ``ended``: every hand is revealed into the Display, then the scores
        (docs/megagem.md "End and scoring"); returns the step's :class:`StepResult`."""
        B, n = self.num_games, self.num_players
        result = StepResult(done=ended, scores=np.zeros((B, n), np.int32), winners=np.zeros((B, n), np.bool_),
                            rewards=np.zeros((B, n), np.float64), seeds=np.zeros(B, _U64))
        idx = ended.nonzero()[0]
        if not idx.size:
            return result
        block, words = self._bytes[:, idx], self._words[:, :, idx]
        u8, codes = block[:_U8_ROWS], words[3:].view(np.uint16)
        display = u8[_DISPLAY:_DISPLAY + NUM_COLOURS]
        display += self._counts_t.take(np.add.reduce(codes[0], axis=0, dtype=np.uint16), axis=1)  # (codes add)
        if not self.auto_reset:  # (with auto_reset the game is dealt afresh before anyone sees it over)
            self.display[:, idx] = display
            self.hands[:, idx] = 0
            self.phase[idx] = OVER
            self._i8[_CARD:_WINNER + 1, idx] = -1
        values = T.GEM_VALUE_I32.take(display + u8[_CHART] * np.uint8(T.BASE))           # (5, E)
        scores = np.einsum("nec,ce->ne", T.COUNTS.take(codes[1], axis=0), values)         # (n, E) gems
        scores += words[0]                                                                # coins
        debts = block[_DEBTS:].reshape(3, n, -1)
        scores += np.add.reduce(debts[1:], axis=0, dtype=np.int32)                        # investments, locked bids
        scores -= debts[0]                                                                # loans
        worth = self._mission_value.take(u8[_MISSIONS:_MISSIONS + MISSIONS_IN_PLAY])      # (4, E)
        owners = block[_U8_ROWS + _OWNER:_U8_ROWS + _OWNER + MISSIONS_IN_PLAY].view(np.int8)
        mine = self._owner_one_hot.take(owners, axis=0, mode="wrap")                      # (4, E, n)
        scores = scores.T
        scores += np.einsum("ien,ie->en", mine, worth)                                    # (E, n)
        result.scores[idx] = scores
        winners = scores == np.maximum.reduce(scores, axis=1, keepdims=True)
        result.winners[idx] = winners
        if self.reward == "win":  # (rewards.terminal_rewards: 1 for every top scorer, else -1)
            result.rewards[idx] = _LOSS_WIN.take(winners)
        else:
            result.rewards[idx] = _terminal_rewards(self.reward, scores.astype(np.float64), SCORE_SCALE)
        result.seeds[idx] = self.seeds[idx]
        return result

    # ------------------------------------------------------------------ the scalar view

    def to_dict(self, b: int) -> dict:
        """Game ``b``'s state as the scalar engine's ``state.to_dict()`` (``MegaGem.state_from_dict``
        accepts it). Needs ``record=True``. The RNG state is the one the scalar setup leaves from
        the game's seed, advanced by the first auction's tie draw when there was one. A game at a
        round whose every bid is forced (no seat to act) is between two scalar states: its state is
        the one the scalar engine reaches with the same choices (those rounds played, up to the next
        choice or the end), where the following steps take the game."""
        if not self.record:
            raise ValueError("to_dict needs the bid and reveal record: build the engine with record=True")
        b = check_int("b", b, 0, self.num_games - 1)
        n, phase, fs = self.num_players, int(self.phase[b]), self._for_sale
        resolved = int(self.round[b]) - (1 if phase == BID else 0)
        loans, investments = [[] for _ in range(n)], [[] for _ in range(n)]
        history, log = [], []
        sold, rs = 0, self._reveal_start
        for r in range(resolved):
            card = int(self.auction[b, r])
            bids = [int(x) for x in self.rec_bids[b, r]]
            w = int(self.rec_winner[b, r])
            forced = int(self.rec_forced[b, r])
            amount, bought = int(T.CARD_AMOUNT[card]), []
            if T.CARD_KIND[card] == T.KIND_TREASURE:
                k = min(amount, fs - sold)
                bought = [int(x) for x in self.gems[b, sold:sold + k]]
                sold += k
            elif T.CARD_KIND[card] == T.KIND_LOAN:
                loans[w].append(amount)
            else:
                investments[w].append([amount, bids[w]])
            revealed = int(self.rec_reveal[b, r])
            history.append({"card": card, "bids": bids, "winner": w, "gems": bought, "revealed": revealed})
            # the log: forced bids are played as the round starts, then the chosen ones in seat order
            log += [[p, bids[p], 1] for p in range(n) if forced >> p & 1]
            log += [[p, bids[p], 0] for p in range(n) if not forced >> p & 1]
            if revealed >= 0:
                log.append([w, rs + revealed, int(bool(forced & _REVEAL_FORCED_BIT))])
        limit = self._limit[:, b]
        seed = int(self.seeds[b])
        if phase == BID and not limit.any():  # a forced round (no seat to act): the scalar engine is past it
            return self._played_on(b, seed, log)
        if phase == BID:  # the forced bids of the round being bid are already in
            log += [[p, 0, 1] for p in range(n) if limit[p] == 0]
        rng = rules.new_state(self.opts, seed).rng
        if not self._queue and resolved:
            first = history[0]["bids"]
            tied = first.count(max(first))
            if tied > 1:
                rng.integers(tied)
        s, turned = int(self.sold[b]), int(self.turned[b])
        if [sum(x) for x in loans] != self.debts[0, :, b].tolist():
            raise AssertionError(f"game {b}: the bid record is out of step with the state")
        return {
            "seed": seed, "num_players": n, "chart": CHART_NAMES[int(self.chart[b])],
            "coins": [int(x) for x in self.coins[:, b]],
            "hands": [T.COUNTS[h].tolist() for h in self.hands[:, b]],
            "collections": [T.COUNTS[c].tolist() for c in self.collections[:, b]],
            "loans": loans, "investments": investments,
            "display": [int(x) for x in self.display[:, b]],
            "gem_deck": [int(x) for x in self.gems[b, turned:fs]],
            "gem_row": [int(x) for x in self.gems[b, s:turned]],
            "auction_deck": [int(x) for x in self.auction[b, int(self.round[b]):]],
            "missions": [int(x) for x in self.missions[:, b]],
            "mission_owner": [int(x) for x in self.mission_owner[:, b]],
            "auction_card": int(self.card[b]),
            "phase": _PHASE_NAMES[phase],
            "round": int(self.round[b]),
            "bids": [0 if limit[p] == 0 else None for p in range(n)] if phase == BID else [],
            "winner": int(self.winner[b]),
            "last_winner": int(self.last_winner[b]),
            "tie_queue": [int(p) for p in np.argsort(self.tie_place[:, b], kind="stable")] if self._queue else [],
            "rng": copy.deepcopy(rng.bit_generator.state),
            "history": history,
            "log": log,
        }

    def _played_on(self, b: int, seed: int, log: list) -> dict:
        """The scalar state of game ``b`` waiting on a round whose every bid is forced: its decisions
        so far (``log``) replayed by the scalar engine, which plays the forced rounds on up to the
        next choice (or the end), where the coming steps take this game."""
        s = self.game.new_state(seed)
        for p, a, forced in log:
            if not forced:
                self.game.apply_legal(s, p, a)
        if not same_data(s.log[:len(log)], log):
            raise AssertionError(f"game {b}: the bid record is out of step with the state")
        return s.to_dict()

    def state(self, b: int) -> rules.MegaGemState:
        """Game ``b`` as a scalar :class:`~gemenvs.megagem.rules.MegaGemState` (rebuilt by replaying
        :meth:`to_dict`, which the scalar engine checks field by field)."""
        return self.game.state_from_dict(self.to_dict(b))


def _winner_table(n: int) -> np.ndarray:
    """The winner of an auction (tie_break="rulebook") at ``((last winner * 256 + draws) << n) + tied``
    (negative for last winner -1: ``take`` counts from the end): ``tied`` has bit p set for each
    seat with the top bid. After the first auction the tie order starts left of the last winner;
    in the first auction a tie goes to ``tied[draw]`` (seat order), the draw for that many tied
    bidders packed in the ``draws`` byte (deal.py)."""
    size = 1 << n
    table = np.zeros((n + 1, 256, size), np.int8)  # blocks: last winner 0..n-1, then -1
    for last in range(-1, n):
        order = list(range(n)) if last < 0 else [(last + 1 + i) % n for i in range(n)]
        for tied in range(1, size):
            seats = [p for p in range(n) if tied >> p & 1]
            if last >= 0 or len(seats) == 1:
                table[last, :, tied] = next(p for p in order if tied >> p & 1)
            else:
                k = len(seats)
                draws = (np.arange(256) >> PICK_SHIFT[k]) & PICK_MASK[k]
                table[last, :, tied] = np.array(seats)[np.minimum(draws, k - 1)]
    return table.reshape(-1)


def _terminal_rewards(mode: str, scores: np.ndarray, scale: float) -> np.ndarray:
    """``gemenvs.core.rewards.terminal_rewards`` for rows of scores (E, n), the same float64 arithmetic."""
    n = scores.shape[1]
    if mode == "win":
        return np.where(scores == scores.max(axis=1, keepdims=True), 1.0, -1.0)
    if mode == "score":
        return scores / scale
    if mode == "rank":
        above = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
        tied = (scores[:, None, :] == scores[:, :, None]).sum(axis=2)
        mean_rank = above + (tied - 1) / 2.0
        return 1.0 - 2.0 * mean_rank / (n - 1)
    others = np.where(np.eye(n, dtype=bool)[None], -np.inf, scores[:, None, :]).max(axis=2)
    return (scores - others) / scale


__all__ = ["BatchedMegaGem", "StepResult", "game_seeds"]
