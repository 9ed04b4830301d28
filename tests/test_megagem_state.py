"""MegaGem states: copy, equality, the to_dict / state_from_dict JSON round trip, and rejection
of malformed or inconsistent dicts with a StateError that names the problem."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from gemenvs.megagem import MegaGem, StateError
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, mission_met
from gemenvs.megagem.rules import BID, OVER, REVEAL

CONFIGS = [
    dict(),
    dict(num_players=3, tie_break="queue", value_chart="random"),
    dict(num_players=5, reveal_after="treasure_only", two_pairs="distinct", public_bids=False, value_chart="E"),
]


def choose(g: MegaGem, s, rng: np.random.Generator) -> tuple[int, int]:
    """A random seat to act and a random legal action (mostly small bids: ties and long games)."""
    seats = g.to_act(s)
    p = seats[int(rng.integers(len(seats)))]
    legal = np.flatnonzero(g.legal_mask(s, p))
    if s.phase == BID and rng.random() < 0.8:
        return p, int(rng.integers(0, min(int(legal[-1]), 5) + 1))
    return p, int(rng.choice(legal))


def play(g: MegaGem, s, rng: np.random.Generator, steps: int | None = None) -> None:
    """Random legal decisions until the end (or ``steps`` decisions)."""
    k = 0
    while not g.is_over(s) and (steps is None or k < steps):
        g.apply(s, *choose(g, s, rng))
        k += 1


def snapshots(g: MegaGem, seed: int) -> list:
    """Copies of the state before every decision of one random game, and at its end."""
    s, rng, out = g.new_state(seed), np.random.default_rng(seed + 1000), []
    while True:
        out.append(s.copy())
        if g.is_over(s):
            return out
        g.apply(s, *choose(g, s, rng))


def via_json(g: MegaGem, s):
    return g.state_from_dict(json.loads(json.dumps(s.to_dict())))


# ============================================================================ copy and equality

def test_copy_is_independent():
    g = MegaGem()
    s = g.new_state(11)
    play(g, s, np.random.default_rng(0), steps=30)
    before = json.dumps(s.to_dict())
    c = s.copy()
    assert c == s
    assert c.hands is not s.hands and c.hands[0] is not s.hands[0] and c.rng is not s.rng
    assert c.history[0] is not s.history[0] and c.history[0].bids is not s.history[0].bids
    assert c.investments is not s.investments
    # change everything in the copy: the original does not move
    play(g, c, np.random.default_rng(1))
    c.history[0].bids[0] += 7
    c.rng.integers(100, size=10)
    assert json.dumps(s.to_dict()) == before
    # and the other way round
    c2 = s.copy()
    snap = json.dumps(c2.to_dict())
    play(g, s, np.random.default_rng(2))
    s.hands[0][0] += 1
    assert json.dumps(c2.to_dict()) == snap


def test_equality():
    g = MegaGem()
    assert g.new_state(5) == g.new_state(5)
    assert g.new_state(5) != g.new_state(6)
    s = g.new_state(5)
    c = s.copy()
    assert c == s and via_json(g, s) == s
    g.apply(c, 0, 1)
    assert c != s
    c = s.copy()
    c.rng.random()  # the RNG is part of the state: a different generator state is a different state
    assert c != s
    c = s.copy()
    c.coins[2] -= 1
    assert c != s
    assert s != s.to_dict() and s != None  # noqa: E711


def test_copy_draws_the_same_random_numbers():
    g = MegaGem()
    s = g.new_state(8)
    c, r = s.copy(), via_json(g, s)
    draws = [x.rng.integers(0, 2**62, size=6).tolist() for x in (s, c, r)]
    assert draws[0] == draws[1] == draws[2]


# ============================================================================ JSON round trip

@pytest.mark.parametrize("config", CONFIGS, ids=["default", "3p-queue-random", "5p-options"])
def test_json_round_trip_is_exact_at_every_decision(config):
    g = MegaGem(**config)
    seen = set()
    for seed in (0, 1):
        for s in snapshots(g, seed):
            d = s.to_dict()
            text = json.dumps(d, allow_nan=False)
            r = g.state_from_dict(json.loads(text))
            assert r == s
            assert json.dumps(r.to_dict(), allow_nan=False) == text
            assert r.to_dict() == d
            partial = s.phase == BID and any(b is not None for b in s.bids)
            seen.add((s.phase, partial))
    assert seen == {(BID, False), (BID, True), (REVEAL, False), (OVER, False)}


def test_to_dict_is_a_snapshot():
    # Changing the dict must not change the state, and a state built from a dict shares nothing with it.
    g = MegaGem()
    s = g.new_state(4)
    play(g, s, np.random.default_rng(4), steps=40)
    before = json.dumps(s.to_dict())
    d = s.to_dict()
    d["history"][0]["bids"][0] += 5
    d["history"][0]["gems"].append(0)
    d["hands"][0][0] += 1
    d["rng"]["state"]["state"] += 1
    for inv in d["investments"]:
        inv.append([5, 5])
    assert json.dumps(s.to_dict()) == before
    d = s.to_dict()
    r = g.state_from_dict(d)
    d["history"][0]["bids"][0] += 5
    d["coins"][0] += 5
    d["collections"][1][1] += 1
    d["tie_queue"].append(9)
    assert json.dumps(r.to_dict()) == before


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "3p-queue-random", "5p-options"])
def test_copied_and_restored_states_continue_identically(config):
    g = MegaGem(**config)
    for seed in (2, 3):
        for steps in (0, 13, 41):
            s = g.new_state(seed)
            play(g, s, np.random.default_rng(seed), steps=steps)
            c, r = s.copy(), via_json(g, s)
            for x in (s, c, r):
                play(g, x, np.random.default_rng(77))
            assert s == c == r
            assert g.results(s) == g.results(c) == g.results(r)


def test_restored_state_breaks_a_first_auction_tie_the_same_way():
    # The first auction's tie is drawn from the state's RNG: a restored copy must draw the same.
    g = MegaGem()
    winners = set()
    for seed in range(12):
        s = g.new_state(seed)
        r = via_json(g, s)
        for x in (s, r):
            for p in range(4):
                g.apply(x, p, 0)
        assert s.history[0].winner == r.history[0].winner and s == r
        winners.add(s.history[0].winner)
    assert len(winners) > 1


# ============================================================================ rejection

def _find(g: MegaGem, want) -> dict:
    """The dict of the first state of some random game that satisfies ``want``."""
    for seed in range(200):
        for s in snapshots(g, seed):
            if want(s):
                return s.to_dict()
    raise AssertionError("no such state found")


def _rich_bid(s) -> bool:
    kinds = {AUCTION_TYPE[r.card] for r in s.history}
    return (s.phase == BID and any(b is not None for b in s.bids) and any(b is None for b in s.bids)
            and len(s.gem_deck) >= 2 and kinds == {"treasure", "loan", "invest"}
            and any(r.revealed >= 0 for r in s.history) and any(o >= 0 for o in s.mission_owner)
            and -1 in s.mission_owner and any(not x for x in s.loans)
            and any(len(set(r.bids)) > 1 for r in s.history))


_BASES = {}


def base(kind: str) -> dict:
    """A deep copy of a cached state dict of the given kind."""
    if kind not in _BASES:
        if kind == "bid":
            _BASES[kind] = _find(MegaGem(), _rich_bid)
        elif kind == "reveal":
            _BASES[kind] = _find(MegaGem(), lambda s: s.phase == REVEAL and len(s.history) >= 3)
        elif kind == "over":
            _BASES[kind] = _find(MegaGem(), lambda s: s.phase == OVER)
        elif kind == "queue":
            _BASES[kind] = _find(MegaGem(tie_break="queue"), lambda s: s.phase == BID and len(s.history) >= 2)
    return copy.deepcopy(_BASES[kind])


GAMES = {"bid": MegaGem(), "reveal": MegaGem(), "over": MegaGem(), "queue": MegaGem(tie_break="queue")}


def _revealed(d) -> list[int]:
    return [sum(1 for r in d["history"] if r["revealed"] == c) for c in range(5)]


def _move_hand_gem(d):
    p = next(p for p, h in enumerate(d["hands"]) if sum(h))
    c = next(c for c in range(5) if d["hands"][p][c])
    d["hands"][p][c] -= 1
    d["hands"][(p + 1) % d["num_players"]][c] += 1


def _deck_to(where):
    def mutate(d):
        c = d["gem_deck"].pop()
        if where == "display":
            d["display"][c] += 1
        else:
            d["collections"][0][c] += 1
    return mutate


def _final_display_to(where):
    def mutate(d):
        rev = _revealed(d)
        c = next(c for c in range(5) if d["display"][c] > rev[c])
        d["display"][c] -= 1
        if where == "hand":
            d["hands"][0][c] += 1
        else:
            d["gem_deck"].append(c)
    return mutate


def _claim_unmet(d):
    i = d["mission_owner"].index(-1)
    p = next(p for p in range(d["num_players"]) if not mission_met(d["missions"][i], d["collections"][p], "any"))
    d["mission_owner"][i] = p


def _unclaim(d):
    i = next(i for i, o in enumerate(d["mission_owner"]) if o >= 0)
    d["mission_owner"][i] = -1


def _winner_not_top(d):
    r = next(r for r in d["history"] if len(set(r["bids"])) > 1)
    r["winner"] = r["bids"].index(min(r["bids"]))


def _gems_on_a_loan(d):
    r = next(r for r in d["history"] if AUCTION_TYPE[r["card"]] != "treasure")
    r["gems"] = [0]


def _loan_for_nothing(d):
    p = next(p for p, x in enumerate(d["loans"]) if not x)
    d["loans"][p].append(10)


def _bid_over_limit(d):
    p = d["bids"].index(None)
    loan = AUCTION_AMOUNT[d["auction_card"]] if AUCTION_TYPE[d["auction_card"]] == "loan" else 0
    d["bids"][p] = d["coins"][p] + loan + 1


def _all_bids_in(d):
    d["bids"] = [0 if b is None else b for b in d["bids"]]


def _negative_bid(d):
    p = next(p for p, b in enumerate(d["bids"]) if b is not None)
    d["bids"][p] = -1


def _other_revealer(d):
    w = d["winner"]
    d["winner"] = next(p for p in range(d["num_players"]) if p != w and sum(d["hands"][p]))


def _set(key, value):
    def mutate(d):
        d[key] = value
    return mutate


def _edit(fn):
    def mutate(d):
        fn(d)
    return mutate


REJECTIONS = [
    # (case id, base kind, mutation, what the message must say)
    ("not-a-dict", "bid", lambda d: [], "expected a dict"),
    ("missing-key", "bid", _edit(lambda d: d.pop("coins")), r"missing \['coins'\]"),
    ("missing-rng", "bid", _edit(lambda d: d.pop("rng")), r"missing \['rng'\]"),
    ("unknown-key", "bid", _set("score", 0), r"unknown \['score'\]"),
    ("num-players-mismatch", "bid", _set("num_players", 3), "num_players is 3"),
    ("num-players-type", "bid", _set("num_players", "4"), "num_players must be an integer"),
    ("chart-unknown", "bid", _set("chart", "Z"), "chart 'Z' is not one of"),
    ("chart-vs-option", "bid", _set("chart", "B"), "differs from option"),
    ("coins-not-list", "bid", _set("coins", 25), "coins must be a list"),
    ("coins-str", "bid", _edit(lambda d: d["coins"].__setitem__(0, str(d["coins"][0]))), "coins must hold integers"),
    ("coins-float", "bid", _edit(lambda d: d["coins"].__setitem__(1, float(d["coins"][1]))), "coins must hold integers"),
    ("coins-bool", "bid", _edit(lambda d: d["coins"].__setitem__(1, True)), "coins must hold integers"),
    ("coins-length", "bid", _edit(lambda d: d["coins"].pop()), "coins must have length 4"),
    ("hands-type", "bid", _set("hands", None), "hands must be a list"),
    ("hand-negative", "bid", _edit(lambda d: d["hands"][0].__setitem__(0, -1)), "hand must hold values >= 0"),
    ("gem-duplicated", "bid", _edit(lambda d: d["gem_deck"].append(d["gem_row"][0])), r"colour \d has 7 gems in play"),
    ("gem-lost", "bid", _edit(lambda d: d["gem_deck"].pop()), r"colour \d has 5 gems in play"),
    ("gem-colour", "bid", _edit(lambda d: d["gem_deck"].__setitem__(0, 7)), "gem colours must be < 5"),
    ("row-of-three", "bid", _edit(lambda d: d["gem_row"].append(d["gem_deck"].pop(0))), "gem_row holds at most 2"),
    ("row-not-refilled", "bid", _edit(lambda d: d["gem_deck"].insert(0, d["gem_row"].pop())), "gem_row must hold 2 gems"),
    ("gem-moved-between-hands", "bid", _move_hand_gem, r"holds \d gem cards in hand, its reveals leave \d"),
    ("collection-vs-history", "bid", _deck_to("collection"), "player 0's collection does not match"),
    ("display-vs-history", "bid", _deck_to("display"), "display does not match the gems revealed"),
    ("coins-vs-history", "bid", _edit(lambda d: d["coins"].__setitem__(0, d["coins"][0] + 1)),
     r"player 0 has \d+ coins, its auctions account for \d+"),
    ("loans-vs-history", "bid", _loan_for_nothing, "loans/investments do not match"),
    ("phase-unknown", "bid", _set("phase", "bidding"), "phase 'bidding' is not one of"),
    ("phase-type", "bid", _set("phase", None), "phase None is not one of"),
    ("phase-over-while-bidding", "bid", _set("phase", "over"), "auction_card is -1 exactly when the game is over"),
    ("phase-reveal-while-bidding", "bid", _set("phase", "reveal"), r"round \d+ does not match"),
    ("round-off", "bid", _edit(lambda d: d.__setitem__("round", d["round"] + 1)), r"round \d+ does not match"),
    ("round-type", "bid", _edit(lambda d: d.__setitem__("round", str(d["round"]))), "round must be an integer"),
    ("auction-card-range", "bid", _set("auction_card", 9), r"auction_card must be -1\.\.5"),
    ("auction-card-extra", "bid", _edit(lambda d: d["auction_deck"].append(0)), "auction card kind 0 is not accounted for"),
    ("auction-card-id", "bid", _edit(lambda d: d["auction_deck"].append(6)), "auction card ids must be < 6"),
    ("missions-duplicate", "bid", _edit(lambda d: d["missions"].__setitem__(1, d["missions"][0])), "4 distinct ids"),
    ("mission-id", "bid", _edit(lambda d: d["missions"].__setitem__(1, 30)), "4 distinct ids < 30"),
    ("mission-owner-range", "bid", _edit(lambda d: d["mission_owner"].__setitem__(0, 4)), "mission_owner must be -1 or a seat"),
    ("mission-claimed-unmet", "bid", _claim_unmet, r"is claimed by player \d, whose collection does not meet it"),
    ("mission-met-unclaimed", "bid", _unclaim, "should have been claimed"),
    ("history-malformed", "bid", _edit(lambda d: d["history"][0].pop("gems")), "malformed history entry"),
    ("history-winner", "bid", _winner_not_top, "must hold the top bid"),
    ("history-card", "bid", _edit(lambda d: d["history"][0].__setitem__("card", 8)), "history card id out of range"),
    ("history-loan-gems", "bid", _gems_on_a_loan, "buys no gems"),
    ("history-bid-over-coins", "bid", _edit(lambda d: d["history"][0]["bids"].__setitem__(d["history"][0]["winner"], 99)),
     "a history bid exceeds what its player could bid"),
    ("bid-negative", "bid", _negative_bid, "bids must be None or integers >= 0"),
    ("bid-over-limit", "bid", _bid_over_limit, "a bid exceeds its player's limit"),
    ("bids-all-in", "bid", _all_bids_in, "should have been resolved"),
    ("bids-length", "bid", _edit(lambda d: d["bids"].append(None)), "one entry per player"),
    ("winner-while-bidding", "bid", _set("winner", 2), "winner must be -1 while bidding"),
    ("winner-float", "bid", _set("winner", -1.0), "winner must be an integer"),
    ("last-winner", "bid", _edit(lambda d: d.__setitem__("last_winner", (d["last_winner"] + 1) % 4)),
     "last_winner must be the last auction's winner"),
    ("tie-queue-rulebook", "bid", _set("tie_queue", [0, 1, 2, 3]), "tie_queue must be empty"),
    ("tie-queue-not-permutation", "queue", _set("tie_queue", [0, 0, 1, 2]), "tie_queue must be a permutation"),
    ("rng-none", "bid", _set("rng", None), "rng state"),
    ("rng-unknown-generator", "bid", _edit(lambda d: d["rng"].__setitem__("bit_generator", "seed")), "rng state"),
    ("rng-state-type", "bid", _edit(lambda d: d["rng"]["state"].__setitem__("state", "x")), "rng state"),
    ("rng-state-range", "bid", _edit(lambda d: d["rng"]["state"].__setitem__("state", -1)), "rng state"),
    ("rng-incomplete", "bid", _edit(lambda d: d["rng"].pop("state")), "rng state"),
    ("reveal-other-winner", "reveal", _other_revealer, "the revealing winner must be the last auction's winner"),
    ("reveal-already-revealed", "reveal", _edit(lambda d: d["history"][-1].__setitem__("revealed", 0)), "already has a reveal"),
    ("reveal-with-bids", "reveal", _set("bids", [0, 0, 0, 0]), "bids must be empty outside bidding"),
    ("over-hand-left", "over", _final_display_to("hand"), "all hands are revealed at the end"),
    ("over-gem-unsold", "over", _final_display_to("deck"), "every gem has been sold"),
    ("over-winner", "over", _set("winner", 0), "winner must be -1 when over"),
]


@pytest.mark.parametrize("kind", ["bid", "reveal", "over", "queue"])
def test_bases_are_accepted(kind):
    d = base(kind)
    assert GAMES[kind].state_from_dict(d).to_dict() == d


@pytest.mark.parametrize("case, kind, mutate, message", REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_state_from_dict_rejects(case, kind, mutate, message):
    d = base(kind)
    out = mutate(d)
    if out is not None:
        d = out
    with pytest.raises(StateError, match=message) as err:
        GAMES[kind].state_from_dict(d)
    assert str(err.value).startswith("invalid MegaGem state: ")
    assert isinstance(err.value, ValueError)


def test_unknown_rng_name_is_not_called(monkeypatch):
    # A bit generator name must never be looked up and called on numpy.random blindly
    # (e.g. "seed" would reseed the global generator).
    called = []
    monkeypatch.setattr(np.random, "seed", lambda *a: called.append(a))
    d = base("bid")
    d["rng"]["bit_generator"] = "seed"
    with pytest.raises(StateError):
        MegaGem().state_from_dict(d)
    assert called == []
