"""GEM rules, scenario by scenario, each outcome traced by hand from the rulebook.

Sources: the GEM rulebook (``rules/001_5307ad0530dc1182.txt``) and the GEM section of
``rules/CLARIFICATIONS.md`` (which wins where they differ); "C4" below means GEM clarification 4.

Games start from a hand-picked deal (:func:`start`) and are driven only through
``Gem.apply`` (the core engine, which also plays and logs the forced decisions). Seat ``i+1`` sits to the left (clockwise) of seat ``i``. With the default
manifest the gem cards are: 0-2 Diamond (value 2, cost 1); 3-7 the pairs Sapphire, Ruby,
Emerald, Amethyst, Topaz (value 4, cost 3); 8-17 the mixed pairs (value 3, cost 2):
8 Sa+Ru, 9 Sa+Em, 10 Sa+Am, 11 Sa+To, 12 Ru+Em, 13 Ru+Am, 14 Ru+To, 15 Em+Am, 16 Em+To, 17 Am+To.
Coin cards are indexed 0, 1, 2 for the coins 1, 2, 3.
"""
from __future__ import annotations

import copy
import json

import pytest

import numpy as np

from gemenvs.core.engine import IllegalActionError, StateError
from gemenvs.gem import Gem, ManifestError, load_manifest
from gemenvs.gem import rules
from gemenvs.gem.data import DEFAULT_MANIFEST
from gemenvs.gem.rules import BID, OVER, PASSED, PAY, REINVEST, TAKE

SA, RU, EM, AM, TO, DI = range(6)
#: a 3-player deal: round r turns up DEAL3[r-1]
DEAL3 = [[0, 3, 8], [1, 4, 9], [2, 5, 10], [6, 11, 12], [7, 13, 14], [15, 16, 17]]


def start(n=3, deal=None, **options):
    """A game at the first bid of round 1 over ``deal`` (default: DEAL3 for 3 players)."""
    g = Gem(num_players=n, **options)
    s = rules.state_from_deal(g.cfg, deal or DEAL3)
    return g, s


class Act:
    """Readable action ids for one game, from its action spec."""

    def __init__(self, g: Gem):
        self.spec = g.action_spec

    def bid(self, x):
        return self.spec["bid"][x]

    @property
    def pass_(self):
        return self.spec["pass"][0]

    def take(self, c):
        return self.spec["take"][c]

    def coin(self, value):
        return self.spec["pay_coin"][value - 1]

    def card(self, c):
        return self.spec["pay_card"][c]

    def reinvest(self, c):
        return self.spec["reinvest"][c]

    @property
    def end(self):
        return self.spec["end"][0]


def legal(g, s):
    """The legal action ids of the seat to act, as a list."""
    return [int(a) for a in g.legal_actions(s, s.current)]


def play(g, s, steps):
    """Apply ``(seat, action)`` steps, checking each seat is the one to act."""
    for seat, action in steps:
        assert g.to_act(s) == (seat,), f"expected seat {seat} to act, engine says {g.to_act(s)}"
        g.apply(s, seat, action)


def autos(s, since=0):
    """The (seat, action) pairs the engine played by itself in ``s.log[since:]``."""
    return [(p, a) for p, a, auto in s.log[since:] if auto]


# ----------------------------------------------------------------------------- manifest (C1, C2)

def test_default_manifest_matches_clarifications():
    m = load_manifest()
    assert m.gem_types == ("Sapphire", "Ruby", "Emerald", "Amethyst", "Topaz", "Diamond")
    assert m.coin_values == (1, 2, 3)
    assert m.num_cards == 18
    kinds = sorted((len(set(g)), len(g), v, c) for g, v, c in zip(m.card_gems, m.card_value, m.card_cost))
    # 3 single Diamonds (2/1), 5 same-colour pairs (4/3), 10 mixed pairs (3/2)
    assert kinds.count((1, 1, 2, 1)) == 3 and kinds.count((1, 2, 4, 3)) == 5 and kinds.count((2, 2, 3, 2)) == 10
    assert all(m.card_gems[c] == (DI,) for c in range(3))
    assert m.gems_of_type == (6, 6, 6, 6, 6, 3)  # each colour on six gem slots, 3 Diamonds
    mixed = {tuple(sorted(g)) for g in m.card_gems if len(set(g)) == 2}
    assert len(mixed) == 10  # one card per pair of colours
    assert m.stacks[2] == m.stacks[4] == (4, 3, 3, 3, 3, 2) and m.stacks[3] == (3,) * 6


def _manifest_dict():
    with open(DEFAULT_MANIFEST, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("breakage, message", [
    (lambda d: d.pop("stacks"), "missing \\['stacks'\\]"),
    (lambda d: d.update(format="other"), "format must be"),
    (lambda d: d["gem_cards"][3].update(gems=["Opal", "Opal"]), "gem_cards\\[3\\].gems names 'Opal'"),
    (lambda d: d["gem_cards"][5].update(invested=0), "gem_cards\\[5\\].invested"),
    (lambda d: d["gem_cards"][5].update(reinvest_cost=5), "gem_cards\\[5\\].reinvest_cost"),
    (lambda d: d["gem_cards"][7].update(id=8), "gem_cards\\[7\\] has id 8"),
    (lambda d: d["stacks"].update({"3": [3, 3, 3]}), "stacks\\['3'\\] deals 9 cards"),
    (lambda d: d.update(coin_cards=[1, True]), "coin_cards values"),
    (lambda d: d.update(gem_types=["Sapphire", "Sapphire"]), "distinct"),
])
def test_malformed_manifest_is_a_clear_error(breakage, message):
    d = _manifest_dict()
    breakage(d)
    with pytest.raises(ManifestError, match=message):
        Gem(manifest=d)


def test_manifest_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(ManifestError, match="not valid JSON"):
        Gem(manifest=str(bad))
    with pytest.raises(ManifestError, match="cannot read"):
        Gem(manifest=str(tmp_path / "missing.json"))


def test_a_different_manifest_is_an_option(tmp_path):
    d = _manifest_dict()
    d["coin_cards"] = [1, 1, 2, 2]
    d["gem_cards"] = d["gem_cards"][:12]
    d["stacks"] = {"2": [4, 4, 4], "3": [3, 3, 3, 3], "4": [4, 4, 4]}
    path = tmp_path / "small.json"
    path.write_text(json.dumps(d))
    g = Gem(num_players=3, manifest=str(path))
    assert g.manifest.num_cards == 12 and g.cfg.num_rounds == 4 and g.manifest.num_coins == 4
    # bids 0..(6 coins + 3 Diamonds x 2 + 5 pairs x 4 + 4 mixed x 3 = 44), pass, 3 x 12 card actions,
    # 4 coin payments, end
    assert g.action_spec["bid"].size == 45 and g.num_actions == 45 + 1 + 36 + 4 + 1
    # repeated coin values get their index in the label
    assert g.action_spec.label(g.action_spec["pay_coin"][1]) == "pay_coin[1 (coin card 1)]"
    s = g.new_state(5)
    while not g.is_over(s):
        g.apply(s, s.current, legal(g, s)[-1])
    assert sum(s.owner[c] >= 0 for c in range(12)) == 12


def test_option_validation():
    with pytest.raises(ValueError, match="num_players"):
        Gem(num_players=5)
    with pytest.raises(ValueError, match="num_players"):
        Gem(num_players=1)
    with pytest.raises(ValueError, match="reinvest_cost"):
        Gem(reinvest_cost="free")
    with pytest.raises(ValueError, match="opener_may_pass"):
        Gem(opener_may_pass="yes")
    with pytest.raises(ValueError, match="manifest"):
        Gem(manifest=42)


# ----------------------------------------------------------------------------- setup (C3)

@pytest.mark.parametrize("n, sizes", [(2, [4, 3, 3, 3, 3, 2]), (3, [3] * 6), (4, [4, 3, 3, 3, 3, 2])])
def test_setup_stacks_and_coins(n, sizes):
    g = Gem(num_players=n)
    s = g.new_state(11)
    deal = rules.deal_stacks(g.cfg, 11)
    assert [len(x) for x in deal] == sizes
    assert sorted(c for x in deal for c in x) == list(range(18))
    assert s.seed == 11 and s.round == 1 and s.face_up == sorted(deal[0]) and s.stacks == deal[1:]
    assert s.coins == [[True] * 3 for _ in range(n)]  # 1, 2, 3 coin cards, INVESTED
    assert s.owner == [-1] * 18
    assert s.phase == BID and s.current == 0 and s.opener == 0  # seat 0 is left of the dealer


def test_deal_depends_on_seed_only():
    g = Gem()
    assert g.new_state(3) == g.new_state(3)
    assert g.new_state(3).stacks != g.new_state(4).stacks


# ----------------------------------------------------------------------------- auctions (C4-C6)

def test_once_around_bidding_and_passing():
    g, s = start()
    a = Act(g)
    # seat 0 opens with 1, seat 1 passes, seat 2 bids 3: everyone has bid once, seat 2 wins
    play(g, s, [(0, a.bid(1)), (1, a.pass_)])
    assert s.bids == [1, PASSED, None]
    assert g.why_illegal(s, 2, a.bid(1)) == "bid 1 does not beat the highest bid 1"
    assert g.why_illegal(s, 2, a.bid(7)) == "bid 7 exceeds the 6 that the player's INVESTED cards can pay"
    assert g.why_illegal(s, 0, a.bid(5)) == "it is not player 0's decision (to act: 2)"
    play(g, s, [(2, a.bid(3))])
    assert s.phase == PAY and s.winner == 2 and s.owed == 3 and s.current == 2
    # the bidding did not go around again: seats 0 and 1 get no second bid
    with pytest.raises(IllegalActionError):
        g.apply(s, 0, a.bid(4))


def test_opener_must_bid_and_wins_when_all_pass():
    g, s = start()
    a = Act(g)
    assert g.why_illegal(s, 0, a.pass_) == "the opening bidder must bid (0 or more); opener_may_pass is False"
    assert g.legal_mask(s, 0)[a.pass_] == 0
    # the opener bids 0, both others pass: a bid of 0 wins and pays nothing (rulebook step 3)
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_)])
    assert s.phase == TAKE and s.winner == 0 and s.owed == 0
    play(g, s, [(0, a.take(3))])
    assert s.coins[0] == [True, True, True] and s.owner[3] == 0 and not s.invested[3]
    # next auction: the player after the winner opens; opener bids 2, others pass: it pays 2
    assert s.opener == 1 and s.current == 1
    play(g, s, [(1, a.bid(2)), (2, a.pass_), (0, a.pass_)])
    assert s.phase == PAY and s.winner == 1 and s.owed == 2


def test_opener_may_pass_option():
    g, s = start(opener_may_pass=True)
    a = Act(g)
    assert g.why_illegal(s, 0, a.pass_) is None
    # the opener passes: the next bidder may now bid 0
    play(g, s, [(0, a.pass_)])
    assert g.legal_mask(s, 1)[a.bid(0)] == 1
    # when everybody passes, the opener takes a card for nothing
    play(g, s, [(1, a.pass_), (2, a.pass_)])
    assert s.phase == TAKE and s.winner == 0 and s.owed == 0


def test_payment_one_card_at_a_time_without_change():
    g, s = start()
    a = Act(g)
    play(g, s, [(0, a.bid(4)), (1, a.pass_), (2, a.pass_)])
    assert s.phase == PAY and s.owed == 4
    # only the winner's INVESTED cards may pay; nothing else is legal
    assert g.why_illegal(s, 0, a.take(0)).startswith("the winner must pay its bid (4 left)")
    play(g, s, [(0, a.coin(3))])
    assert s.phase == PAY and s.owed == 1 and s.coins[0] == [True, True, False]
    assert g.why_illegal(s, 0, a.coin(3)) == "coin card 3 is LEVERAGED already"
    # 3 + 2 = 5 covers 4: the payment ends at once, no change, the coin 1 stays INVESTED
    play(g, s, [(0, a.coin(2))])
    assert s.phase == TAKE and s.owed == 0 and s.coins[0] == [True, False, False]


def test_full_round_with_forced_decisions_and_reinvestment_order():
    g, s = start()
    a = Act(g)
    # auction 1: seat 2 wins at 3 paying with its coin 3, takes the Sapphire pair LEVERAGED
    play(g, s, [(0, a.bid(1)), (1, a.pass_), (2, a.bid(3)), (2, a.coin(3)), (2, a.take(3))])
    assert s.owner[3] == 2 and not s.invested[3]
    assert s.opener == 0 and s.face_up == [0, 8]
    # auction 2: seat 0 bids 2, seat 1 bids 5; seat 2 can pay only 1 + 2 = 3, so its pass is forced
    mark = len(s.log)
    play(g, s, [(0, a.bid(2)), (1, a.bid(5))])
    assert autos(s, mark) == [(2, a.pass_)]
    assert s.phase == PAY and s.winner == 1 and s.owed == 5
    play(g, s, [(1, a.coin(3)), (1, a.coin(2)), (1, a.take(8))])
    # auction 3 (last card): seat 2 opens and must bid; with 0 and two passes it wins for free,
    # and taking the only face-up card is forced
    assert s.opener == 2
    mark = len(s.log)
    play(g, s, [(2, a.bid(0)), (0, a.pass_), (1, a.pass_)])
    assert autos(s, mark) == [(2, a.take(0))]
    # reinvestment starts with the winner of the round's last card (seat 2), then clockwise
    assert s.phase == REINVEST and s.current == 2 and s.reinvest_first == 2
    play(g, s, [(2, a.coin(2)), (2, a.reinvest(0))])
    assert s.invested[0] and s.credit == 1
    assert g.why_illegal(s, 2, a.reinvest(3)) == "gem card 3 (Sapphire+Sapphire) costs 3, credit is 1"
    # seat 2 pays its last coin (credit 2 < 3) and has nothing left to do: its phase ends; seat 0
    # holds no gem card, so its phase ends by itself too
    mark = len(s.log)
    play(g, s, [(2, a.coin(1))])
    assert autos(s, mark) == [(2, a.end), (0, a.end)]
    # seat 1 pays its coin 1 (credit 1 < 2), after which ending is its only choice
    assert s.current == 1 and s.credit == 0
    mark = len(s.log)
    play(g, s, [(1, a.coin(1))])
    assert autos(s, mark) == [(1, a.end)]
    # round 2: every coin card INVESTED again, opened by the player after the last winner (seat 2)
    assert s.round == 2 and s.phase == BID and s.opener == 0 and s.face_up == [1, 4, 9]
    assert s.coins == [[True] * 3 for _ in range(3)]
    assert s.invested[0] and not s.invested[3] and not s.invested[8]


def test_pooled_credit_split_over_several_cards_and_lost_at_the_end():
    g, s = start()
    a = Act(g)
    # seat 0 wins the Diamond (0) and the Sapphire+Ruby (8) for 0 each; seat 1 takes the pair for 0
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(3))])
    play(g, s, [(2, a.bid(0)), (0, a.bid(1)), (1, a.pass_), (0, a.coin(1))])
    # seat 0 won the last card: it reinvests first
    assert s.phase == REINVEST and s.current == 0 and s.owner[8] == 0
    assert g.why_illegal(s, 0, a.reinvest(0)) == "gem card 0 (Diamond) costs 1, credit is 0"
    # one coin 3 pays for both: Diamond (1) + Sapphire+Ruby (2) = 3
    play(g, s, [(0, a.coin(3)), (0, a.reinvest(8)), (0, a.reinvest(0))])
    assert s.credit == 0 and s.invested[0] and s.invested[8]
    assert s.current == 1  # nothing left to reinvest: seat 0's phase ended by itself
    # seat 1: coins 1 + 2 pooled into 3 credit for the Sapphire pair
    play(g, s, [(1, a.coin(1)), (1, a.coin(2))])
    assert s.credit == 3
    play(g, s, [(1, a.reinvest(3))])  # its only target is reinvested: ending is forced
    assert s.invested[3] and s.phase == BID and s.round == 2


def test_leftover_credit_is_lost():
    g, s = start()
    a = Act(g)
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(3))])
    play(g, s, [(2, a.bid(0)), (0, a.pass_), (1, a.pass_)])  # seat 2 takes card 8 (forced)
    assert s.phase == REINVEST and s.current == 2
    play(g, s, [(2, a.coin(3)), (2, a.reinvest(8))])  # 3 credit, 2 spent, its only target: ends
    assert s.current == 0 and s.credit == 0
    play(g, s, [(0, a.coin(3)), (0, a.reinvest(0))])  # credit 2 left over, phase ends by itself
    assert s.current == 1 and s.credit == 0


def test_a_paying_card_cannot_be_reinvested_and_vice_versa():
    g, s = start()
    a = Act(g)
    # seat 0 holds the Diamond (0) INVESTED and the Sapphire pair (3) LEVERAGED, in reinvestment
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(8))])
    play(g, s, [(2, a.bid(0)), (0, a.bid(1)), (1, a.pass_), (0, a.coin(1))])
    play(g, s, [(0, a.coin(2)), (0, a.reinvest(0))])  # Diamond reinvested: credit 1
    assert s.invested[0] and s.reinvested == [0]
    # the card just reinvested may not pay in the same phase (rulebook: "NOT both")
    assert g.why_illegal(s, 0, a.card(0)) == \
        "gem card 0 (Diamond) was reinvested in this phase and cannot also pay"
    play(g, s, [(0, a.end), (1, a.end)])
    assert s.round == 2
    # on to the reinvestment of round 2, everyone taking cards for 0
    while s.phase != REINVEST:
        if s.phase == BID:
            play(g, s, [(s.current, a.bid(0) if s.current == s.opener else a.pass_)])
        else:
            play(g, s, [(s.current, legal(g, s)[0])])
    assert s.invested[0] and not s.invested[3] and s.owner[3] == 0
    while s.current != 0:
        play(g, s, [(s.current, a.end)])
    # seat 0 pays the INVESTED Diamond into credit (2): it cannot reinvest that same card
    play(g, s, [(0, a.card(0))])
    assert s.paid == [0] and s.credit == 2 and not s.invested[0]
    assert g.why_illegal(s, 0, a.reinvest(0)) == \
        "gem card 0 (Diamond) paid into credit in this phase and cannot be reinvested"
    assert g.legal_mask(s, 0)[a.reinvest(0)] == 0


def test_round_six_cards_arrive_invested_and_pay_at_once():
    g, s = start()
    a = Act(g)
    # everyone plays the cheapest line: opener bids 0, others pass, take the lowest card
    while s.round < 6:
        play(g, s, [(s.current, a.bid(0) if s.phase == BID and s.current == s.opener else
                     a.pass_ if s.phase == BID else a.end if s.phase == REINVEST else legal(g, s)[0])])
    assert all(not s.invested[c] for c in range(15) if s.owner[c] >= 0)  # rounds 1-5: LEVERAGED
    assert s.face_up == [15, 16, 17] and s.opener == s.current
    opener = s.opener
    play(g, s, [(opener, a.bid(0)), ((opener + 1) % 3, a.pass_), ((opener + 2) % 3, a.pass_),
                (opener, a.take(15))])
    assert s.owner[15] == opener and s.invested[15]  # round 6: INVESTED side up
    # ... and usable at once: the same seat bids its coins + that card (6 + 3) and pays with it
    nxt = s.current
    assert nxt == (opener + 1) % 3
    play(g, s, [(nxt, a.bid(0)), ((nxt + 1) % 3, a.pass_), (opener, a.bid(9))])
    assert s.winner == opener and s.owed == 9
    play(g, s, [(opener, a.card(15))])
    assert not s.invested[15] and s.owed == 6


def test_reinvest_cost_option():
    g, s = start(reinvest_cost="value")
    a = Act(g)
    assert g.cfg.card_cost == g.cfg.card_value
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(3))])
    play(g, s, [(2, a.bid(0)), (0, a.pass_), (1, a.pass_)])
    play(g, s, [(2, a.coin(2))])
    assert g.why_illegal(s, 2, a.reinvest(8)) == "gem card 8 (Sapphire+Ruby) costs 3, credit is 2"
    play(g, s, [(2, a.coin(1)), (2, a.reinvest(8))])
    assert s.invested[8]


def test_reinvestment_needs_something_to_reinvest():
    g, s = start()
    a = Act(g)
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(3))])
    play(g, s, [(2, a.bid(0)), (0, a.pass_), (1, a.pass_)])
    play(g, s, [(2, a.coin(3)), (2, a.reinvest(8))])
    play(g, s, [(0, a.coin(1)), (0, a.reinvest(0))])
    # seat 0 has nothing left to reinvest: ending was forced, and paying is refused
    assert s.current == 1
    s2 = s.copy()
    s2.current = 0
    assert g.why_illegal(s2, 0, a.coin(2)) == \
        "no LEVERAGED gem card left to reinvest in, so there is nothing to pay for"


# ----------------------------------------------------------------------------- scoring (C8)

def scored(n, held):
    """A finished game where ``held`` = {seat: [(card, invested), ...]}."""
    g = Gem(num_players=n)
    s = g.new_state(0)
    s.owner, s.invested = [-1] * 18, [False] * 18
    for p, cards in held.items():
        for c, inv in cards:
            s.owner[c], s.invested[c] = p, inv
    s.phase = OVER
    return g, s


def test_majorities_alone_shared_and_leveraged_cards_score_nothing():
    # seat 0: Sapphire pair + Diamond; seat 1: Sapphire+Ruby + Diamond; seat 2: Ruby+Emerald and a
    # LEVERAGED Ruby pair. Counts: Sa 2/1/0, Ru 0/1/1, Em 0/0/1, Di 1/1/0.
    g, s = scored(3, {0: [(3, True), (0, True)], 1: [(8, True), (1, True)], 2: [(12, True), (4, False)]})
    res = g.results(s)
    b = res.breakdown
    assert [x["gems"] for x in b] == [3, 3, 2]
    assert [x["majority_Sapphire"] for x in b] == [3, 0, 0]   # alone
    assert [x["majority_Ruby"] for x in b] == [0, 2, 2]       # shared (the LEVERAGED pair counts nothing)
    assert [x["majority_Emerald"] for x in b] == [0, 0, 3]
    assert [x["majority_Diamond"] for x in b] == [2, 2, 0]
    assert [x["majority_Amethyst"] + x["majority_Topaz"] for x in b] == [0, 0, 0]  # nobody holds any
    assert res.scores == [8.0, 7.0, 7.0] and res.winners == [0]
    assert all(x["total"] == x["gems"] + x["majorities"] for x in b)


def test_three_way_shared_majority():
    g, s = scored(3, {0: [(8, True)], 1: [(9, True)], 2: [(10, True)]})  # one Sapphire each
    assert [x["majority_Sapphire"] for x in g.results(s).breakdown] == [2, 2, 2]


def test_tiebreak_most_gems_then_shared():
    # seat 0: Ruby pair + Diamond = 3 gems + Ru 3 + Di 3 = 9; seat 1: Topaz pair = 2 + To shared 2 = 4;
    # seat 2: Amethyst+Topaz, Ruby+Topaz = 4 gems + To 2 + Am 3 = 9. 9 = 9: more gems wins -> seat 2
    g, s = scored(3, {0: [(4, True), (0, True)], 1: [(7, True)], 2: [(17, True), (14, True)]})
    res = g.results(s)
    assert res.scores == [9.0, 4.0, 9.0] and res.winners == [2]
    # equal points and equal gems: a shared win
    g, s = scored(2, {0: [(3, True)], 1: [(4, True)]})
    res = g.results(s)
    assert res.scores == [5.0, 5.0] and res.winners == [0, 1]


# ----------------------------------------------------------------------------- state as data

def test_state_round_trip_and_validation():
    g = Gem(num_players=3)
    s = g.new_state(9)
    for _ in range(40):
        g.apply(s, s.current, legal(g, s)[len(s.log) % len(legal(g, s))])
    d = s.to_dict()
    assert d["seed"] == 9 and d["log"] == s.log and json.loads(json.dumps(d)) == d
    t = g.state_from_dict(json.loads(json.dumps(d)))
    assert t == s and t is not s
    c = s.copy()
    assert c == s
    g.apply(c, c.current, legal(g, c)[0])
    assert c != s and s == t
    # the core replays seed and log; any field the replay does not give is named
    for field, change, message in [
        ("owner", lambda b: b["owner"].__setitem__(b["face_up"][0], 1), "field 'owner'"),
        ("credit", lambda b: b.update(credit=5), "field 'credit'"),
        ("coins", lambda b: b["coins"][0].__setitem__(0, 1), "field 'coins'"),  # 1 is not True
        ("log", lambda b: b["log"].__setitem__(0, [0, g.action_spec["pass"][0], 0]),
         "log\\[0\\]: player 0's action 63 is illegal in the replay: the opening bidder must bid"),
        ("round", lambda b: b.pop("round"), "missing \\['round'\\]"),
        ("stacks", lambda b: b.update(stacks=[tuple(x) for x in b["stacks"]]), "not JSON data"),
    ]:
        bad = copy.deepcopy(d)
        change(bad)
        with pytest.raises(StateError, match=message):
            g.state_from_dict(bad)
    with pytest.raises(StateError):
        Gem(num_players=4).state_from_dict(d)
    # a hand-picked deal has no seed that deals it: it cannot be replayed
    _, hand_picked = start()
    with pytest.raises(StateError, match="seed"):
        g.state_from_dict(hand_picked.to_dict())


def test_forced_decisions_are_logged_by_the_core_and_public():
    g, s = start()
    a = Act(g)
    # auction 3 of round 1 (see test_full_round...): taking the last face-up card is forced
    play(g, s, [(0, a.bid(0)), (1, a.pass_), (2, a.pass_), (0, a.take(0))])
    play(g, s, [(1, a.bid(0)), (2, a.pass_), (0, a.pass_), (1, a.take(3))])
    mark = len(s.log)
    play(g, s, [(2, a.bid(0)), (0, a.pass_), (1, a.pass_)])
    assert s.log[mark:] == [[2, a.bid(0), 0], [0, a.pass_, 0], [1, a.pass_, 0], [2, a.take(8), 1]]
    assert g.forced_is_public
    assert g.visible_log(s, 0)[-1] == (2, a.take(8), True)  # every seat may know it was forced


@pytest.mark.parametrize("n", [2, 3, 4])
def test_forced_action_agrees_with_the_mask(n):
    g = Gem(num_players=n, opener_may_pass=n == 3)
    rng = np.random.default_rng(n)
    s = g.new_state(n)
    while not g.is_over(s):
        # every decision the engine offers has a choice; check forced_action on a copy that
        # stops before the core plays a forced decision
        for p in range(n):
            mask = np.flatnonzero(g.legal_mask(s, p))
            assert g.forced_action(s, p) == (int(mask[0]) if mask.size == 1 else None)
        p = s.current
        acts = legal(g, s)
        c = s.copy()
        a = acts[rng.integers(len(acts))]
        g.play(c, p, a)  # the bare transition: may leave a forced decision pending
        if not g.is_over(c):
            mask = np.flatnonzero(g.legal_mask(c, c.current))
            assert g.forced_action(c, c.current) == (int(mask[0]) if mask.size == 1 else None)
        g.apply(s, p, a)


@pytest.mark.parametrize("seed", range(6))
def test_resample_hidden_redeals_only_the_face_down_stacks(seed):
    g = Gem(num_players=2 + seed % 3)
    s = g.new_state(seed)
    rng = np.random.default_rng(seed)
    for _ in range(rng.integers(0, 60)):
        if g.is_over(s):
            break
        acts = legal(g, s)
        g.apply(s, s.current, acts[rng.integers(len(acts))])
    before = s.copy()
    differs = False
    for k in range(5):
        r = g.resample_hidden(s, k % g.num_players, np.random.default_rng(100 + k))
        assert s == before, "resample_hidden changed the true state"
        assert [len(x) for x in r.stacks] == [len(x) for x in s.stacks]
        assert sorted(c for x in r.stacks for c in x) == sorted(c for x in s.stacks for c in x)
        for p in range(g.num_players):
            assert np.array_equal(g.observe(r, p), g.observe(s, p))
            assert np.array_equal(g.legal_mask(r, p), g.legal_mask(s, p))
            assert g.visible_log(r, p) == g.visible_log(s, p)
        differs |= r.stacks != s.stacks
        d, e = r.to_dict(), s.to_dict()
        assert {k: v for k, v in d.items() if k != "stacks"} == {k: v for k, v in e.items() if k != "stacks"}
    if sum(len(x) for x in s.stacks) >= 3:
        assert differs, "five redeals of three or more face-down cards all gave the true stacks"


def test_action_spec_labels_and_names():
    g = Gem()
    sp = g.action_spec
    assert sp.names == ["bid", "pass", "take", "pay_coin", "pay_card", "reinvest", "end"]
    assert sp.size == g.num_actions == 122
    assert [sp.label(a) for a in (0, 62, 63, 64 + 8, 84, 85, 103 + 17, 121)] == \
        ["bid[0]", "bid[62]", "pass", "take[8]", "pay_coin[3]", "pay_card[0]", "reinvest[17]", "end"]
    assert [g.action_name(a) for a in (5, 63, 72, 82, 86, 120, 121)] == [
        "bid 5", "pass", "take gem card 8 (Sapphire+Ruby)", "pay with coin card 1",
        "pay with gem card 1 (Diamond)", "reinvest gem card 17 (Amethyst+Topaz)", "end reinvestment"]
    # the layout does not depend on the player count
    assert all(Gem(num_players=n).action_spec == sp for n in (2, 4))


def test_engine_modules_do_not_import_pettingzoo():
    from pathlib import Path

    import gemenvs.gem

    for path in Path(gemenvs.gem.__file__).parent.glob("*.py"):
        if path.name != "env.py":
            assert "pettingzoo" not in path.read_text(), f"{path.name} imports PettingZoo"
