"""GEM rules: the game state as plain data and every transition of the rules.

Nothing here imports PettingZoo. Seat ``i+1`` is to the left (clockwise) of seat ``i``; seat 0
sits left of the dealer and opens the first auction. Gem cards are ids
into the manifest (:mod:`gemenvs.gem.data`); coin cards are indices ``0..K-1`` into each
player's own coin cards. The rules as implemented are described in docs/gem.md; the section
names below are that page's.

This module is the bare rules: :func:`play` is one decision's transition. The core engine
(:class:`gemenvs.core.engine.Game`) logs every decision and plays the decisions that have a
single legal action (a bidder who cannot outbid and must pass, the last face-up card, a player
with nothing to reinvest ...), so no seat is ever asked a question with a single answer.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress

import numpy as np

from gemenvs.core.engine import Results, check_bool, check_choice, check_int
from gemenvs.gem.actions import build_action_spec
from gemenvs.gem.data import PLAYER_COUNTS, Manifest, load_manifest

BID, PAY, TAKE, REINVEST, OVER = "bid", "pay", "take", "reinvest", "over"
PHASES = (BID, PAY, TAKE, REINVEST, OVER)
PASSED = -1  # entry of ``bids`` for a player who passed; ``None`` for one still to bid
REINVEST_COSTS = ("value_minus_one", "value")


@dataclass(frozen=True)
class Options:
    """Validated GEM options (see ``docs/gem.md`` for each)."""

    num_players: int = 3
    reinvest_cost: str = "value_minus_one"
    opener_may_pass: bool = False
    manifest: str | os.PathLike | Mapping | None = None

    def __post_init__(self):
        # stored as checked: a numpy integer or bool becomes a plain int or bool (options() is plain JSON)
        object.__setattr__(self, "num_players",
                           check_int("num_players", self.num_players, min(PLAYER_COUNTS), max(PLAYER_COUNTS)))
        check_choice("reinvest_cost", self.reinvest_cost, REINVEST_COSTS)
        object.__setattr__(self, "opener_may_pass", check_bool("opener_may_pass", self.opener_may_pass))
        if self.manifest is not None and not isinstance(self.manifest, (str, os.PathLike, Mapping)):
            raise ValueError(f"manifest must be None, a path or a dict; got {type(self.manifest).__name__}")


class Config:
    """Options plus the manifest tables the rules read (built once per game)."""

    def __init__(self, opts: Options, manifest: Manifest | None = None):
        self.opts = opts
        self.manifest = manifest if manifest is not None else load_manifest(opts.manifest)
        m = self.manifest
        self.n = opts.num_players
        self.num_cards = m.num_cards
        self.num_coins = m.num_coins
        self.num_types = m.num_types
        self.coin_values = m.coin_values
        self.card_value = m.card_value
        # docs/gem.md "Options": reinvestment cost is the printed LEVERAGED value (INVESTED - 1),
        # or the full INVESTED value under reinvest_cost="value"
        self.card_cost = m.card_cost if opts.reinvest_cost == "value_minus_one" else m.card_value
        self.card_gems = m.card_gems
        self.stack_sizes = m.stacks[self.n]
        self.num_rounds = len(self.stack_sizes)
        self.actions = build_action_spec(m)
        # first id of each range, read once from the spec for the hot paths below
        self.pass_id = self.actions["pass"].start
        self.take_id = self.actions["take"].start
        self.pay_coin_id = self.actions["pay_coin"].start
        self.pay_card_id = self.actions["pay_card"].start
        self.reinvest_id = self.actions["reinvest"].start
        self.end_id = self.actions["end"].start
        #: ``(range name, argument)`` of every action id, decoded once (``play`` reads it per decision)
        self.decoded = decoded_actions(self.actions)


_DECODED: dict[tuple, tuple[tuple[str, int], ...]] = {}


def decoded_actions(actions) -> tuple[tuple[str, int], ...]:
    """``actions.decode(a)`` of every action id, shared by every game of the same action layout."""
    layout = tuple((r.name, r.start, r.size) for r in actions.ranges)
    if layout not in _DECODED:
        _DECODED[layout] = tuple(actions.decode(a) for a in range(actions.size))
    return _DECODED[layout]


@dataclass(eq=False)
class GemState:
    """Everything about one GEM game; after the deal (from ``seed``) the game has no randomness left."""

    seed: int                       # the deal's seed (-1 for a hand-picked deal no seed gives)
    num_players: int
    stacks: list[list[int]]         # stacks still face down, next first (hidden)
    owner: list[int]                # per gem card: seat holding it, -1 if face down or face up
    invested: list[bool]            # per gem card: INVESTED side up (False while not held)
    coins: list[list[bool]]         # per player, per coin card: INVESTED side up
    round: int = 0                  # stacks turned up so far (1..num_rounds)
    face_up: list[int] = field(default_factory=list)  # gem cards in the centre, ascending ids
    phase: str = BID
    current: int = 0                # seat to decide now, -1 when over
    opener: int = 0                 # opening bidder of this auction
    bids: list = field(default_factory=list)  # this auction, per seat: None (to bid), PASSED or the bid
    winner: int = -1                # winner of this auction while it pays and takes
    owed: int = 0                   # what the winner still has to pay
    last_winner: int = -1           # winner of the most recent auction
    reinvest_first: int = -1        # first seat of this reinvestment phase, -1 outside it
    credit: int = 0                 # the reinvesting seat's unspent credit
    paid: list[int] = field(default_factory=list)        # gem cards paid into credit this phase
    reinvested: list[int] = field(default_factory=list)  # gem cards reinvested in this phase
    log: list[list[int]] = field(default_factory=list)   # [seat, action, forced], written by the core

    def copy(self) -> "GemState":
        """An independent deep copy."""
        return GemState(**self.to_dict())

    def __eq__(self, other) -> bool:
        return isinstance(other, GemState) and self.to_dict() == other.to_dict()

    def to_dict(self) -> dict:
        """Plain JSON data (fresh lists) that ``Gem.state_from_dict`` turns back into an equal state."""
        d = {k: getattr(self, k) for k in STATE_FIELDS}
        for k in ("stacks", "coins", "log"):  # lists of lists of plain values
            d[k] = [list(x) for x in d[k]]
        for k in ("owner", "invested", "face_up", "bids", "paid", "reinvested"):
            d[k] = list(d[k])
        return d


STATE_FIELDS = (
    "seed", "num_players", "stacks", "owner", "invested", "coins", "round", "face_up", "phase", "current",
    "opener", "bids", "winner", "owed", "last_winner", "reinvest_first", "credit", "paid", "reinvested", "log",
)


# ----------------------------------------------------------------------------- setup

def deal_stacks(cfg: Config, seed: int) -> list[list[int]]:
    """Shuffle the gem cards and deal the stacks left to right (docs/gem.md "Setup")."""
    order = [int(c) for c in np.random.default_rng(seed).permutation(cfg.num_cards)]
    stacks, start = [], 0
    for size in cfg.stack_sizes:
        stacks.append(order[start:start + size])
        start += size
    return stacks


def new_state(cfg: Config, seed: int) -> GemState:
    """A fresh game from ``seed``: deal the stacks, turn up the first one, seat 0 opens."""
    return state_from_deal(cfg, deal_stacks(cfg, seed), seed)


def state_from_deal(cfg: Config, deal: list[list[int]], seed: int = -1) -> GemState:
    """A fresh game over given stacks (every coin card INVESTED, no gem card held); ``seed`` is
    recorded as the deal's seed (-1: a hand-picked deal, which ``state_from_dict`` cannot replay)."""
    n = cfg.n
    s = GemState(
        seed=seed, num_players=n, stacks=[list(x) for x in deal],
        owner=[-1] * cfg.num_cards, invested=[False] * cfg.num_cards,
        coins=[[True] * cfg.num_coins for _ in range(n)],
    )
    _start_round(s, cfg, opener=0)
    return s


def _start_round(s: GemState, cfg: Config, opener: int) -> None:
    """Reveal (docs/gem.md "Auction phase"): turn up the leftmost stack; ``opener`` opens its first auction."""
    s.face_up = sorted(s.stacks.pop(0))
    s.round += 1
    _start_auction(s, cfg, opener)


def _start_auction(s: GemState, cfg: Config, opener: int) -> None:
    s.phase = BID
    s.opener = opener
    s.current = opener
    s.bids = [None] * cfg.n
    s.winner = -1
    s.owed = 0


# ----------------------------------------------------------------------------- queries

def to_act(s: GemState) -> tuple[int, ...]:
    """The seat that decides now (GEM is turn-based), or none when the game is over."""
    return () if s.phase == OVER else (s.current,)


def capital(s: GemState, cfg: Config, player: int) -> int:
    """Sum of the INVESTED values of ``player``'s INVESTED cards: its largest possible bid."""
    total = sum(compress(cfg.coin_values, s.coins[player]))
    if player not in s.owner:  # no gem card yet (the common case early on): skip the card scan
        return total
    return total + sum(compress(cfg.card_value, [o == player and up for o, up in zip(s.owner, s.invested)]))


def high_bid(s: GemState) -> int | None:
    """The highest bid of this auction so far, or None when nobody has bid."""
    bids = [b for b in s.bids if b is not None and b >= 0]
    return max(bids) if bids else None


def is_final_round(s: GemState, cfg: Config) -> bool:
    """Whether this is the last round, whose cards arrive INVESTED (docs/gem.md "Auction phase")."""
    return s.round == cfg.num_rounds


def reinvestable(s: GemState, player: int) -> list[int]:
    """``player``'s LEVERAGED gem cards that were not used to pay in this reinvestment phase."""
    return [c for c, o in enumerate(s.owner) if o == player and not s.invested[c] and c not in s.paid]


def legal_actions(s: GemState, cfg: Config) -> list[int]:
    """Every legal action id of the seat to act, ascending (empty when the game is over)."""
    p = s.current
    if s.phase == BID:
        high = high_bid(s)
        acts = list(range(0 if high is None else high + 1, capital(s, cfg, p) + 1))
        if p != s.opener or cfg.opts.opener_may_pass:
            acts.append(cfg.pass_id)
        return acts
    if s.phase == PAY:
        return _payments(s, cfg, p, exclude=())
    if s.phase == TAKE:
        return [cfg.take_id + c for c in s.face_up]
    if s.phase == REINVEST:
        targets = reinvestable(s, p)
        acts = _payments(s, cfg, p, exclude=s.reinvested) if targets else []
        acts += [cfg.reinvest_id + c for c in targets if cfg.card_cost[c] <= s.credit]
        acts.append(cfg.end_id)
        return acts
    return []


def _payments(s: GemState, cfg: Config, p: int, exclude) -> list[int]:
    acts = [cfg.pay_coin_id + j for j, up in enumerate(s.coins[p]) if up]
    acts += [cfg.pay_card_id + c for c, o in enumerate(s.owner) if o == p and s.invested[c] and c not in exclude]
    return acts


def forced_action(s: GemState, cfg: Config) -> int | None:
    """The only legal action of the seat to act when it has exactly one, else None (agrees with
    :func:`legal_actions`; in an auction it counts the bids instead of listing them)."""
    if s.phase == BID:
        high = high_bid(s)
        lowest = 0 if high is None else high + 1
        bids = max(0, capital(s, cfg, s.current) - lowest + 1)
        may_pass = s.current != s.opener or cfg.opts.opener_may_pass
        if bids + may_pass != 1:
            return None
        return cfg.pass_id if may_pass else lowest
    if s.phase == TAKE:
        return cfg.take_id + s.face_up[0] if len(s.face_up) == 1 else None
    if s.phase == OVER:
        return None
    acts = legal_actions(s, cfg)
    return acts[0] if len(acts) == 1 else None


def explain(s: GemState, cfg: Config, player: int, action: int) -> str | None:
    """Words for why ``action`` of ``player``, the seat to act, is illegal now; None when the
    rules find nothing against it (it is then legal: the mask is :func:`legal_actions`)."""
    kind, arg = cfg.actions.decode(action)
    label = cfg.manifest.label
    if s.phase == BID:
        cap, high = capital(s, cfg, player), high_bid(s)
        if kind == "bid":
            if arg > cap:
                return f"bid {arg} exceeds the {cap} that the player's INVESTED cards can pay"
            if high is not None and arg <= high:
                return f"bid {arg} does not beat the highest bid {high}"
            return None
        if kind == "pass":
            if player == s.opener and not cfg.opts.opener_may_pass:
                return "the opening bidder must bid (0 or more); opener_may_pass is False"
            return None
        return f"this is a bidding decision: bid or pass, not {kind}"
    if s.phase == TAKE:
        if kind != "take":
            return f"the auction winner must take a face-up gem card, not {kind}"
        if arg not in s.face_up:
            return f"gem card {arg} ({label(arg)}) is not face up"
        return None
    if kind in ("pay_coin", "pay_card"):
        if s.phase == REINVEST and not reinvestable(s, player):
            return "no LEVERAGED gem card left to reinvest in, so there is nothing to pay for"
        if kind == "pay_coin":
            if not s.coins[player][arg]:
                return f"coin card {cfg.coin_values[arg]} is LEVERAGED already"
            return None
        if s.owner[arg] != player:
            return f"gem card {arg} ({label(arg)}) is not the player's"
        if not s.invested[arg]:
            return f"gem card {arg} ({label(arg)}) is LEVERAGED already"
        if s.phase == REINVEST and arg in s.reinvested:
            return f"gem card {arg} ({label(arg)}) was reinvested in this phase and cannot also pay"
        return None
    if s.phase == PAY:
        return f"the winner must pay its bid ({s.owed} left) with an INVESTED card, not {kind}"
    # reinvestment phase
    if kind == "end":
        return None
    if kind != "reinvest":
        return f"this is a reinvestment decision: pay into credit, reinvest or end, not {kind}"
    if s.owner[arg] != player:
        return f"gem card {arg} ({label(arg)}) is not the player's"
    if s.invested[arg]:
        return f"gem card {arg} ({label(arg)}) is INVESTED already"
    if arg in s.paid:
        return f"gem card {arg} ({label(arg)}) paid into credit in this phase and cannot be reinvested"
    if cfg.card_cost[arg] > s.credit:
        return f"gem card {arg} ({label(arg)}) costs {cfg.card_cost[arg]}, credit is {s.credit}"
    return None


# ----------------------------------------------------------------------------- transitions

def play(s: GemState, cfg: Config, player: int, action: int) -> None:
    """The transition of one legal ``action`` of ``player`` (no logging, no forced decisions)."""
    kind, arg = cfg.decoded[action]
    if kind == "bid":
        s.bids[player] = arg
        _next_bidder(s, cfg)
    elif kind == "pass":
        s.bids[player] = PASSED
        _next_bidder(s, cfg)
    elif kind == "take":
        _take(s, cfg, arg)
    elif kind in ("pay_coin", "pay_card"):
        if kind == "pay_coin":
            s.coins[player][arg] = False
            value = cfg.coin_values[arg]
        else:
            s.invested[arg] = False
            value = cfg.card_value[arg]
            if s.phase == REINVEST:
                s.paid.append(arg)
        if s.phase == PAY:
            # payment (docs/gem.md "Auction phase"): no change; the payment ends as soon as the bid is covered
            s.owed = max(0, s.owed - value)
            if s.owed == 0:
                s.phase = TAKE
        else:
            s.credit += value
    elif kind == "reinvest":
        s.invested[arg] = True
        s.credit -= cfg.card_cost[arg]
        s.reinvested.append(arg)
    else:
        _end_reinvestment(s, cfg)


def _next_bidder(s: GemState, cfg: Config) -> None:
    """Once around (docs/gem.md "Auction phase"): after the last bidder the highest bid wins."""
    nxt = (s.current + 1) % cfg.n
    if nxt != s.opener:
        s.current = nxt
        return
    high = high_bid(s)
    if high is None:  # only with opener_may_pass: everyone passed, the opener takes a card for 0
        s.winner, price = s.opener, 0
    else:
        s.winner, price = s.bids.index(high), high
    s.current = s.winner
    s.owed = price
    s.phase = PAY if price > 0 else TAKE


def _take(s: GemState, cfg: Config, card: int) -> None:
    """The winner takes a face-up card, LEVERAGED (INVESTED in the final round); then the next auction."""
    w = s.winner
    s.owner[card] = w
    s.invested[card] = is_final_round(s, cfg)
    s.face_up.remove(card)
    s.last_winner = w
    if s.face_up:
        _start_auction(s, cfg, (w + 1) % cfg.n)  # the player after the winner opens the next auction
    else:
        s.phase = REINVEST
        s.bids = []
        s.winner = -1
        s.reinvest_first = w  # docs/gem.md "Reinvestment phase": the winner of the round's last card first
        _start_turn(s, w)


def _start_turn(s: GemState, player: int) -> None:
    s.current = player
    s.credit = 0
    s.paid = []
    s.reinvested = []


def _end_reinvestment(s: GemState, cfg: Config) -> None:
    """Leftover credit is lost; the next player reinvests, or the round ends."""
    nxt = (s.current + 1) % cfg.n
    if nxt != s.reinvest_first:
        _start_turn(s, nxt)
        return
    _start_turn(s, -1)
    s.reinvest_first = -1
    for row in s.coins:  # then every coin card back to INVESTED
        row[:] = [True] * len(row)
    if s.stacks:
        _start_round(s, cfg, (s.last_winner + 1) % cfg.n)  # opened by the player after the last winner
    else:
        s.phase = OVER


# ----------------------------------------------------------------------------- scoring

def invested_gems(s: GemState, cfg: Config) -> list[list[int]]:
    """Per player, gems of each type on its INVESTED gem cards (the only gems that score)."""
    counts = [[0] * cfg.num_types for _ in range(cfg.n)]
    for c, o in enumerate(s.owner):
        if o >= 0 and s.invested[c]:
            for t in cfg.card_gems[c]:
                counts[o][t] += 1
    return counts


def majority_holders(counts: list[list[int]], gem_type: int) -> list[int]:
    """Players with the most gems of ``gem_type`` (at least one): docs/gem.md "Scoring and the end"."""
    return _most([row[gem_type] for row in counts])


def _most(column) -> list[int]:
    """Players with the most gems in ``column`` (one gem type's count per player), at least one."""
    best = max(column)
    if best == 0:
        return []
    return [p for p, x in enumerate(column) if x == best]


def majority_points(holders: list[int]) -> int:
    """Points of each majority holder of one gem type: 3 alone, 2 each when shared."""
    return 3 if len(holders) == 1 else 2


def points(counts: list[list[int]]) -> list[int]:
    """Points of each player from its INVESTED gems per type (``counts``): gems plus majorities."""
    totals = [sum(row) for row in counts]
    for column in zip(*counts):
        holders = _most(column)
        for p in holders:
            totals[p] += majority_points(holders)
    return totals


def score_breakdown(s: GemState, cfg: Config) -> list[dict[str, int]]:
    """Per player: ``gems`` (1 a gem), ``majorities`` (3 alone, 2 each when shared), per type, ``total``."""
    counts = invested_gems(s, cfg)
    out = [{"gems": sum(row), "majorities": 0} for row in counts]
    for t, name in enumerate(cfg.manifest.gem_types):
        holders = majority_holders(counts, t)
        for p in range(cfg.n):
            pts = majority_points(holders) if p in holders else 0
            out[p][f"majority_{name}"] = pts
            out[p]["majorities"] += pts
    for b in out:
        b["total"] = b["gems"] + b["majorities"]
    return out


def winners(breakdown: list[dict[str, int]]) -> list[int]:
    """Most points, then most gems on INVESTED cards; still tied players share the win."""
    keys = [(b["total"], b["gems"]) for b in breakdown]
    best = max(keys)
    return [p for p, k in enumerate(keys) if k == best]


def results(s: GemState, cfg: Config) -> Results:
    """Final scores, their breakdown and the winners of a finished game."""
    breakdown = score_breakdown(s, cfg)
    scores = [float(b["total"]) for b in breakdown]
    return Results(scores=scores, breakdown=breakdown, winners=winners(breakdown),
                   rank_keys=[(score, b["gems"]) for score, b in zip(scores, breakdown)])  # points, then gems
