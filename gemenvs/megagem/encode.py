"""MegaGem observations and action masks for one seat: the only place hidden information is read.

Per-player blocks are seat-relative: entry 0 is the observer, entry k the k-th player to its
left. The observer's own hand is the only private information encoded; sealed bids of the
current round are never encoded.
"""
from __future__ import annotations

import numpy as np

from gemenvs.core.spec import ActionSpec, ObservationSpec
from gemenvs.megagem.data import (
    CHART_NAMES, COLOURS, GEMS_PER_COLOUR, MISSIONS_IN_PLAY, NUM_AUCTION_CARDS,
    NUM_AUCTION_KINDS, NUM_COLOURS, NUM_GEMS, NUM_MISSIONS, TOTAL_INVEST, TOTAL_LOANS,
)
from gemenvs.megagem.rules import BID, REVEAL, MegaGemState, Options, bid_limit, gem_value, tie_order

COIN_SCALE = 100.0  # no coin amount (coins, bids, locked bids) can exceed 95


def build_action_spec(opts: Options) -> ActionSpec:
    """The named action ranges of MegaGem: ``bid`` 0..max_bid, then ``reveal`` one per colour."""
    sp = ActionSpec()
    sp.add("bid", opts.max_bid + 1, "bid that many coins: legal while bidding, once per seat and auction, up to "
           "the seat's bid limit (own coins, plus the amount of a Loan card being auctioned)")
    sp.add("reveal", meaning="move a gem card of that colour from hand to the Value Display: legal for the "
           "auction's winner when it must reveal, for a colour it holds", labels=COLOURS)
    return sp


def build_spec(opts: Options) -> ObservationSpec:
    """The named-slice layout of a MegaGem observation for ``opts.num_players`` seats."""
    n = opts.num_players
    sp = ObservationSpec()
    sp.add("phase", 2, "one-hot: [bidding, revealing a gem from hand]")
    sp.add("value_chart", 5, "one-hot value chart in play: A, B, C, D, E")
    sp.add("rule_options", 4, "rule options in force (public): [two_pairs='distinct', reveal_after='treasure_only', "
           "public_bids, tie_break='queue']")
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
        self.size = self.spec.size
        self.action_spec = build_action_spec(opts)
        self.num_actions = self.action_spec.size
        self._bid_start = self.action_spec["bid"].start
        self._reveal_start = self.action_spec["reveal"].start
        self._o = {s.name: s.offset for s in self.spec.slices}
        n = self.n
        #: seat-relative order of the players for each observer
        self._rel = [[(p + k) % n for k in range(n)] for p in range(n)]
        # Lookup tables of the exact values the slot formulas give (the observation is a hot path):
        # a Collection gem's value / 20 for each chart and Display count, and count / 6 computed in
        # float32 for the Display and own-hand slots.
        self._gem_value = {ch: [gem_value(ch, k) / 20.0 for k in range(NUM_GEMS + 1)] for ch in CHART_NAMES}
        sixths = np.arange(NUM_GEMS + 1, dtype=np.float32)
        sixths /= GEMS_PER_COLOUR
        self._sixths32 = sixths.tolist()
        self._chart_index = {ch: i for i, ch in enumerate(CHART_NAMES)}
        self._rule_options = [float(opts.two_pairs == "distinct"), float(opts.reveal_after == "treasure_only"),
                              float(opts.public_bids), float(opts.tie_break == "queue")]
        # observe() fills everything before the missions as one block and everything after them as another
        assert self.spec.names[-6:] == ["mission", "mission_owner", "last_bids", "last_winner", "tie_rank",
                                        "tie_random"]

    def mask(self, s: MegaGemState, player: int) -> np.ndarray:
        """Int8 legal-action mask: bids 0..limit while bidding, colours in hand while revealing."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if s.phase == BID and s.bids[player] is None:
            start = self._bid_start
            m[start:start + bid_limit(s, player) + 1] = 1
        elif s.phase == REVEAL and s.winner == player:
            hand, start = s.hands[player], self._reveal_start
            for c in range(NUM_COLOURS):
                if hand[c]:
                    m[start + c] = 1
        return m

    def observe(self, s: MegaGemState, player: int) -> np.ndarray:
        """The float32 observation of ``player`` (layout: :func:`build_spec`)."""
        # A hot path: the dense blocks are filled as Python floats and converted once each
        # (the head up to the missions, the tail from last_bids); the sparse missions directly.
        n, o = self.n, self._o
        rel = self._rel[player]
        v = [0.0] * o["mission"]
        if s.phase == BID:
            v[o["phase"]] = 1.0
        elif s.phase == REVEAL:
            v[o["phase"] + 1] = 1.0
        v[o["value_chart"] + self._chart_index[s.chart]] = 1.0
        at = o["rule_options"]
        v[at:at + 4] = self._rule_options
        d, values, sixths = s.display, self._gem_value[s.chart], self._sixths32
        at = o["gem_value"]
        v[at:at + 5] = [values[k] for k in d]
        v[o["round"]] = s.round / NUM_AUCTION_CARDS
        if s.auction_card >= 0:
            v[o["auction_card"] + s.auction_card] = 1.0
        deck = bytes(s.auction_deck)  # (kinds 0..5: counted in C)
        at = o["auction_deck_left"]
        v[at:at + 6] = [deck.count(k) / 12.0 for k in range(6)]
        at = o["gem_row"]
        for i, c in enumerate(s.gem_row):
            v[at + 5 * i + c] = 1.0
        v[o["gem_deck_left"]] = len(s.gem_deck) / 30.0
        at = o["display"]
        v[at:at + 5] = [sixths[k] for k in d]
        at = o["own_hand"]
        v[at:at + 5] = [sixths[k] for k in s.hands[player]]
        if s.phase == BID:
            v[o["bid_limit"]] = bid_limit(s, player) / COIN_SCALE
        hands, coins, cols, loans, inv = s.hands, s.coins, s.collections, s.loans, s.investments
        at = o["hand_size"]
        v[at:at + n] = [sum(hands[p]) / GEMS_PER_COLOUR for p in rel]
        at = o["coins"]
        v[at:at + n] = [coins[p] / COIN_SCALE for p in rel]
        at = o["collection"]
        v[at:at + 5 * n] = [x / GEMS_PER_COLOUR for p in rel for x in cols[p]]
        at_loans, at_inv, at_locked = o["loans"], o["investment"], o["locked"]
        for k, p in enumerate(rel):  # most players hold no loan or investment card: those slots stay 0
            if loans[p]:
                v[at_loans + k] = sum(loans[p]) / TOTAL_LOANS
            if inv[p]:
                v[at_inv + k] = sum(a for a, _ in inv[p]) / TOTAL_INVEST
                v[at_locked + k] = sum(b for _, b in inv[p]) / COIN_SCALE
        out = np.zeros(self.size, dtype=np.float32)
        out[:len(v)] = v
        base, own = o["mission"], o["mission_owner"]
        for i, m in enumerate(s.missions):
            out[base + NUM_MISSIONS * i + m] = 1.0
            owner = s.mission_owner[i]
            out[own + (n + 1) * i + (0 if owner < 0 else 1 + (owner - player) % n)] = 1.0
        tail = o["last_bids"]
        v = [0.0] * (self.size - tail)
        if s.history:
            last = s.history[-1]
            if self.opts.public_bids:
                v[:n] = [last.bids[p] / COIN_SCALE for p in rel]
            v[o["last_winner"] - tail + (last.winner - player) % n] = 1.0
        order = tie_order(s, self.opts)
        if order is None:
            v[o["tie_random"] - tail] = 1.0
        else:
            scale = max(n - 1, 1)
            at = o["tie_rank"] - tail
            for place, p in enumerate(order):
                v[at + (p - player) % n] = place / scale
        out[tail:] = v
        return out
