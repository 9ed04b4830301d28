"""MegaGem determinism and hidden information.

* Determinism: the same seed and actions give identical trajectories (observations, masks,
  rewards, terminations, infos), through the AEC and the Parallel API, also when the global
  ``random`` and ``numpy.random`` generators are used (and reseeded) between steps.
* No hidden-information leak: at many points of random games, everything a player cannot see
  (the other hands, the face-down gem deck order, the auction deck order, the engine RNG, and
  the sealed bids already made this round) is redrawn by ``resample_hidden``, and its
  observation, mask, view of the decision log and rendered view must stay identical.
* Sealed bids in the AEC view: a bidder's observation never depends on the bids made before it
  in the same round.
"""
from __future__ import annotations

import copy
import itertools
import random

import numpy as np
import pytest

from gemenvs import megagem_v0
from gemenvs.megagem.data import NUM_COLOURS
from gemenvs.megagem.game import MegaGem
from gemenvs.megagem.rules import BID, OVER

PLAYERS = (3, 4, 5)


def masked_choice(rng, mask) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def global_noise(step: int) -> None:
    """Use and reseed the global generators, as other code in a training process might."""
    random.seed(step * 7919)
    random.random()
    random.shuffle(list(range(10)))
    np.random.seed(step % 1000)
    np.random.random(3)
    np.random.randint(0, 100)


# ----------------------------------------------------------------------------- determinism

def aec_trajectory(n: int, seed: int, actions: list[int] | None, noise: bool, games: int = 2, **opts):
    """Play ``games`` games (the first reset seeded, the next ones not); return (trace, actions)."""
    env = megagem_v0.env(num_players=n, **opts)
    rng = np.random.default_rng(seed + 1)
    chosen = [] if actions is None else None
    it = iter(actions) if actions is not None else None
    trace = []
    step = 0
    for g in range(games):
        env.reset(seed=seed if g == 0 else None)
        for agent in env.agent_iter():
            if noise:
                global_noise(step)
            obs, rew, term, trunc, info = env.last()
            views = tuple((a, env.observe(a)["observation"].tobytes(), env.observe(a)["action_mask"].tobytes())
                          for a in env.agents)
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), rew, term, trunc,
                          repr(info), views, repr(env.rewards), repr(env.terminations)))
            if term or trunc:
                action = None
            elif it is not None:
                action = next(it)
            else:
                # the first auction with every bid at zero: a tie the engine RNG breaks
                st = env.unwrapped.game_state
                action = 0 if st.round == 1 and st.phase == BID else masked_choice(rng, obs["action_mask"])
                chosen.append(action)
            env.step(action)
            step += 1
    return trace, chosen


@pytest.mark.parametrize("n", PLAYERS)
def test_aec_same_seed_same_trajectory_despite_global_rng(n):
    opts = {"value_chart": "random", "tie_break": "rulebook", "reward": "margin"}
    first, actions = aec_trajectory(n, 100 + n, None, noise=False, **opts)
    second, _ = aec_trajectory(n, 100 + n, actions, noise=True, **opts)
    assert len(first) == len(second) > 40
    for i, (a, b) in enumerate(zip(first, second)):
        assert a == b, f"trajectories differ at step {i}"
    # the seed matters (so the comparison above can fail)
    other, _ = aec_trajectory(n, 200 + n, None, noise=False, games=1, **opts)
    assert other[0][1:3] != first[0][1:3] or other[5] != first[5]


def parallel_trajectory(n: int, seed: int, actions, noise: bool):
    env = megagem_v0.parallel_env(num_players=n, tie_break="queue", reward="rank")
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    trace = [(repr(infos), {a: (o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in obs.items()})]
    chosen = []
    step = 0
    while env.agents:
        if noise:
            global_noise(step)
        if actions is None:
            act = {a: masked_choice(rng, obs[a]["action_mask"]) for a in env.agents if obs[a]["action_mask"].any()}
            chosen.append(act)
        else:
            act = actions[step]
        obs, rew, term, trunc, infos = env.step(act)
        trace.append((repr(rew), repr(term), repr(trunc), repr(infos),
                      {a: (o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in obs.items()}))
        step += 1
    return trace, chosen


@pytest.mark.parametrize("n", PLAYERS)
def test_parallel_same_seed_same_trajectory_despite_global_rng(n):
    first, actions = parallel_trajectory(n, 300 + n, None, noise=False)
    second, _ = parallel_trajectory(n, 300 + n, actions, noise=True)
    assert first == second and len(first) > 10


def test_engine_state_copy_continues_identically():
    """A copied state (RNG included) replays the same future, including a random first-auction tie."""
    game = MegaGem(num_players=4)
    for seed in range(20):
        s = game.new_state(seed)
        t = s.copy()
        for p in range(4):  # all bid 0: the engine RNG picks the winner
            game.apply(s, p, 0)
            game.apply(t, p, 0)
        assert s == t and s.history[-1].winner == t.history[-1].winner
        assert s.rng.integers(2**32) == t.rng.integers(2**32)


def test_first_auction_ties_are_random_but_seeded():
    game = MegaGem(num_players=5)
    winners = []
    for seed in range(60):
        s = game.new_state(seed)
        for p in range(5):
            game.apply(s, p, 0)
        winners.append(s.history[-1].winner)
        again = game.new_state(seed)
        for p in range(5):
            game.apply(again, p, 0)
        assert again.history[-1].winner == winners[-1]
    assert set(winners) == set(range(5)), "a first-round tie should be broken at random among all tied"


# ----------------------------------------------------------------------------- hidden information

def gem_totals(s) -> list[int]:
    """Gems of each colour over every zone (hands, Collections, Display, row, deck)."""
    per = [sum(x) for x in zip(*s.hands, *s.collections, s.display)]
    for c in s.gem_row + s.gem_deck:
        per[c] += 1
    return per


def public_part(s, observer: int) -> dict:
    """Every field of the state's dict that ``observer`` sees (everything but what resample_hidden redraws)."""
    d = s.to_dict()
    for key in ("hands", "gem_deck", "auction_deck", "rng", "bids", "history", "log"):
        d.pop(key)
    return d


LEAK_COMBOS = list(itertools.product(PLAYERS, ("A", "E", "random"), ("rulebook", "queue"),
                                     ("every_auction", "treasure_only"), (True, False)))


@pytest.mark.parametrize("part", range(2))
def test_no_hidden_information_leak(part):
    """``resample_hidden`` redraws what a seat cannot see (other hands, deck orders, sealed bids,
    private bids, the RNG); the seat's observation, mask, visible log and rendered view stay
    identical, everything public stays put, and no gem is created or lost."""
    checks = changed = bids_changed = sensitive = 0
    for index in range(part, 72, 2):
        n, chart, tie, rev, public = LEAK_COMBOS[index % len(LEAK_COMBOS)]
        game = MegaGem(num_players=n, value_chart=chart, tie_break=tie, reveal_after=rev, public_bids=public)
        s = game.new_state(index)
        rnd = random.Random(index)
        rng = np.random.default_rng(index)
        while True:
            for p in range(n):
                obs, mask, log = game.observe(s, p), game.legal_mask(s, p), game.visible_log(s, p)
                view = game.render(s, p) if checks % 4 == 0 else None  # rendering is slow: a sample
                before = s.to_dict()
                r = game.resample_hidden(s, p, rng)
                assert s.to_dict() == before, "resample_hidden changed the true state"
                assert game.observe(r, p).tobytes() == obs.tobytes(), f"player {p}'s observation leaks hidden cards"
                assert game.legal_mask(r, p).tobytes() == mask.tobytes(), f"player {p}'s mask leaks"
                assert game.visible_log(r, p) == log, f"player {p}'s view of the log leaks"
                if view is not None:
                    assert game.render(r, p) == view, f"player {p}'s rendered view leaks hidden cards"
                assert public_part(r, p) == public_part(s, p)
                assert r.hands[p] == s.hands[p] and [sum(h) for h in r.hands] == [sum(h) for h in s.hands]
                assert gem_totals(r) == gem_totals(s) == [6] * NUM_COLOURS
                assert sorted(r.auction_deck) == sorted(s.auction_deck) and len(r.gem_deck) == len(s.gem_deck)
                changed += r.hands != s.hands
                bids_changed += r.bids != s.bids or [h.bids for h in r.history] != [h.bids for h in s.history]
                checks += 1
            # control: the comparison does see a change of public or own information
            if s.phase != OVER and checks % 7 == 0:
                p = rnd.randrange(n)
                before = game.observe(s, p).tobytes()
                s.coins[(p + 1) % n] += 1
                sensitive += game.observe(s, p).tobytes() != before
                s.coins[(p + 1) % n] -= 1
            if s.phase == OVER:
                break
            acting = game.to_act(s)
            p = rnd.choice(acting)
            game.apply(s, p, masked_choice(np.random.default_rng(rnd.randrange(2**32)), game.legal_mask(s, p)))
    assert checks > 4000
    assert changed > checks // 2, "the resampling rarely changed another hand: the test would prove little"
    assert bids_changed > checks // 20 and sensitive > 50


def test_sealed_bids_are_hidden_in_the_log_until_the_round_resolves():
    game = MegaGem(num_players=4)
    s = game.new_state(3)
    bid = game.action_spec["bid"]
    game.apply(s, 0, bid[5])
    game.apply(s, 1, bid[7])
    assert game.visible_log(s, 0) == [(0, 5, False), (1, None, None)]
    assert game.visible_log(s, 2) == [(0, None, None), (1, None, None)]
    assert game.visible_log(s, None) == [(0, 5, False), (1, 7, False)]
    game.apply(s, 2, bid[1])
    game.apply(s, 3, bid[0])  # the round resolves: its bids are public now
    assert [e[:2] for e in game.visible_log(s, 2)[:4]] == [(0, 5), (1, 7), (2, 1), (3, 0)]
    # without public bids another seat's bid stays hidden for good; reveals are public
    private = MegaGem(num_players=4, public_bids=False)
    s = private.new_state(3)
    for p, b in enumerate((5, 7, 1, 0)):
        private.apply(s, p, bid[b])
    assert [e[1] for e in private.visible_log(s, 2)[:4]] == [None, None, 1, None]
    if s.phase == "reveal":
        private.apply(s, s.winner, int(private.legal_actions(s, s.winner)[0]))
    reveals = private.action_spec["reveal"]
    assert any(e[1] in reveals for e in s.log)
    assert all(v[1] == e[1] for e, v in zip(s.log, private.visible_log(s, 2)) if e[1] in reveals)


def test_forced_decisions_of_others_are_not_visible_as_forced():
    game = MegaGem(num_players=3)
    rng = np.random.default_rng(0)
    for seed in range(20):
        s = game.new_state(seed)
        while not game.is_over(s):
            p = game.to_act(s)[0]
            game.apply(s, p, int(rng.choice(game.legal_actions(s, p))))
        if any(f for _, _, f in s.log):
            break
    assert any(f for _, _, f in s.log)
    for viewer in range(3):
        for (p, a, f), (q, b, g) in zip(s.log, game.visible_log(s, viewer)):
            assert q == p and g == (bool(f) if p == viewer else None)


def test_resampled_states_play_on_to_the_end():
    """A resampled state is a game like any other: it continues with legal play and keeps its gems."""
    game = MegaGem(num_players=5, public_bids=False, tie_break="queue")
    rng = np.random.default_rng(1)
    s = game.new_state(4)
    for _ in range(30):
        p = game.to_act(s)[0]
        game.apply(s, p, int(rng.choice(game.legal_actions(s, p))))
    others_differ = False
    for k in range(5):
        r = game.resample_hidden(s, 0, np.random.default_rng(k))
        others_differ |= r.hands[1:] != s.hands[1:]
        while not game.is_over(r):
            p = game.to_act(r)[0]
            game.apply(r, p, int(rng.choice(game.legal_actions(r, p))))
        assert gem_totals(r) == [6] * NUM_COLOURS and sum(r.display) == sum(game.opts.hand_size for _ in range(5))
    assert others_differ


def test_own_hand_is_visible_and_other_hands_are_not():
    """Positive control for the leak test: an observer's own hand is in its observation."""
    game = MegaGem(num_players=4)
    s = game.new_state(9)
    spec = game.spec
    for p in range(4):
        own = spec.decode(game.observe(s, p))["own_hand"]
        assert np.allclose(own, s.hands[p])
        assert np.allclose(spec.decode(game.observe(s, p))["hand_size"], [sum(s.hands[(p + k) % 4]) for k in range(4)])


@pytest.mark.parametrize("n,public", [(3, True), (4, False), (5, True)])
def test_aec_bidder_view_ignores_earlier_sealed_bids(n, public):
    """In the AEC env, what every agent observes during a round does not depend on earlier bids of that round."""
    env = megagem_v0.env(num_players=n, public_bids=public)
    env.reset(seed=50 + n)
    rng = np.random.default_rng(n)
    raw = env.unwrapped
    rounds_checked = 0
    while not raw.game.is_over(raw.game_state):
        st = raw.game_state
        if st.phase != BID:
            env.step(masked_choice(rng, env.observe(env.agent_selection)["action_mask"]))
            continue
        # the seats asked this round (a seat with nothing to bid was not asked: its 0 is in already)
        asked = raw.game.to_act(st)
        assert all(st.bids[p] is None for p in asked) and env.agent_selection == f"player_{asked[0]}"
        limits = {p: int(np.flatnonzero(raw.game.legal_mask(st, p))[-1]) for p in asked}
        early = asked[:-1]
        variants = [[0] * len(early), [limits[p] for p in early], [int(rng.integers(limits[p] + 1)) for p in early]]
        views = []
        for bids in variants:
            e = copy.deepcopy(env)
            seen = []
            for bid in bids:
                e.step(bid)
                # every agent's observation, mask and last() now, before the round resolves
                seen.append((e.agent_selection,
                             [(e.observe(a)["observation"].tobytes(), e.observe(a)["action_mask"].tobytes())
                              for a in e.agents],
                             repr(e.last()[1:]), repr(e.infos), repr(e.rewards)))
                assert e.infos == {a: {} for a in e.agents}
            views.append(seen)
        assert views[0] == views[1] == views[2], "a bidder's view depends on earlier sealed bids of its round"
        for bid in variants[2]:
            env.step(bid)
        env.step(int(rng.integers(limits[asked[-1]] + 1)))
        rounds_checked += 1
    assert rounds_checked >= 8
