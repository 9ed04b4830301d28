"""GEM observations and action masks for one seat.

GEM has no private information (docs/gem.md "Hidden information"): every seat sees the same facts, except
the face-down stacks, which nobody sees and which are never encoded. Per-player blocks are
seat-relative: entry 0 is the observer, entry k the k-th player to its left. The card tables
(gems, values, costs) are encoded too, so an agent needs nothing but the observation.
"""
from __future__ import annotations

from itertools import compress

import numpy as np

from gemenvs.core.spec import ObservationSpec
from gemenvs.gem.rules import (
    BID, OVER, PASSED, PAY, REINVEST, TAKE, Config, GemState, capital, high_bid, legal_actions, points,
)

PHASE_ORDER = (BID, PAY, TAKE, REINVEST)


def build_spec(cfg: Config) -> ObservationSpec:
    """The named-slice layout of a GEM observation for ``cfg``'s players and manifest."""
    n, C, T, K = cfg.n, cfg.num_cards, cfg.num_types, cfg.num_coins
    m = cfg.manifest
    money = float(m.max_capital)
    top_value = float(max(m.card_value + m.coin_values))
    per_card = float(max(max(row) for row in m.type_counts))
    per_type = float(max(m.gems_of_type))
    types = ", ".join(m.gem_types)
    sp = ObservationSpec()
    sp.add("phase", 4, "one-hot decision: [bid or pass, pay the winning bid, take a face-up card, reinvest]")
    sp.add("actor", n, "one-hot seat-relative player to decide now (0 = the observer)")
    sp.add("round", 1, "stacks turned up so far (this round included)", cfg.num_rounds)
    sp.add("final_round", 1, "1 in the last round, whose cards arrive INVESTED")
    sp.add("stacks_left", 1, "stacks still face down", cfg.num_rounds)
    sp.add("hidden_cards", 1, "gem cards still face down", C)
    sp.add("card_gems", (C, T), f"gems of each type ({types}) on each gem card (static)", per_card)
    sp.add("card_value", C, "INVESTED value of each gem card: what it pays (static)", top_value)
    sp.add("card_cost", C, "reinvestment cost of each gem card under this game's reinvest_cost (static)", top_value)
    sp.add("coin_value", K, "INVESTED value of each coin card (static)", top_value)
    sp.add("card_place", (C, 2 + 2 * n),
           "per gem card one-hot: [face down, face up, INVESTED by seat-relative player 0..n-1, "
           "LEVERAGED by seat-relative player 0..n-1]")
    sp.add("card_locked", (C, 2), "per gem card, this reinvestment phase: [paid into credit, reinvested]")
    sp.add("coins", (n, K), "1 if the coin card is INVESTED, per seat-relative player and coin card")
    sp.add("capital", n, "INVESTED value each seat-relative player can pay now (its bid limit)", money)
    sp.add("invested_gems", (n, T), "gems of each type on INVESTED gem cards, per seat-relative player", per_type)
    sp.add("leveraged_gems", (n, T), "gems of each type on LEVERAGED gem cards, per seat-relative player", per_type)
    sp.add("points", n, "points each seat-relative player would score if the game ended now",
           float(m.total_gems + 3 * T))
    sp.add("opener", n, "one-hot seat-relative opening bidder of this auction (zero outside auctions)")
    sp.add("bid_state", (n, 3), "this auction, per seat-relative player one-hot: [still to bid, passed, bid]")
    sp.add("bid_amount", n, "this auction's bid of each seat-relative player (0 if none)", money)
    sp.add("high_bid", 1, "highest bid of this auction so far (0 if none)", money)
    sp.add("auction_winner", n, "one-hot seat-relative winner of this auction while it pays and takes")
    sp.add("owed", 1, "what the auction winner still has to pay", money)
    sp.add("credit", 1, "unspent credit of the reinvesting player", money)
    sp.add("last_winner", n, "one-hot seat-relative winner of the most recent auction")
    return sp


class Encoder:
    """Builds observations and masks for one GEM game configuration.

    An observation is built in the frame of seat 0 (seat-relative blocks indexed by seat) and
    turned into the observer's frame by one gather (:attr:`_perm`). Two parts change only now
    and then and are kept for the latest state seen: the part the gem cards' places decide
    (card places, gems per player and side, points), which changes when a card is taken, paid
    or reinvested, and on top of it the coin cards and capital. Both are keyed by the values
    they are built from (compared on every call), so any state, however it was made, gets its
    own observation.
    """

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.n = cfg.n
        self.spec = build_spec(cfg)
        self.num_actions = cfg.actions.size
        self._o = {s.name: s.offset for s in self.spec.slices}
        self._inv_scale = {s.name: 1.0 / s.scale for s in self.spec.slices}
        m = cfg.manifest
        static = np.zeros(self.spec.size, dtype=np.float32)
        self._put(static, "card_gems", np.asarray(m.type_counts, dtype=np.float32).ravel())
        self._put(static, "card_value", cfg.card_value)
        self._put(static, "card_cost", cfg.card_cost)
        self._put(static, "coin_value", cfg.coin_values)
        self._static = static
        o = self._o
        #: per phase, the index of its one-hot slot
        self._phase_slot = {phase: o["phase"] + k for k, phase in enumerate(PHASE_ORDER)}
        #: per gem card, the index of its "face down" slot in ``card_place``
        self._place = [o["card_place"] + (2 + 2 * self.n) * c for c in range(cfg.num_cards)]
        self._perm = self._permutations()
        # build_spec lays invested_gems, leveraged_gems and points side by side (the card part writes them at once)
        block = self.n * cfg.num_types
        assert o["points"] == o["leveraged_gems"] + block == o["invested_gems"] + 2 * block
        # the cached parts: their keys (copies of the state's lists) and seat 0's frame vectors
        self._cards_key: tuple | None = None     # (owner, invested, face_up)
        self._cards_base = static                # static + card part
        self._cards_capital: list[int] = []      # per seat, the INVESTED value of its gem cards
        self._coins_key: list | None = None      # coins, for the current card part
        self._base = static                      # card part + coins + capital

    def _put(self, v: np.ndarray, name: str, values) -> None:
        """Write ``values`` (game units) into block ``name`` of ``v``, divided by its scale."""
        values = np.asarray(values, dtype=np.float32).ravel()
        o = self._o[name]
        v[o:o + values.size] = values / self.spec[name].scale

    def _permutations(self) -> list[np.ndarray | None]:
        """Per observer, the gather taking seat 0's frame to the observer's (None for seat 0):
        entry k of a seat-relative block is seat ``(observer + k) % n``'s. Shared (read-only) by
        every encoder of the same layout."""
        n, size = self.n, self.spec.size
        layout = tuple((s.name, s.offset, s.shape) for s in self.spec.slices)
        if layout in _PERMUTATIONS:
            return _PERMUTATIONS[layout]
        perms: list[np.ndarray | None] = [None]
        for player in range(1, n):
            seats = [(player + k) % n for k in range(n)]
            idx = np.arange(size)
            for name in SEAT_BLOCKS:
                sl = self.spec[name]
                block = np.arange(sl.offset, sl.stop).reshape(n, -1)
                idx[sl.offset:sl.stop] = block[seats].ravel()
            sl = self.spec["card_place"]  # columns: face down, face up, INVESTED by seat, LEVERAGED by seat
            block = np.arange(sl.offset, sl.stop).reshape(self.cfg.num_cards, 2 + 2 * n)
            cols = [0, 1] + [2 + q for q in seats] + [2 + n + q for q in seats]
            idx[sl.offset:sl.stop] = block[:, cols].ravel()
            idx.flags.writeable = False
            perms.append(idx)
        _PERMUTATIONS[layout] = perms
        return perms

    def mask(self, s: GemState, player: int) -> np.ndarray:
        """Int8 legal-action mask of ``player``: exact, all zero when it is not to decide."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if s.phase == OVER or player != s.current:
            return m
        if s.phase == BID:  # the bids from the lowest that beats the highest up to the capital
            cfg = self.cfg
            high = high_bid(s)
            lowest = 0 if high is None else high + 1
            top = capital(s, cfg, player)
            if lowest <= top:
                m[lowest:top + 1] = 1
            if player != s.opener or cfg.opts.opener_may_pass:
                m[cfg.pass_id] = 1
        else:
            m[legal_actions(s, self.cfg)] = 1
        return m

    def _card_part(self, s: GemState) -> None:
        """Rebuild the cached card part for ``s``'s card places (seat 0's frame)."""
        cfg, n, o, sc = self.cfg, self.n, self._o, self._inv_scale
        T = cfg.num_types
        v = self._static.copy()
        face_up, place = s.face_up, self._place
        inv = [[0] * T for _ in range(n)]
        lev = [[0] * T for _ in range(n)]
        cap = [0] * n
        card_gems, card_value, invested = cfg.card_gems, cfg.card_value, s.invested
        for c, owner in enumerate(s.owner):
            if owner < 0:
                v[place[c] + 1 if c in face_up else place[c]] = 1.0
                continue
            if invested[c]:
                v[place[c] + 2 + owner] = 1.0
                cap[owner] += card_value[c]
                row = inv[owner]
            else:
                v[place[c] + 2 + n + owner] = 1.0
                row = lev[owner]
            for t in card_gems[c]:
                row[t] += 1
        # invested_gems, leveraged_gems and points lie side by side: one write
        gems_scale, lev_scale, points_scale = sc["invested_gems"], sc["leveraged_gems"], sc["points"]
        values = [x * gems_scale for row in inv for x in row]
        values += [x * lev_scale for row in lev for x in row]
        values += [x * points_scale for x in points(inv)]
        k = o["invested_gems"]
        v[k:k + len(values)] = values
        self._cards_base, self._cards_capital = v, cap
        self._cards_key = (list(s.owner), list(s.invested), list(face_up))
        self._coins_key = None

    def _coin_part(self, s: GemState) -> None:
        """Rebuild the cached coin cards and capital over the card part (seat 0's frame)."""
        cfg, n, o = self.cfg, self.n, self._o
        v = self._cards_base.copy()
        coins, values, money = s.coins, cfg.coin_values, self._inv_scale["capital"]
        flat = []
        for row in coins:
            flat += row
        k = o["coins"]
        v[k:k + n * cfg.num_coins] = flat  # True / False stored as 1.0 / 0.0
        k = o["capital"]
        v[k:k + n] = [(x + sum(compress(values, row))) * money for x, row in zip(self._cards_capital, coins)]
        self._base = v
        self._coins_key = [list(row) for row in coins]

    def observe(self, s: GemState, player: int) -> np.ndarray:
        """The float32 observation of ``player`` (layout: :func:`build_spec`)."""
        key = self._cards_key
        if key is None or s.owner != key[0] or s.invested != key[1] or s.face_up != key[2]:
            self._card_part(s)
        if s.coins != self._coins_key:
            self._coin_part(s)
        cfg, o, sc = self.cfg, self._o, self._inv_scale
        v = self._base.copy()
        phase = s.phase
        if phase != OVER:
            v[self._phase_slot[phase]] = 1.0
            v[o["actor"] + s.current] = 1.0
        v[o["round"]] = s.round / cfg.num_rounds
        v[o["final_round"]] = float(s.round == cfg.num_rounds)
        v[o["stacks_left"]] = len(s.stacks) / cfg.num_rounds
        v[o["hidden_cards"]] = sum(map(len, s.stacks)) / cfg.num_cards
        if s.paid or s.reinvested:
            locked = o["card_locked"]
            for c in s.paid:
                v[locked + 2 * c] = 1.0
            for c in s.reinvested:
                v[locked + 2 * c + 1] = 1.0
        if phase == BID or phase == PAY or phase == TAKE:
            v[o["opener"] + s.opener] = 1.0
            k, amount, money = o["bid_state"], o["bid_amount"], sc["bid_amount"]
            high = 0
            for p, b in enumerate(s.bids):
                if b is None:
                    v[k + 3 * p] = 1.0
                elif b == PASSED:
                    v[k + 3 * p + 1] = 1.0
                else:
                    v[k + 3 * p + 2] = 1.0
                    v[amount + p] = b * money
                    high = max(high, b)
            v[o["high_bid"]] = high * money
            if phase != BID:
                v[o["auction_winner"] + s.winner] = 1.0
                v[o["owed"]] = s.owed * sc["owed"]
        elif phase == REINVEST:
            v[o["credit"]] = s.credit * sc["credit"]
        if s.last_winner >= 0:
            v[o["last_winner"] + s.last_winner] = 1.0
        perm = self._perm[player]
        return v if perm is None else v[perm]


#: the gathers of :meth:`Encoder._permutations`, per observation layout
_PERMUTATIONS: dict[tuple, list[np.ndarray | None]] = {}

#: the blocks whose rows are per seat (entry k: the k-th player to the observer's left)
SEAT_BLOCKS = ("actor", "coins", "capital", "invested_gems", "leveraged_gems", "points", "opener", "bid_state",
               "bid_amount", "auction_winner", "last_winner")
