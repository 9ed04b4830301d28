"""Randomized invariant checks of the GEM engine, driven directly (no PettingZoo layer).

2,004 random games (masked actions only, with a bidding policy biased towards passes and
zero bids so that free wins and all-pass auctions happen often) over every player count and
option. After every decision the test checks, against the rulebook and CLARIFICATIONS (GEM):

* every gem card lies in exactly one place (face down, face up, or held by one player) and a
  card held by nobody is never INVESTED; the stacks left match the round;
* cards change hands and sides only as the logged actions say: one new owner per ``take``
  (INVESTED exactly in the final round), one flip to LEVERAGED per gem-card payment, one flip
  to INVESTED per reinvestment; coin cards are all INVESTED at the start of every round;
* bids in an auction strictly increase, never exceed the bidder's capital, and what the
  winner owes and the reinvesting player's credit are never negative;
* in every 40th game, at every decision: the rules' own words (``rules.explain``) find
  something against exactly the masked-out actions of the seat to act, ``why_illegal`` agrees
  with the mask (every legal and every third illegal id), other seats' masks are all zero, and the encoder's points, capital and gems
  agree with the rules; every decision asked of a seat has at least two legal actions, and
  ``forced_action`` agrees;
* games end after the last round with every card held and all coins INVESTED, the score
  breakdown adds up, the winners follow the tiebreak, and states survive to_dict/from_dict.
"""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from gemenvs.gem import Gem, rules
from gemenvs.gem.rules import BID, OVER, PASSED, PAY, REINVEST, TAKE, capital, invested_gems

NUM_GAMES = 2004  # 167 games for each of the 12 option combinations
NUM_CHUNKS = 6
FULL_CHECK_EVERY = 40
ROUND_TRIP_EVERY = 20

PASS = Gem().action_spec["pass"][0]  # the same id for every player count and option
OPTION_GRID = list(itertools.product((2, 3, 4), ("value_minus_one", "value"), (False, True)))
GAMES: dict[tuple, Gem] = {}


def game_for(combo) -> Gem:
    if combo not in GAMES:
        n, cost, may_pass = combo
        GAMES[combo] = Gem(num_players=n, reinvest_cost=cost, opener_may_pass=may_pass)
    return GAMES[combo]


def check_places(g: Gem, s) -> None:
    """Every gem card in exactly one place and one orientation."""
    C = g.cfg.num_cards
    places = [0] * C
    for stack in s.stacks:
        for c in stack:
            places[c] += 1
    for c in s.face_up:
        places[c] += 1
    for c in range(C):
        if s.owner[c] >= 0:
            places[c] += 1
            assert 0 <= s.owner[c] < g.num_players
        else:
            assert not s.invested[c], f"card {c} INVESTED but held by nobody"
    assert places == [1] * C, f"cards in several or no places: {places}"
    assert len(s.stacks) == g.cfg.num_rounds - s.round
    assert [len(x) for x in s.stacks] == list(g.cfg.stack_sizes[s.round:])


def check_phase(g: Gem, s) -> None:
    """Phase-local facts: increasing bids within capital, debts and credit non-negative."""
    assert s.owed >= 0 and s.credit >= 0
    if s.phase == BID:
        order = [(s.opener + k) % g.num_players for k in range(g.num_players)]
        made = [s.bids[p] for p in order if s.bids[p] is not None and s.bids[p] != PASSED]
        assert made == sorted(set(made)), f"bids do not strictly increase: {made}"
        assert s.bids[s.current] is None
    if s.phase == PAY:
        assert s.owed > 0 and s.current == s.winner
        assert capital(s, g.cfg, s.winner) >= s.owed  # the debt can always be covered
    if s.phase == TAKE:
        assert s.face_up and s.current == s.winner
    if s.phase == REINVEST:
        assert not s.face_up and set(s.paid).isdisjoint(s.reinvested)
        assert all(s.owner[c] == s.current for c in s.paid + s.reinvested)


class Snapshot:
    """What check_transition compares: owners, sides, round and the log length before a decision."""

    def __init__(self, s):
        self.owner, self.invested, self.round, self.logged = list(s.owner), list(s.invested), s.round, len(s.log)


def check_transition(g: Gem, before: Snapshot, after) -> None:
    """Ownership and sides changed exactly as the new log entries say."""
    final = g.cfg.num_rounds
    new = after.log[before.logged:]
    assert new and new[0][2] == 0 and all(forced == 1 for _, _, forced in new[1:])
    kinds = [g.action_spec.decode(a)[0] for _, a, _ in new]
    took = [c for c in range(g.cfg.num_cards) if before.owner[c] < 0 <= after.owner[c]]
    assert len(took) == kinds.count("take")
    assert all(before.owner[c] == after.owner[c] for c in range(g.cfg.num_cards) if before.owner[c] >= 0)
    held = [c for c in range(g.cfg.num_cards) if before.owner[c] >= 0]
    to_lev = [c for c in held if before.invested[c] and not after.invested[c]]
    to_inv = [c for c in held if not before.invested[c] and after.invested[c]]
    assert len(to_lev) == kinds.count("pay_card")
    assert len(to_inv) == kinds.count("reinvest")
    # rulebook Auction Phase 3: LEVERAGED, except in the final round (a take is never followed by
    # a forced payment, and a new round's first take is never forced with the default stacks)
    assert all(after.invested[c] == (before.round == final) for c in took)
    if after.round > before.round:
        assert after.coins == [[True] * g.cfg.num_coins for _ in range(g.num_players)]


def check_full_mask(g: Gem, s) -> None:
    """The seat to act: the rules' words (explain) find something against exactly its
    masked-out actions, and why_illegal (which rebuilds the mask on every call) accepts exactly
    the mask on every legal and every third illegal id. Other seats: an all-zero mask, and
    why_illegal refuses them. The encoder's own tallies agree with the rules."""
    p = s.current
    mask = g.legal_mask(s, p)
    for a in range(g.num_actions):
        words = rules.explain(s, g.cfg, p, a)
        assert (words is None) == bool(mask[a]), f"explain disagrees with the mask on {g.action_name(a)}"
        if mask[a] or a % 3 == len(s.log) % 3:
            reason = g.why_illegal(s, p, a)
            assert (reason is None) == bool(mask[a]), f"action {a} ({g.action_name(a)}): mask {mask[a]}, reason {reason}"
            assert reason is None or reason  # reasons are non-empty text
    legal = np.flatnonzero(mask)
    for q in range(g.num_players):
        if q != p:
            assert not g.legal_mask(s, q).any()
            assert g.why_illegal(s, q, int(legal[0])) == f"it is not player {q}'s decision (to act: {p})"
    # seat-relative blocks: entry k is seat p + k
    d = g.spec.decode(g.observe(s, p))
    order = [(p + k) % g.num_players for k in range(g.num_players)]
    totals = [b["total"] for b in rules.score_breakdown(s, g.cfg)]
    counts = invested_gems(s, g.cfg)
    assert np.abs(d["points"] - [totals[q] for q in order]).max() < 1e-4
    assert np.abs(d["capital"] - [capital(s, g.cfg, q) for q in order]).max() < 1e-4
    assert np.abs(d["invested_gems"] - [counts[q] for q in order]).max() < 1e-4


def check_end(g: Gem, s) -> None:
    assert s.phase == OVER and g.to_act(s) == () and s.round == g.cfg.num_rounds
    assert not s.stacks and not s.face_up and min(s.owner) >= 0
    assert s.coins == [[True] * g.cfg.num_coins for _ in range(g.num_players)]
    assert len(s.log) <= g.max_decisions
    res = g.results(s)
    counts = invested_gems(s, g.cfg)
    for p, b in enumerate(res.breakdown):
        assert b["gems"] == sum(counts[p])
        assert b["majorities"] == sum(v for k, v in b.items() if k.startswith("majority_"))
        assert b["total"] == b["gems"] + b["majorities"] == res.scores[p]
    for t, name in enumerate(g.manifest.gem_types):
        pts = [b[f"majority_{name}"] for b in res.breakdown]
        top = max(row[t] for row in counts)
        holders = [p for p in range(g.num_players) if counts[p][t] == top and top > 0]
        assert pts == [(3 if len(holders) == 1 else 2) if p in holders else 0 for p in range(g.num_players)]
    key = [(res.scores[p], res.breakdown[p]["gems"]) for p in range(g.num_players)]
    assert res.winners == [p for p in range(g.num_players) if key[p] == max(key)]


def choose(g: Gem, s, legal: list[int], rng: random.Random) -> int:
    """A random legal action, biased towards passing and bidding the minimum."""
    if s.phase == BID:
        r = rng.random()
        if r < 0.3 and PASS in legal:
            return PASS
        if r < 0.5:
            return legal[0]
    return legal[rng.randrange(len(legal))]


def play_checked(game_index: int) -> None:
    combo = OPTION_GRID[game_index % len(OPTION_GRID)]
    g = game_for(combo)
    rng = random.Random(game_index)
    s = g.new_state(game_index)
    full = game_index % FULL_CHECK_EVERY == 0
    check_places(g, s)
    mid = None
    while s.phase != OVER:
        legal = rules.legal_actions(s, g.cfg)
        assert len(legal) >= 2, "a decision with a single legal action must be played by the engine"
        assert g.forced_action(s, s.current) is None
        assert list(np.flatnonzero(g.legal_mask(s, s.current))) == legal
        if full:
            check_full_mask(g, s)
        before = Snapshot(s)
        g.apply(s, s.current, choose(g, s, legal, rng))
        check_places(g, s)
        check_phase(g, s)
        check_transition(g, before, s)
        if mid is None and len(s.log) > 40:
            mid = s.copy()
    check_end(g, s)
    if game_index % ROUND_TRIP_EVERY == 0:
        for state in (s, mid):
            assert g.state_from_dict(state.to_dict()) == state


@pytest.mark.parametrize("chunk", range(NUM_CHUNKS))
def test_random_games_keep_invariants(chunk):
    for i in range(chunk, NUM_GAMES, NUM_CHUNKS):
        play_checked(i)


def test_determinism():
    for combo in OPTION_GRID[::3]:
        g = game_for(combo)
        logs = []
        for _ in range(2):
            s, rng = g.new_state(77), random.Random(77)
            obs = []
            while s.phase != OVER:
                obs.append(g.observe(s, s.current))
                g.apply(s, s.current, choose(g, s, rules.legal_actions(s, g.cfg), rng))
            logs.append((s.to_dict(), np.stack(obs)))
        assert logs[0][0] == logs[1][0]
        assert np.array_equal(logs[0][1], logs[1][1])
