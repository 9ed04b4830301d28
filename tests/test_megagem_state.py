"""MegaGem states: copy, equality, the to_dict / state_from_dict JSON round trip (the core's
replay of seed and decision log), and rejection of malformed, non-JSON or unreachable dicts with a
short StateError that names the field or log entry at fault."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from gemenvs.megagem import MegaGem, StateError
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE
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

# ``MegaGem.state_from_dict`` is the core's generic one: it replays ``seed`` and ``log`` and
# requires every other field to be exactly what the replay gives. So every state no game can
# reach is rejected, each with a short StateError naming the field or log entry at fault.

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
            and -1 in s.mission_owner and any(f for _, _, f in s.log) and any(not f for _, _, f in s.log[1:]))


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


def _queue_winner_not_at_the_back(d):
    # tie_break="queue": every auction's winner goes to the back of the queue
    q = d["tie_queue"]
    q.remove(d["last_winner"])
    q.insert(0, d["last_winner"])


def _mission_to_another_player(d):
    i = next(i for i, o in enumerate(d["mission_owner"]) if o >= 0)
    d["mission_owner"][i] = (d["mission_owner"][i] + 1) % d["num_players"]


def _move_hand_gem(d):
    p = next(p for p, h in enumerate(d["hands"]) if sum(h))
    c = next(c for c in range(5) if d["hands"][p][c])
    d["hands"][p][c] -= 1
    d["hands"][(p + 1) % d["num_players"]][c] += 1


def _bid_over_limit(d):
    p = d["bids"].index(None)
    loan = AUCTION_AMOUNT[d["auction_card"]] if AUCTION_TYPE[d["auction_card"]] == "loan" else 0
    d["bids"][p] = d["coins"][p] + loan + 1


def _winner_not_top(d):
    r = next(r for r in d["history"] if len(set(r["bids"])) > 1)
    r["winner"] = r["bids"].index(min(r["bids"]))


def _flip_forced(flag: int):
    def mutate(d):
        k = next(k for k, e in enumerate(d["log"]) if e[2] == 1 - flag)
        d["log"][k][2] = flag
    return mutate


def _illegal_bid_in_log(d):
    k = next(k for k, e in enumerate(d["log"]) if not e[2])
    d["log"][k][1] = 10_000
    return d


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
    # the unreachable states
    ("queue-winner-not-at-back", "queue", _queue_winner_not_at_the_back, "field 'tie_queue'"),
    ("mission-to-another-player", "bid", _mission_to_another_player, "field 'mission_owner'"),
    ("junk-bids-when-over", "over", _set("bids", [3, None]), "field 'bids'"),
    # the shape of the dict
    ("not-a-dict", "bid", lambda d: [], "a megagem state is a dict with 'seed' and 'log'"),
    ("no-seed", "bid", _edit(lambda d: d.pop("seed")), "a dict with 'seed' and 'log'"),
    ("no-log", "bid", _edit(lambda d: d.pop("log")), "a dict with 'seed' and 'log'"),
    ("missing-key", "bid", _edit(lambda d: d.pop("coins")), r"missing \['coins'\]"),
    ("missing-rng", "bid", _edit(lambda d: d.pop("rng")), r"missing \['rng'\]"),
    ("unknown-key", "bid", _set("score", 0), r"unknown \['score'\]"),
    # the seed and the log
    ("seed-none", "bid", _set("seed", None), "seed must be an integer"),
    ("seed-negative", "bid", _set("seed", -1), "seed must be"),
    ("seed-bool", "bid", _set("seed", True), "seed must be"),
    ("seed-str", "bid", _set("seed", "7"), "seed must be"),
    ("other-seed", "bid", _edit(lambda d: d.__setitem__("seed", d["seed"] + 1)), r"log\[\d+\]|field '"),
    ("log-not-list", "bid", _set("log", {}), "log must be a list"),
    ("log-entry-short", "bid", _edit(lambda d: d["log"].__setitem__(0, [0, 1])), r"log\[0\] is \[0, 1\], not"),
    ("log-entry-float", "bid", _edit(lambda d: d["log"][0].__setitem__(1, 1.0)), r"log\[0\] is .*, not \[seat"),
    ("log-forced-flag-2", "bid", _edit(lambda d: d["log"][0].__setitem__(2, 2)), r"log\[0\] is .*forced 0/1"),
    ("log-illegal-action", "bid", _illegal_bid_in_log, r"log\[\d+\]: player \d's action 10000 is illegal in the replay"),
    ("log-choice-marked-forced", "bid", _flip_forced(1), r"log\[\d+\] is marked forced, but the replay offers a choice"),
    ("log-forced-marked-chosen", "bid", _flip_forced(0), r"log\[\d+\] differs from the replay"),
    ("log-cut", "bid", _edit(lambda d: d["log"].pop()), r"log\[\d+\] differs from the replay|field '"),
    # fields the replay does not give
    ("num-players-mismatch", "bid", _set("num_players", 3), "field 'num_players'"),
    ("chart-vs-option", "bid", _set("chart", "B"), "field 'chart'"),
    ("coins-off", "bid", _edit(lambda d: d["coins"].__setitem__(0, d["coins"][0] + 1)), "field 'coins'"),
    ("coins-float", "bid", _edit(lambda d: d["coins"].__setitem__(1, float(d["coins"][1]))), "field 'coins'"),
    ("coins-bool", "bid", _edit(lambda d: d["coins"].__setitem__(1, d["coins"][1] > 0)), "field 'coins'"),
    ("gem-moved-between-hands", "bid", _move_hand_gem, "field 'hands'"),
    ("gem-lost", "bid", _edit(lambda d: d["gem_deck"].pop()), "field 'gem_deck'"),
    ("deck-reordered", "bid", _edit(lambda d: d["gem_deck"].reverse() if len(set(d["gem_deck"])) > 1
                                    else d["gem_deck"].append(9)), "field 'gem_deck'"),
    ("auction-deck-reordered", "bid", _edit(lambda d: d["auction_deck"].insert(0, d["auction_deck"].pop())),
     "field 'auction_deck'"),
    ("phase-over-while-bidding", "bid", _set("phase", "over"), "field 'phase'"),
    ("round-off", "bid", _edit(lambda d: d.__setitem__("round", d["round"] + 1)), "field 'round'"),
    ("history-winner", "bid", _edit(lambda d: _winner_not_top(d)), "field 'history'"),
    ("bid-over-limit", "bid", _bid_over_limit, "field 'bids'"),
    ("bids-length", "bid", _edit(lambda d: d["bids"].append(None)), "field 'bids'"),
    ("winner-float", "bid", _set("winner", -1.0), "field 'winner'"),
    ("tie-queue-rulebook", "bid", _set("tie_queue", [0, 1, 2, 3]), "field 'tie_queue'"),
    ("rng-none", "bid", _set("rng", None), "field 'rng'"),
    ("rng-unknown-generator", "bid", _edit(lambda d: d["rng"].__setitem__("bit_generator", "seed")), "field 'rng'"),
    ("rng-advanced", "bid", _edit(lambda d: d["rng"]["state"].__setitem__("state", d["rng"]["state"]["state"] + 1)),
     "field 'rng'"),
    ("reveal-other-winner", "reveal", _edit(lambda d: d.__setitem__("winner", (d["winner"] + 1) % 4)), "field 'winner'"),
    ("reveal-with-bids", "reveal", _set("bids", [0, 0, 0, 0]), "field 'bids'"),
    ("over-hand-left", "over", _edit(lambda d: d["hands"][0].__setitem__(0, 1)), "field 'hands'"),
    # not JSON data
    ("numpy-int", "bid", _edit(lambda d: d["coins"].__setitem__(0, np.int64(d["coins"][0]))),
     r"state\.coins\[0\] holds a int64, which is not JSON data"),
    ("numpy-int-in-log", "bid", _edit(lambda d: d["log"][0].__setitem__(1, np.int32(d["log"][0][1]))),
     r"state\.log\[0\]\[1\] holds a int32"),
    ("tuple", "bid", _edit(lambda d: d.__setitem__("display", tuple(d["display"]))), r"state\.display holds a tuple"),
    ("nan", "bid", _edit(lambda d: d["hands"][1].__setitem__(0, float("nan"))), r"state\.hands\[1\]\[0\] is nan"),
    ("inf", "bid", _set("winner", float("inf")), r"state\.winner is inf"),
    ("int-key", "bid", _edit(lambda d: d["rng"].__setitem__(1, 2)), "state.rng has a non-string key 1"),
    ("numpy-array", "bid", _edit(lambda d: d.__setitem__("missions", np.array(d["missions"]))), "holds a ndarray"),
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
    assert isinstance(err.value, ValueError) and len(str(err.value)) <= 160, str(err.value)


def test_rejection_messages_do_not_echo_the_field():
    d = base("bid")
    d["gem_deck"] = d["gem_deck"] + [1] * 500
    d["log"].append(list(range(100)))
    with pytest.raises(StateError) as err:
        MegaGem().state_from_dict(d)
    assert len(str(err.value)) <= 160 and "1, 1, 1, 1" not in str(err.value) and "99" not in str(err.value)
    d = base("bid")
    d["gem_deck"] = d["gem_deck"] + [1] * 500
    with pytest.raises(StateError, match="field 'gem_deck'") as err:
        MegaGem().state_from_dict(d)
    assert len(str(err.value)) <= 160


def test_the_state_dict_holds_the_seed_and_every_decision():
    g = MegaGem(num_players=3)
    s = g.new_state(1234)
    play(g, s, np.random.default_rng(5))
    d = s.to_dict()
    assert d["seed"] == 1234 and d["log"] == s.log and d["log"] is not s.log
    assert all(isinstance(x, int) and not isinstance(x, bool) for e in d["log"] for x in e)
    assert len(d["log"]) == sum(len(r.bids) for r in s.history) + sum(r.revealed >= 0 for r in s.history)
    assert json.loads(json.dumps(d, allow_nan=False)) == d


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
