"""MegaGem rules: the game state as plain data and every transition of the rules.

Nothing here imports PettingZoo. Seat ``i+1`` is to the left (clockwise) of seat ``i``.
Colours are indices into :data:`~gemenvs.megagem.data.COLOURS`; auction cards are indices
into :data:`~gemenvs.megagem.data.AUCTION_KINDS`; missions index :data:`MISSIONS`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from gemenvs.core.engine import Results, check_bool, check_choice, check_int
from gemenvs.megagem.data import (
    AUCTION_AMOUNT, AUCTION_COPIES, AUCTION_TYPE, CHART_NAMES, GEMS_PER_COLOUR, MISSION_VALUE,
    MISSIONS_IN_PLAY, NUM_AUCTION_KINDS, NUM_COLOURS, NUM_MISSIONS, SETUP,
    TOTAL_LOANS, VALUE_CHARTS, mission_met,
)

BID, REVEAL, OVER = "bid", "reveal", "over"
PHASES = (BID, REVEAL, OVER)
TIE_BREAKS = ("rulebook", "queue")
REVEAL_AFTER = ("every_auction", "treasure_only")
TWO_PAIRS = ("any", "distinct")
CHART_OPTIONS = CHART_NAMES + ("random",)


@dataclass(frozen=True)
class Options:
    """Validated MegaGem options (see the rules-as-implemented page for each)."""

    num_players: int = 4
    value_chart: str = "A"
    tie_break: str = "rulebook"
    reveal_after: str = "every_auction"
    two_pairs: str = "any"
    public_bids: bool = True

    def __post_init__(self):
        object.__setattr__(self, "num_players", check_int("num_players", self.num_players, 3, 5))
        check_choice("value_chart", self.value_chart, CHART_OPTIONS)
        check_choice("tie_break", self.tie_break, TIE_BREAKS)
        check_choice("reveal_after", self.reveal_after, REVEAL_AFTER)
        check_choice("two_pairs", self.two_pairs, TWO_PAIRS)
        object.__setattr__(self, "public_bids", check_bool("public_bids", self.public_bids))

    @property
    def start_coins(self) -> int:
        """Coins each player starts with."""
        return SETUP[self.num_players][0]

    @property
    def hand_size(self) -> int:
        """Gem cards dealt to each hand."""
        return SETUP[self.num_players][1]

    @property
    def max_bid(self) -> int:
        """The largest bid any legal state allows (all loans won for free, then bid on nothing else)."""
        return self.start_coins + TOTAL_LOANS


@dataclass
class AuctionRecord:
    """One finished auction: the card, every bid, the winner, the gems bought and the reveal."""

    card: int
    bids: list[int]
    winner: int
    gems: list[int]
    revealed: int = -1  # colour revealed into the Display after the auction, -1 if none


@dataclass(eq=False)
class MegaGemState:
    """Everything about one MegaGem game; ``rng`` is the only source of randomness."""

    num_players: int
    chart: str
    rng: np.random.Generator
    coins: list[int]
    hands: list[list[int]]            # per player, count per colour (private)
    collections: list[list[int]]      # per player, count per colour
    loans: list[list[int]]            # per player, amounts of loan cards won
    investments: list[list[list[int]]]  # per player, [amount, locked bid] per invest card won
    display: list[int]                # Value Display, count per colour
    gem_deck: list[int]               # face-down gem cards, next to reveal first (hidden)
    gem_row: list[int]                # face-up gems for sale, slot 0 first
    auction_deck: list[int]           # face-down auction cards, next first (hidden order)
    missions: list[int]               # the four face-up mission cards
    mission_owner: list[int]          # who claimed each face-up mission, -1 if open
    auction_card: int = -1            # card of the current round, -1 when none
    phase: str = BID
    round: int = 0                    # auctions started so far
    bids: list = field(default_factory=list)  # sealed bids of this round (None = not yet bid)
    winner: int = -1                  # winner of the current round while it reveals
    last_winner: int = -1
    tie_queue: list[int] = field(default_factory=list)  # queue order for tie_break="queue"
    history: list[AuctionRecord] = field(default_factory=list)
    seed: int = 0                     # the seed the game was set up from (with ``log``, it determines the rest)
    log: list[list[int]] = field(default_factory=list)  # [seat, action, forced] of every decision (core)

    def copy(self) -> "MegaGemState":
        """An independent deep copy (its RNG continues identically)."""
        return copy.deepcopy(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, MegaGemState) and self.to_dict() == other.to_dict()

    def to_dict(self) -> dict:
        """Plain JSON data of every field (the seed and decision log included), sharing nothing with the
        state; ``MegaGem.state_from_dict`` rebuilds an equal state by replaying the seed and log."""
        d = {"seed": self.seed}
        d.update((k, copy.deepcopy(getattr(self, k))) for k in _PLAIN_FIELDS)
        d["rng"] = _rng_state(self.rng)
        d["history"] = [{**vars(r), "bids": list(r.bids), "gems": list(r.gems)} for r in self.history]  # no shared lists
        d["log"] = [list(entry) for entry in self.log]
        return d


_PLAIN_FIELDS = (
    "num_players", "chart", "coins", "hands", "collections", "loans", "investments", "display",
    "gem_deck", "gem_row", "auction_deck", "missions", "mission_owner", "auction_card", "phase",
    "round", "bids", "winner", "last_winner", "tie_queue",
)


def _rng_state(rng: np.random.Generator) -> dict:
    return copy.deepcopy(rng.bit_generator.state)


# ----------------------------------------------------------------------------- setup

def new_state(opts: Options, seed: int) -> MegaGemState:
    """Set up a game from ``seed``: shuffle, deal hands, reveal two gems and four missions, start round 1."""
    rng = np.random.default_rng(seed)
    n = opts.num_players
    chart = CHART_NAMES[int(rng.integers(len(CHART_NAMES)))] if opts.value_chart == "random" else opts.value_chart
    gems = [c for c in range(NUM_COLOURS) for _ in range(GEMS_PER_COLOUR)]
    rng.shuffle(gems)
    hands = [[0] * NUM_COLOURS for _ in range(n)]
    k = opts.hand_size
    for p in range(n):
        for c in gems[p * k:(p + 1) * k]:
            hands[p][c] += 1
    deck = gems[n * k:]
    auction = [kind for kind in range(NUM_AUCTION_KINDS) for _ in range(AUCTION_COPIES[kind])]
    rng.shuffle(auction)
    missions = [int(m) for m in rng.permutation(NUM_MISSIONS)[:MISSIONS_IN_PLAY]]
    queue = [int(p) for p in rng.permutation(n)] if opts.tie_break == "queue" else []
    s = MegaGemState(
        num_players=n, chart=chart, rng=rng, coins=[opts.start_coins] * n, hands=hands,
        collections=[[0] * NUM_COLOURS for _ in range(n)], loans=[[] for _ in range(n)],
        investments=[[] for _ in range(n)], display=[0] * NUM_COLOURS, gem_deck=[int(c) for c in deck[2:]],
        gem_row=[int(c) for c in deck[:2]], auction_deck=[int(a) for a in auction], missions=missions,
        mission_owner=[-1] * MISSIONS_IN_PLAY, tie_queue=queue, seed=int(seed),
    )
    _start_round(s)
    return s


def _start_round(s: MegaGemState) -> None:
    """Step 1: reveal the next auction card and open sealed bidding."""
    if not s.gem_row or not s.auction_deck:  # the second test is unreachable: 17 Treasure cards > 15 gems
        _end_game(s)
        return
    s.auction_card = s.auction_deck.pop(0)
    s.round += 1
    s.phase = BID
    s.bids = [None] * s.num_players
    s.winner = -1


# ----------------------------------------------------------------------------- queries

def to_act(s: MegaGemState) -> tuple[int, ...]:
    """Seats that must act now: every seat that has not bid, or the revealing winner."""
    if s.phase == BID:
        return tuple([p for p, b in enumerate(s.bids) if b is None])
    if s.phase == REVEAL:
        return (s.winner,)
    return ()


def bid_limit(s: MegaGemState, player: int) -> int:
    """The largest bid ``player`` may make on the current card (own coins, plus the loan if a Loan)."""
    card = s.auction_card
    if AUCTION_TYPE[card] == "loan":
        return s.coins[player] + AUCTION_AMOUNT[card]
    return s.coins[player]


def tie_order(s: MegaGemState, opts: Options) -> list[int] | None:
    """Seats in the order that wins ties this round, or None when a tie is drawn at random."""
    n = s.num_players
    if opts.tie_break == "queue":
        return list(s.tie_queue)
    if s.last_winner < 0:
        return None
    return [(s.last_winner + k) % n for k in range(1, n + 1)]  # previous winner checked last


def gem_value(chart: str, display_count: int) -> int:
    """Coins one Collection gem is worth when its colour has ``display_count`` gems in the Display."""
    values = VALUE_CHARTS[chart]
    return values[min(display_count, len(values) - 1)]


# ----------------------------------------------------------------------------- transitions

def place_bid(s: MegaGemState, opts: Options, player: int, bid: int) -> None:
    """Record a sealed bid; when the last one is in, resolve the auction."""
    s.bids[player] = bid
    if all(b is not None for b in s.bids):
        _resolve_auction(s, opts)


def _resolve_auction(s: MegaGemState, opts: Options) -> None:
    """Step 2: the highest bid wins (ties per option), pays, and takes the card."""
    bids = s.bids
    top = max(bids)
    tied = [p for p, b in enumerate(bids) if b == top]
    order = tie_order(s, opts)
    if len(tied) == 1:
        w = tied[0]
    elif order is None:
        w = tied[int(s.rng.integers(len(tied)))]
    else:
        w = next(p for p in order if p in tied)
    if opts.tie_break == "queue":
        s.tie_queue.remove(w)
        s.tie_queue.append(w)
    card, price = s.auction_card, bids[w]
    kind, amount = AUCTION_TYPE[card], AUCTION_AMOUNT[card]
    bought: list[int] = []
    if kind == "treasure":
        k = min(amount, len(s.gem_row))  # a 2-gem card with one gem left buys that one
        bought, s.gem_row = s.gem_row[:k], s.gem_row[k:]
        for c in bought:
            s.collections[w][c] += 1
        s.coins[w] -= price
    elif kind == "loan":
        s.coins[w] += amount - price
        s.loans[w].append(amount)
    else:  # invest: the bid is locked on the card
        s.coins[w] -= price
        s.investments[w].append([amount, price])
    s.history.append(AuctionRecord(card=card, bids=[int(b) for b in bids], winner=w, gems=bought))
    s.bids = []
    s.winner = w
    s.last_winner = w
    last_round = not s.gem_row and not s.gem_deck
    must_reveal = sum(s.hands[w]) > 0 and (opts.reveal_after == "every_auction" or kind == "treasure")
    # In the round that sells the last gem every hand is revealed anyway, so the winner's
    # choice cannot matter: that reveal is made automatically at the end of the game.
    if must_reveal and not last_round:
        s.phase = REVEAL
    else:
        _finish_round(s, opts)


def reveal(s: MegaGemState, opts: Options, player: int, colour: int) -> None:
    """Step 3: the winner moves one gem card of ``colour`` from its hand to the Value Display."""
    s.hands[player][colour] -= 1
    s.display[colour] += 1
    s.history[-1].revealed = colour
    _finish_round(s, opts)


def _finish_round(s: MegaGemState, opts: Options) -> None:
    """Steps 4-5: refill the gem row, claim missions clockwise from the winner, next round."""
    while len(s.gem_row) < 2 and s.gem_deck:
        s.gem_row.append(s.gem_deck.pop(0))
    claim_missions(s, opts, s.winner)
    _start_round(s)


def claim_missions(s: MegaGemState, opts: Options, first: int) -> None:
    """Give every open mission to the first player clockwise from ``first`` whose Collection meets it."""
    n, owner = s.num_players, s.mission_owner
    if min(owner) >= 0:
        return
    for k in range(n):
        p = (first + k) % n
        counts = tuple(s.collections[p])
        for i, m in enumerate(s.missions):
            if owner[i] < 0 and _mission_met(m, counts, opts.two_pairs):
                owner[i] = p


#: mission_met over hashable counts, remembered (checked for every seat after every auction)
_mission_met = lru_cache(maxsize=1 << 16)(mission_met)


def _end_game(s: MegaGemState) -> None:
    """Game end: every gem left in a hand is revealed into the Value Display."""
    for hand in s.hands:
        for c in range(NUM_COLOURS):
            s.display[c] += hand[c]
            hand[c] = 0
    s.phase = OVER
    s.auction_card = -1
    s.bids = []
    s.winner = -1


# ----------------------------------------------------------------------------- scoring

def score_breakdown(s: MegaGemState, player: int) -> dict[str, int]:
    """The parts of ``player``'s score now: coins, gems, missions, loans (negative), investments."""
    gems = sum(s.collections[player][c] * gem_value(s.chart, s.display[c]) for c in range(NUM_COLOURS))
    missions = sum(MISSION_VALUE[m] for m, o in zip(s.missions, s.mission_owner) if o == player)
    invest = sum(a + locked for a, locked in s.investments[player])
    parts = {
        "coins": s.coins[player],
        "gems": gems,
        "missions": missions,
        "loans": -sum(s.loans[player]),
        "investments": invest,
    }
    parts["total"] = sum(parts.values())
    return parts


def results(s: MegaGemState) -> Results:
    """Final scores (coins after settling everything) and the winners (ties share the win)."""
    breakdown = [score_breakdown(s, p) for p in range(s.num_players)]
    scores = [float(b["total"]) for b in breakdown]
    best = max(scores)
    return Results(scores=scores, breakdown=breakdown, winners=[p for p, x in enumerate(scores) if x == best],
                   extra={"value_chart": s.chart})
