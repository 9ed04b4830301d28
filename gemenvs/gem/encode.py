"""GEM observations and action masks for one seat.

GEM has no private information (clarification GEM 9): every seat sees the same facts, except
the face-down stacks, which nobody sees and which are never encoded. Per-player blocks are
seat-relative: entry 0 is the observer, entry k the k-th player to its left. The card tables
(gems, values, costs) are encoded too, so an agent needs nothing but the observation.
"""
from __future__ import annotations

import numpy as np

from gemenvs.core.spec import ObservationSpec
from gemenvs.gem.rules import (
    BID, OVER, PASSED, PAY, REINVEST, TAKE, Config, GemState, capital, high_bid, legal_actions, score_breakdown,
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
    """Builds observations and masks for one GEM game configuration."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.n = cfg.n
        self.spec = build_spec(cfg)
        self.num_actions = cfg.actions.size
        self._o = {s.name: s.offset for s in self.spec.slices}
        self._scale = {s.name: s.scale for s in self.spec.slices}
        m = cfg.manifest
        static = np.zeros(self.spec.size, dtype=np.float32)
        self._put(static, "card_gems", np.asarray(m.type_counts, dtype=np.float32).ravel())
        self._put(static, "card_value", cfg.card_value)
        self._put(static, "card_cost", cfg.card_cost)
        self._put(static, "coin_value", cfg.coin_values)
        self._static = static

    def _put(self, v: np.ndarray, name: str, values) -> None:
        values = np.asarray(values, dtype=np.float32).ravel()
        o = self._o[name]
        v[o:o + values.size] = values / self._scale[name]

    def mask(self, s: GemState, player: int) -> np.ndarray:
        """Int8 legal-action mask of ``player``: exact, all zero when it is not to decide."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if s.phase != OVER and player == s.current:
            m[legal_actions(s, self.cfg)] = 1
        return m

    def observe(self, s: GemState, player: int) -> np.ndarray:
        """The float32 observation of ``player`` (layout: :func:`build_spec`)."""
        cfg, n, o = self.cfg, self.n, self._o
        rel = [(player + k) % n for k in range(n)]
        pos = {p: k for k, p in enumerate(rel)}
        v = self._static.copy()
        if s.phase != OVER:
            v[o["phase"] + PHASE_ORDER.index(s.phase)] = 1.0
            v[o["actor"] + pos[s.current]] = 1.0
        v[o["round"]] = s.round / cfg.num_rounds
        v[o["final_round"]] = float(s.round == cfg.num_rounds)
        v[o["stacks_left"]] = len(s.stacks) / cfg.num_rounds
        v[o["hidden_cards"]] = sum(len(x) for x in s.stacks) / cfg.num_cards
        width = 2 + 2 * n
        face_up = set(s.face_up)
        inv = np.zeros((n, cfg.num_types), dtype=np.float32)
        lev = np.zeros((n, cfg.num_types), dtype=np.float32)
        for c in range(cfg.num_cards):
            owner = s.owner[c]
            if owner < 0:
                slot = 1 if c in face_up else 0
            else:
                k = pos[owner]
                slot = 2 + k if s.invested[c] else 2 + n + k
                target = inv if s.invested[c] else lev
                for t in cfg.card_gems[c]:
                    target[k, t] += 1
            v[o["card_place"] + width * c + slot] = 1.0
        for c in s.paid:
            v[o["card_locked"] + 2 * c] = 1.0
        for c in s.reinvested:
            v[o["card_locked"] + 2 * c + 1] = 1.0
        self._put(v, "coins", [float(up) for p in rel for up in s.coins[p]])
        self._put(v, "capital", [capital(s, cfg, p) for p in rel])
        self._put(v, "invested_gems", inv)
        self._put(v, "leveraged_gems", lev)
        breakdown = score_breakdown(s, cfg)
        self._put(v, "points", [breakdown[p]["total"] for p in rel])
        if s.phase in (BID, PAY, TAKE):
            v[o["opener"] + pos[s.opener]] = 1.0
            for k, p in enumerate(rel):
                b = s.bids[p]
                v[o["bid_state"] + 3 * k + (0 if b is None else 1 if b == PASSED else 2)] = 1.0
            self._put(v, "bid_amount", [max(s.bids[p] or 0, 0) for p in rel])
            self._put(v, "high_bid", [high_bid(s) or 0])
        if s.phase in (PAY, TAKE):
            v[o["auction_winner"] + pos[s.winner]] = 1.0
            self._put(v, "owed", [s.owed])
        if s.phase == REINVEST:
            self._put(v, "credit", [s.credit])
        if s.last_winner >= 0:
            v[o["last_winner"] + pos[s.last_winner]] = 1.0
        return v
