"""MegaGem observations and action masks for one seat: the only place hidden information is read.

Per-player blocks are seat-relative: entry 0 is the observer, entry k the k-th player to its
left. The observer's own hand is the only private information encoded; sealed bids of the
current round are never encoded.
"""
from __future__ import annotations

import numpy as np

from gemenvs.core.spec import ObservationSpec
from gemenvs.megagem.data import (
    AUCTION_COPIES, CHART_NAMES, COLOURS, GEMS_PER_COLOUR, MISSIONS_IN_PLAY, NUM_AUCTION_CARDS,
    NUM_AUCTION_KINDS, NUM_COLOURS, NUM_MISSIONS, TOTAL_INVEST, TOTAL_LOANS, VALUE_CHARTS,
)
from gemenvs.megagem.rules import BID, REVEAL, MegaGemState, Options, bid_limit, gem_value, tie_order

COIN_SCALE = 100.0  # no coin amount (coins, bids, locked bids) can exceed 95


def build_spec(opts: Options) -> ObservationSpec:
    """The named-slice layout of a MegaGem observation for ``opts.num_players`` seats."""
    n = opts.num_players
    sp = ObservationSpec()
    sp.add("phase", 2, "one-hot: [bidding, revealing a gem from hand]")
    sp.add("value_chart", 5, "one-hot value chart in play: A, B, C, D, E")
    sp.add("gem_value", NUM_COLOURS, "coins one Collection gem of each colour is worth at the current Display count", 20)
    sp.add("round", 1, "auctions started so far (this one included)", NUM_AUCTION_CARDS)
    sp.add("auction_card", NUM_AUCTION_KINDS, "one-hot card being auctioned: T1, T2, Loan10, Loan20, Invest5, Invest10")
    sp.add("auction_deck_left", NUM_AUCTION_KINDS, "auction cards of each kind still face down", 12)
    sp.add("gem_row", (2, NUM_COLOURS), "face-up gems for sale: slot 0 (sold by 1-gem cards), slot 1; one-hot colour, zero if empty")
    sp.add("gem_deck_left", 1, "gem cards still in the face-down deck", 30)
    sp.add("display", NUM_COLOURS, "gems of each colour in the Value Display", GEMS_PER_COLOUR)
    sp.add("own_hand", NUM_COLOURS, "gem cards of each colour in the observer's hand (private)", GEMS_PER_COLOUR)
    sp.add("bid_limit", 1, "the observer's largest legal bid on this card (0 when not bidding)", COIN_SCALE)
    sp.add("hand_size", n, "cards in each player's hand, seat-relative", GEMS_PER_COLOUR)
    sp.add("coins", n, "coins of each player, seat-relative", COIN_SCALE)
    sp.add("collection", (n, NUM_COLOURS), "Collection gems per player (seat-relative) and colour", GEMS_PER_COLOUR)
    sp.add("loans", n, "coins each player owes on loans, seat-relative", TOTAL_LOANS)
    sp.add("investment", n, "investment card amounts each player will be paid, seat-relative", TOTAL_INVEST)
    sp.add("locked", n, "coins each player has locked on investment cards, seat-relative", COIN_SCALE)
    sp.add("mission", (MISSIONS_IN_PLAY, NUM_MISSIONS), "one-hot id of each face-up mission card (docs: mission table)")
    sp.add("mission_owner", (MISSIONS_IN_PLAY, n + 1), "per mission: one-hot [open, claimed by seat-relative player 0..n-1]")
    sp.add("last_bids", n, "bids of the most recently resolved auction, seat-relative (zero if public_bids=False or none yet)", COIN_SCALE)
    sp.add("last_winner", n, "one-hot winner of the most recently resolved auction, seat-relative", 1)
    sp.add("tie_rank", n, "place of each player in this auction's tie-break order (0 wins ties), seat-relative", max(n - 1, 1))
    sp.add("tie_random", 1, "1 when ties this auction are broken at random (first auction, tie_break='rulebook')")
    return sp


class Encoder:
    """Builds observations and masks for one MegaGem game configuration."""

    def __init__(self, opts: Options):
        self.opts = opts
        self.n = opts.num_players
        self.spec = build_spec(opts)
        self.num_bids = opts.max_bid + 1
        self.num_actions = self.num_bids + NUM_COLOURS
        self._o = {s.name: s.offset for s in self.spec.slices}

    def mask(self, s: MegaGemState, player: int) -> np.ndarray:
        """Int8 legal-action mask: bids 0..limit while bidding, colours in hand while revealing."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if s.phase == BID and s.bids[player] is None:
            m[: bid_limit(s, player) + 1] = 1
        elif s.phase == REVEAL and s.winner == player:
            hand = s.hands[player]
            for c in range(NUM_COLOURS):
                if hand[c]:
                    m[self.num_bids + c] = 1
        return m

    def observe(self, s: MegaGemState, player: int) -> np.ndarray:
        """The float32 observation of ``player`` (layout: :func:`build_spec`)."""
        n, o = self.n, self._o
        v = np.zeros(self.spec.size, dtype=np.float32)
        rel = [(player + k) % n for k in range(n)]
        if s.phase == BID:
            v[o["phase"]] = 1.0
        elif s.phase == REVEAL:
            v[o["phase"] + 1] = 1.0
        v[o["value_chart"] + CHART_NAMES.index(s.chart)] = 1.0
        d = s.display
        v[o["gem_value"]:o["gem_value"] + 5] = [gem_value(s.chart, d[c]) / 20.0 for c in range(5)]
        v[o["round"]] = s.round / NUM_AUCTION_CARDS
        if s.auction_card >= 0:
            v[o["auction_card"] + s.auction_card] = 1.0
        deck = s.auction_deck
        v[o["auction_deck_left"]:o["auction_deck_left"] + 6] = [deck.count(k) / 12.0 for k in range(6)]
        for i, c in enumerate(s.gem_row):
            v[o["gem_row"] + 5 * i + c] = 1.0
        v[o["gem_deck_left"]] = len(s.gem_deck) / 30.0
        v[o["display"]:o["display"] + 5] = d
        v[o["display"]:o["display"] + 5] /= GEMS_PER_COLOUR
        v[o["own_hand"]:o["own_hand"] + 5] = s.hands[player]
        v[o["own_hand"]:o["own_hand"] + 5] /= GEMS_PER_COLOUR
        if s.phase == BID:
            v[o["bid_limit"]] = bid_limit(s, player) / COIN_SCALE
        hands, coins, cols = s.hands, s.coins, s.collections
        v[o["hand_size"]:o["hand_size"] + n] = [sum(hands[p]) / GEMS_PER_COLOUR for p in rel]
        v[o["coins"]:o["coins"] + n] = [coins[p] / COIN_SCALE for p in rel]
        v[o["collection"]:o["collection"] + 5 * n] = [cols[p][c] / GEMS_PER_COLOUR for p in rel for c in range(5)]
        v[o["loans"]:o["loans"] + n] = [sum(s.loans[p]) / TOTAL_LOANS for p in rel]
        inv = s.investments
        v[o["investment"]:o["investment"] + n] = [sum(a for a, _ in inv[p]) / TOTAL_INVEST for p in rel]
        v[o["locked"]:o["locked"] + n] = [sum(b for _, b in inv[p]) / COIN_SCALE for p in rel]
        base, own = o["mission"], o["mission_owner"]
        for i, m in enumerate(s.missions):
            v[base + NUM_MISSIONS * i + m] = 1.0
            owner = s.mission_owner[i]
            v[own + (n + 1) * i + (0 if owner < 0 else 1 + (owner - player) % n)] = 1.0
        if s.history:
            last = s.history[-1]
            if self.opts.public_bids:
                v[o["last_bids"]:o["last_bids"] + n] = [last.bids[p] / COIN_SCALE for p in rel]
            v[o["last_winner"] + (last.winner - player) % n] = 1.0
        order = tie_order(s, self.opts)
        if order is None:
            v[o["tie_random"]] = 1.0
        else:
            scale = max(n - 1, 1)
            for place, p in enumerate(order):
                v[o["tie_rank"] + (p - player) % n] = place / scale
        return v
