"""Gem Jam invariants over random games: every card in exactly one zone, valid sets, a legal
action for whoever is to act, determinism, JSON round trips, hidden-information resampling."""
from __future__ import annotations

import json
from collections import Counter
from itertools import chain

import numpy as np
import pytest

from gemenvs.gemjam import GemJam
from gemenvs.gemjam.rules import is_complete


def zones(g: GemJam, s) -> Counter:
    """Every card of the game, by kind, wherever it is."""
    cards = [*chain(*s.hands, *s.vaults), *s.draw, *s.discard, *s.king, *s.resolving, *s.transit]
    for shrine in s.shrines:
        for st in shrine:
            cards += st.gems
            if st.guarded:
                cards.append(g.manifest.guardian)
    cards += [e.kind for e in s.stack]
    if s.aside is not None:
        cards += s.aside.cards
    return Counter(cards)


def check(g: GemJam, s, deck: Counter) -> None:
    """The invariants of one state."""
    assert zones(g, s) == deck
    m = g.manifest
    for shrine in s.shrines:
        ids = [st.set_id for st in shrine]
        assert len(ids) == len(set(ids))
        for st in shrine:
            assert 0 < len(st.gems) <= g.cfg.set_size[st.gem_type]
            assert not st.guarded or is_complete(g.cfg, st)  # only complete sets are guarded
            assert all(m.is_gem[k] and (m.is_wild[k] or st.gem_type in m.types[k]) for k in st.gems)
    assert len(s.draw) == len(s.draw_seen) and s.plays >= 0
    if len(s.log) % 5 == 0:
        low, high = g.spec.bounds()
        for q in range(g.num_players):
            obs = g.observe(s, q)
            assert (obs >= low).all() and (obs <= high).all(), [
                x.name for x in g.spec.slices if not (obs[x.offset:x.stop] <= high[x.offset:x.stop]).all()]
    if not s.over:
        (p,) = g.to_act(s)
        assert g.legal_mask(s, p).sum() >= 2  # single choices are played by the engine
        for q in range(g.num_players):
            if q != p:
                assert not g.legal_mask(s, q).any()


def random_game(g: GemJam, seed: int, every=None):
    """Play a random game, calling ``every(state)`` after each decision; returns the final state."""
    rng = np.random.default_rng(seed)
    s = g.new_state(seed)
    while not g.is_over(s):
        p = g.to_act(s)[0]
        g.apply_legal(s, p, int(rng.choice(g.legal_actions(s, p))))
        if every is not None:
            every(s)
    return s


@pytest.mark.parametrize("players, options, games", [
    (2, {}, 12), (3, {}, 12), (4, {}, 12),
    (3, {"turn_decision_limit": 2, "sirens_call": True}, 8), (4, {"max_rounds": 4}, 8),
])
def test_random_games_keep_every_invariant(players, options, games):
    g = GemJam(num_players=players, **options)
    deck = Counter(g.cfg.deck)
    ends = Counter()
    for k in range(games):
        s = random_game(g, 100 * players + k, lambda s: check(g, s, deck))
        assert len(s.log) <= g.max_decisions and s.winners
        res = g.results(s)
        assert res.winners == s.winners and len(res.scores) == players
        ends[s.end_reason] += 1
    assert set(ends) <= {"four_sets", "deck_out", "max_rounds"}


def test_same_seed_and_actions_give_the_same_game_and_copies_continue_identically():
    g = GemJam()
    a, b = random_game(g, 5), random_game(g, 5)
    assert a == b and a.to_dict() == b.to_dict()
    s = g.new_state(9)
    rng = np.random.default_rng(1)
    for _ in range(200):
        p = g.to_act(s)[0]
        act = int(rng.choice(g.legal_actions(s, p)))
        c = s.copy()
        g.apply_legal(s, p, act)
        g.apply_legal(c, p, act)
        assert c == s


def test_state_round_trips_through_json_by_replay():
    g = GemJam(num_players=4, turn_decision_limit=3)
    checked = []

    def every(s):
        if len(s.log) % 61 == 0:
            d = json.loads(json.dumps(s.to_dict()))
            assert g.state_from_dict(d) == s
            checked.append(1)
    random_game(g, 11, every)
    assert checked


def test_resample_hidden_keeps_what_the_observer_sees():
    g = GemJam(num_players=3)
    deck = Counter(g.cfg.deck)
    rng = np.random.default_rng(0)
    changed = 0

    def every(s):
        nonlocal changed
        if s.over or len(s.log) % 23:
            return
        for o in range(3):
            r = g.resample_hidden(s, o, rng)
            assert zones(g, r) == deck
            np.testing.assert_array_equal(g.observe(r, o), g.observe(s, o))
            np.testing.assert_array_equal(g.legal_mask(r, o), g.legal_mask(s, o))
            assert g.visible_log(r, o) == g.visible_log(s, o)
            assert [len(h) for h in r.hands] == [len(h) for h in s.hands]
            changed += any(r.hands[q] != s.hands[q] for q in range(3) if q != o)
            if not r.over:
                p = g.to_act(r)[0]
                assert g.legal_mask(r, p).any()
    random_game(g, 3, every)
    assert changed


def test_forced_passes_are_not_told_apart_from_chosen_ones():
    g = GemJam()
    s = random_game(g, 8)
    forced = [k for k, (p, a, f) in enumerate(s.log) if f and g.action_name(a) == "pass"]
    assert forced
    for viewer in range(3):
        vis = g.visible_log(s, viewer)
        assert all(vis[k][2] is None for k in forced if s.log[k][0] != viewer)


def test_observations_hide_other_hands_vaults_and_piles():
    g = GemJam()
    s = g.new_state(4)
    o = g.observe(s, 0)
    t = s.copy()
    t.hands[1], t.hands[2] = t.hands[2], t.hands[1]
    t.king = sorted(t.king[:-1] + [t.draw[0]])
    t.draw[0] = s.king[-1]
    np.testing.assert_array_equal(g.observe(t, 0), o)
    assert g.render(t, 0) == g.render(s, 0)


#: the sweep: random games per player count (default options), in chunks that xdist spreads
SWEEP_GAMES, SWEEP_CHUNKS = 2000, 4
#: the per-turn part of ``GemJam.max_decisions`` (max_rounds x players x 2,000; docs/gemjam.md, "Game length")
TURN_BOUND = 2000


def check_turn_boundary(g: GemJam, s, deck: Counter) -> None:
    """The cheap invariants, checked where a turn ends: every card in exactly one zone, sets
    valid, no negative counts, and no mask for a seat that is not to act."""
    assert zones(g, s) == deck
    m, size = g.manifest, g.cfg.set_size
    for shrine in s.shrines:
        for st in shrine:
            gems = st.gems
            assert 0 < len(gems) <= size[st.gem_type]
            assert not st.guarded or is_complete(g.cfg, st)
            assert all(m.is_wild[k] or st.gem_type in m.types[k] for k in gems)
    assert len(s.draw) == len(s.draw_seen)
    assert min(s.plays, s.rebirths, s.timer, s.next_set, *map(len, s.hands)) >= 0
    if not s.over:
        (p,) = g.to_act(s)
        assert not any(g.legal_mask(s, q).any() for q in range(g.num_players) if q != p)


def sweep_game(g: GemJam, seed: int, deck: Counter) -> tuple[object, int]:
    """One random game at the engine level (new_state / legal_actions / apply_legal): a legal
    action for whoever is to act at every decision, the cheap invariants at every turn
    boundary; returns the final state and the most decisions one turn took."""
    rng = np.random.default_rng(seed)
    s = g.new_state(seed)
    turn, start, longest_turn = (s.round, s.turn), 0, 0
    while not s.over:
        (p,) = g.to_act(s)
        legal = g.legal_actions(s, p)
        assert legal.size >= 2  # a non-empty mask; single choices are played by the engine
        g.apply_legal(s, p, int(legal[rng.integers(legal.size)]))
        if (s.round, s.turn) != turn:
            longest_turn = max(longest_turn, len(s.log) - start)
            turn, start = (s.round, s.turn), len(s.log)
            check_turn_boundary(g, s, deck)
    longest_turn = max(longest_turn, len(s.log) - start)
    check(g, s, deck)  # fully at the end
    return s, longest_turn


@pytest.mark.parametrize("chunk", range(SWEEP_CHUNKS))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_sweep_of_random_games(players, chunk, record_property):
    """2,000 random games per player count (in chunks): invariants, ends, determinism, length."""
    g = GemJam(num_players=players)
    deck = Counter(g.cfg.deck)
    per_chunk = SWEEP_GAMES // SWEEP_CHUNKS
    longest, longest_turn, ends = 0, 0, Counter()
    for k in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        s, turn_decisions = sweep_game(g, 20_000 + k, deck)
        assert s.winners and s.end_reason in ("four_sets", "deck_out", "max_rounds")
        assert g.results(s).winners == s.winners
        longest, longest_turn = max(longest, len(s.log)), max(longest_turn, turn_decisions)
        ends[s.end_reason] += 1
        if k == chunk * per_chunk:  # determinism: the same seed and policy give the same game
            assert sweep_game(g, 20_000 + k, deck)[0] == s
    assert longest <= g.max_decisions and longest_turn < TURN_BOUND
    record_property("longest_game_decisions", longest)
    record_property("longest_turn_decisions", longest_turn)
    print(f"Gem Jam {players} players, games {chunk * per_chunk}..{(chunk + 1) * per_chunk - 1}: longest game "
          f"{longest} decisions (bound {g.max_decisions}), longest turn {longest_turn} (bound {TURN_BOUND}), "
          f"ends {dict(ends)}")
