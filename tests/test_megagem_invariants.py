"""Randomized invariant checks of the MegaGem engine, driven directly (no PettingZoo layer).

Thousands of random games (masked actions only, with a bidding policy biased towards small and
equal bids so that ties, zero bids and maximal loan bids all happen often) over every player
count, value chart and option. After every action the test checks, against its own bookkeeping
and the rulebook + CLARIFICATIONS (MegaGem section):

* every one of the 30 gems lies in exactly one zone (hands, collections, Display, deck, row);
* coins are accounted exactly: coins = start - bids paid + loans received;
* each seat's mask is exactly what the rules allow (bids 0..coins, 0..coins+L on a loan;
  reveal = colours in hand; all zero for a seat not to act), and ``why_illegal`` accepts
  every masked action and rejects every unmasked one;
* a decision with a single legal action (bid limit 0; a hand of one colour) is forced:
  ``forced_action`` names exactly that action (and agrees with the core's mask-based default),
  the test plays it as the core does, and at the end the core's own replay of the seed and
  the decision log (``state_from_dict``) rebuilds the very same state, forced entries included;
* auctions resolve per the rules (highest bid, tie-break, what is bought, the reveal duty,
  mission claims), no game goes past 25 rounds, and the final score breakdown adds up.
"""
from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

from gemenvs.core.engine import Game, IllegalActionError
from gemenvs.megagem.data import (
    AUCTION_AMOUNT, AUCTION_COPIES, AUCTION_TYPE, GEMS_PER_COLOUR, MISSION_VALUE, MISSIONS, NUM_COLOURS,
    NUM_GEMS, SETUP, VALUE_CHARTS, mission_met,
)
from gemenvs.megagem.game import MegaGem
from gemenvs.megagem.rules import BID, OVER, REVEAL

NUM_GAMES = 2016  # 7 games for each of the 288 option combinations
NUM_CHUNKS = 8
FULL_CHECK_EVERY = 32  # every 32nd game checks every action id of every decision with why_illegal

OPTION_GRID = list(itertools.product(
    (3, 4, 5), ("A", "B", "C", "D", "E", "random"), ("rulebook", "queue"),
    ("every_auction", "treasure_only"), ("any", "distinct"), (True, False),
))
GAME_CACHE: dict[tuple, MegaGem] = {}


def game_for(combo) -> MegaGem:
    if combo not in GAME_CACHE:
        n, chart, tie, rev, pairs, public = combo
        GAME_CACHE[combo] = MegaGem(num_players=n, value_chart=chart, tie_break=tie, reveal_after=rev,
                                    two_pairs=pairs, public_bids=public)
    return GAME_CACHE[combo]


def check_zones(s) -> None:
    """Every gem in exactly one zone: 6 per colour, 30 in all, no negative counts."""
    per_colour = [sum(x) for x in zip(*s.hands, *s.collections, s.display)]
    for g in s.gem_row + s.gem_deck:
        per_colour[g] += 1  # an id outside 0..4 raises IndexError
    assert per_colour == [GEMS_PER_COLOUR] * NUM_COLOURS, f"gems per colour in play: {per_colour}"
    assert min(min(x) for x in (*s.hands, *s.collections, s.display)) >= 0
    assert len(s.gem_row) <= 2 and min(s.gem_row + s.gem_deck, default=0) >= 0


def expected_legal_range(game: MegaGem, s, player: int) -> tuple[int, int]:
    """Lowest and highest legal action of a seat to act, from the rulebook (not the encoder)."""
    if s.phase == BID:
        limit = s.coins[player]
        if AUCTION_TYPE[s.auction_card] == "loan":
            limit += AUCTION_AMOUNT[s.auction_card]
        assert limit <= game.max_bid, "a legal bid would not fit in the action space"
        return 0, limit
    colours = [c for c in range(NUM_COLOURS) if s.hands[player][c] > 0]
    assert colours, "a winner with an empty hand must not be asked to reveal"
    reveals = game.action_spec["reveal"]
    return reveals[colours[0]], reveals[colours[-1]]


def choose_bid(rnd: random.Random, limit: int) -> int:
    r = rnd.random()
    if r < 0.25:
        return 0
    if r < 0.5:
        return rnd.randint(0, min(limit, 3))
    if r < 0.6:
        return limit
    return rnd.randint(0, limit)


def play_checked(index: int, stats: dict) -> None:
    combo = OPTION_GRID[index % len(OPTION_GRID)]
    game = game_for(combo)
    n, tie_break, reveal_after = combo[0], combo[2], combo[3]
    rnd = random.Random(index)
    # the test plays every decision itself through game.play, forced ones as the core does
    # (logged with forced=1), and checks at the end that the core's replay agrees
    s = game.initial_state(index)
    full = (index // NUM_CHUNKS) % FULL_CHECK_EVERY == 0
    start, hand_size = SETUP[n]
    A = game.num_actions
    off = game.action_spec["reveal"].start

    def decide(p: int, a: int, forced: bool) -> None:
        s.log.append([p, a, int(forced)])
        game.play(s, p, a)

    # the set-up
    assert s.coins == [start] * n
    assert [sum(h) for h in s.hands] == [hand_size] * n
    assert len(s.gem_row) == 2 and len(s.gem_deck) == NUM_GEMS - n * hand_size - 2
    assert sorted(s.auction_deck + [s.auction_card]) == sorted(
        k for k in range(len(AUCTION_COPIES)) for _ in range(AUCTION_COPIES[k]))
    assert len(set(s.missions)) == 4 and s.mission_owner == [-1] * 4
    if combo[1] != "random":
        assert s.chart == combo[1]
    if tie_break == "queue":
        assert sorted(s.tie_queue) == list(range(n))

    coins = [start] * n           # own ledger: start - paid + loans received
    loans = [0] * n
    invest = [0] * n              # investment amounts + locked bids to be paid back
    hand_left = [hand_size] * n
    cols = [[0] * NUM_COLOURS for _ in range(n)]
    revealed = [0] * NUM_COLOURS
    bids: dict[int, int] = {}
    decisions = 0
    check_zones(s)

    while s.phase != OVER:
        acting = game.to_act(s)
        assert acting == tuple(sorted(acting)) and acting
        forced = []  # (seat, its single legal action) of the seats to act, in seat order
        for p in range(n):
            mask = game.legal_mask(s, p)
            assert mask.dtype == np.int8 and mask.shape == (A,)
            if p not in acting:
                assert not mask.any(), f"seat {p} is not to act but has legal actions"
                a = rnd.randrange(A)
                assert game.why_illegal(s, p, a) is not None, (p, a)
                continue
            lo, hi = expected_legal_range(game, s, p)
            single = lo if lo == hi else None
            assert game.forced_action(s, p) == single == Game.forced_action(game, s, p), (p, single)
            if single is not None:
                forced.append((p, single))
            if s.phase == BID:  # bids 0..limit, nothing else
                assert mask[:hi + 1].all() and not mask[hi + 1:].any(), f"seat {p}: bids 0..{hi} expected"
            else:  # reveal: exactly the colours in hand
                assert mask[:off].sum() == 0 and mask[off:].tolist() == [int(x > 0) for x in s.hands[p]]
            if full:  # every action id: accepted exactly when masked
                for a in range(A):
                    assert (game.why_illegal(s, p, a) is None) == bool(mask[a]), (p, a)
            else:
                for a in {lo, hi, hi + 1, off + rnd.randrange(NUM_COLOURS), rnd.randrange(A)}:
                    if 0 <= a < A:
                        assert (game.why_illegal(s, p, a) is None) == bool(mask[a]), (p, a)
        if full:  # observations stay inside the declared space
            low, high = game.spec.bounds()
            for p in range(n):
                o = game.observe(s, p)
                assert o.dtype == np.float32 and o.shape == (game.spec.size,)
                assert np.all(o >= low) and np.all(o <= high)

        if s.phase == BID:
            if forced:
                (p, action), limit = forced[0], 0
                stats["forced_bids"] += 1
            else:
                p = rnd.choice(acting)
                mask = game.legal_mask(s, p)
                limit = int(np.flatnonzero(mask)[-1])
                action = choose_bid(rnd, limit)
            card, row_before, history_len = s.auction_card, list(s.gem_row), len(s.history)
            last_winner, queue_before = s.last_winner, list(s.tie_queue)
            hands_before = [list(h) for h in s.hands]
            owners_before = list(s.mission_owner)
            deck_before = list(s.gem_deck)
            if full and rnd.random() < 0.2:  # an illegal action through apply() leaves the state alone
                before = s.to_dict()
                with pytest.raises(IllegalActionError):
                    game.apply(s, p, limit + 1)
                assert s.to_dict() == before
            decide(p, action, bool(forced))
            bids[p] = action
            decisions += 1
            if len(bids) < n:
                assert len(s.history) == history_len and s.phase == BID
            else:
                # the auction resolved: check it against the rules and our own ledger
                assert len(s.history) == history_len + 1
                rec = s.history[-1]
                bid_list = [bids[q] for q in range(n)]
                assert rec.bids == bid_list and rec.card == card
                top = max(bid_list)
                tied = [q for q in range(n) if bid_list[q] == top]
                w = rec.winner
                assert w in tied
                if len(tied) > 1:
                    stats["ties"] += 1
                    if tie_break == "queue":
                        assert w == next(q for q in queue_before if q in tied)
                    elif last_winner >= 0:
                        order = [(last_winner + k) % n for k in range(1, n + 1)]
                        assert w == next(q for q in order if q in tied), "rulebook tie-break broken"
                    else:
                        stats["random_ties"] += 1
                if tie_break == "queue":
                    assert s.tie_queue == [q for q in queue_before if q != w] + [w]
                assert s.last_winner == w
                kind, amount = AUCTION_TYPE[card], AUCTION_AMOUNT[card]
                if kind == "loan" and top > coins[w]:
                    stats["loan_overbid"] += 1  # a bid above own coins, paid out of the loan
                coins[w] -= top
                k = 0
                if kind == "treasure":
                    k = min(amount, len(row_before))
                    assert rec.gems == row_before[:k]
                    for g in rec.gems:
                        cols[w][g] += 1
                    if amount == 2 and len(row_before) == 1:
                        stats["short_pair"] += 1
                elif kind == "loan":
                    coins[w] += amount
                    loans[w] += amount
                    assert rec.gems == []
                else:
                    invest[w] += amount + top
                    assert rec.gems == []
                remaining = row_before[k:]
                last_round = not remaining and not deck_before
                must_reveal = hand_left[w] > 0 and (reveal_after == "every_auction" or kind == "treasure")
                if must_reveal and not last_round:
                    assert s.phase == REVEAL and s.winner == w and game.to_act(s) == (w,)
                    assert s.gem_row == remaining and s.gem_deck == deck_before, "refill comes after the reveal"
                    stats["reveals"] += 1
                else:
                    assert s.phase == (OVER if last_round else BID)
                    if s.phase == BID:
                        assert s.hands == hands_before and s.history[-1].revealed == -1
                    if not must_reveal:
                        stats["no_reveal"] += 1
                bids = {}
                finish = (w, owners_before, remaining, deck_before)
                if s.phase != REVEAL:
                    check_round_end(s, finish, game.opts.two_pairs, stats)
        else:
            (p,) = acting
            assert p == s.winner
            colours = [c for c in range(NUM_COLOURS) if s.hands[p][c]]
            c = rnd.choice(colours)
            if full and len(colours) < NUM_COLOURS:
                missing = next(x for x in range(NUM_COLOURS) if not s.hands[p][x])
                assert "hand" in game.why_illegal(s, p, off + missing)
            stats["forced_reveals"] += bool(forced)
            decide(p, off + c, bool(forced))
            decisions += 1
            hand_left[p] -= 1
            revealed[c] += 1
            assert s.history[-1].revealed == c
            check_round_end(s, finish, game.opts.two_pairs, stats)

        check_zones(s)
        assert s.coins == coins, "coins differ from start - paid + loans received"
        assert s.collections == cols, "collections differ from the gems bought"
        assert [sum(x) for x in s.loans] == loans
        assert [sum(a + b for a, b in x) for x in s.investments] == invest
        assert min(s.coins) >= 0
        assert s.round <= 25 and decisions <= game.max_decisions
        if s.phase != OVER:
            assert s.display == revealed
            assert [sum(h) for h in s.hands] == hand_left

    # the end: every gem sold or revealed, everything settled
    stats["games"] += 1
    if index % 4 == 0:  # the core plays the same forced decisions: its replay of seed + log is this game
        assert game.state_from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert s.round <= 25 and len(s.history) == s.round
    assert not s.gem_row and not s.gem_deck
    assert all(sum(h) == 0 for h in s.hands)
    assert sum(s.display) == n * hand_size
    assert sum(map(sum, s.collections)) == NUM_GEMS - n * hand_size
    assert game.to_act(s) == ()
    for p in range(n):
        assert not game.legal_mask(s, p).any()
        assert game.why_illegal(s, p, 0) is not None
    res = game.results(s)
    chart = VALUE_CHARTS[s.chart]
    for p in range(n):
        b = res.breakdown[p]
        gems = sum(s.collections[p][c] * chart[min(s.display[c], 5)] for c in range(NUM_COLOURS))
        missions = sum(MISSION_VALUE[m] for m, o in zip(s.missions, s.mission_owner) if o == p)
        assert b == {"coins": coins[p], "gems": gems, "missions": missions, "loans": -loans[p],
                     "investments": invest[p], "total": coins[p] + gems + missions - loans[p] + invest[p]}
        assert res.scores[p] == b["total"]
    assert res.winners == [p for p in range(n) if res.scores[p] == max(res.scores)]
    stats["rounds_max"] = max(stats["rounds_max"], s.round)


def check_round_end(s, finish, two_pairs: str, stats: dict) -> None:
    """After a round: the row refilled from the deck in order; a claimed mission is met by its
    owner, an open one by nobody; new claims are the round winner's."""
    winner, owners_before, remaining, deck_before = finish
    refill = 2 - len(remaining)
    if s.phase != OVER:
        assert s.gem_row == (remaining + deck_before)[:2] and s.gem_deck == deck_before[refill:]
    for i, m in enumerate(s.missions):
        o = s.mission_owner[i]
        if owners_before[i] >= 0:
            assert o == owners_before[i], "a claimed mission changed hands"
        if o >= 0:
            assert mission_met(m, s.collections[o], two_pairs)
            if owners_before[i] < 0:
                assert o == winner, "only the round's winner can newly meet a mission"
                stats["claims"] += 1
        else:
            assert not any(mission_met(m, col, two_pairs) for col in s.collections), MISSIONS[m][0]


@pytest.mark.parametrize("chunk", range(NUM_CHUNKS))
def test_random_games_keep_invariants(chunk):
    stats = dict.fromkeys(("games", "ties", "random_ties", "short_pair", "loan_overbid", "reveals",
                           "no_reveal", "claims", "rounds_max", "forced_bids", "forced_reveals"), 0)
    for index in range(chunk, NUM_GAMES, NUM_CHUNKS):
        play_checked(index, stats)
    assert stats["games"] == NUM_GAMES // NUM_CHUNKS
    # the random policy really exercises the rules' corners (else the checks above prove little)
    for key in ("ties", "random_ties", "short_pair", "loan_overbid", "reveals", "no_reveal", "claims",
                "forced_bids", "forced_reveals"):
        assert stats[key] > 0, f"no game exercised {key}: {stats}"
    assert 15 <= stats["rounds_max"] <= 25


def test_option_grid_covers_every_option():
    assert NUM_GAMES >= 2000 and len(OPTION_GRID) == 3 * 6 * 2 * 2 * 2 * 2
    assert NUM_GAMES >= 2 * len(OPTION_GRID)


def test_mission_rules_match_the_rulebook():
    """Spot checks of mission_met against the rulebook and the two_pairs option."""
    by_label = {label: i for i, (label, *_rest) in enumerate(MISSIONS)}
    assert len(MISSIONS) == 30
    assert sum(1 for m in MISSIONS if m[0].startswith("Pendant")) == 16
    assert sum(1 for m in MISSIONS if m[0].startswith("Crown")) == 12
    two = by_label["Shield: 2 pairs"]
    assert MISSION_VALUE[two] == 15 and MISSION_VALUE[by_label["Crown: 3 different colours"]] == 10
    assert mission_met(two, [4, 0, 0, 0, 0], "any") and not mission_met(two, [4, 0, 0, 0, 0], "distinct")
    assert mission_met(two, [2, 2, 0, 0, 0], "distinct") and not mission_met(two, [3, 1, 0, 0, 0], "any")
    assert mission_met(by_label["Shield: 4 different colours"], [1, 1, 0, 1, 1], "any")
    assert not mission_met(by_label["Shield: 4 different colours"], [3, 1, 0, 0, 1], "any")
    assert mission_met(by_label["Pendant: Blue + Yellow"], [1, 0, 0, 0, 1], "any")
    assert not mission_met(by_label["Pendant: Blue + Yellow"], [2, 0, 0, 0, 0], "any")
    assert mission_met(by_label["Crown: 3 of any one colour"], [0, 0, 3, 0, 0], "any")
    assert not mission_met(by_label["Pendant: 2 Green"], [0, 1, 1, 0, 0], "any")
