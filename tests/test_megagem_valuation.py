"""``BidderGames.valuation``: the valuation ``act`` leaves in ``last_valuation``, from observations alone.

Real decisions come from batched MegaGem games played by a BidderGames table (a few rows random for
variety); the scalar check replays ParametricBidder's own games row by row.
"""
from __future__ import annotations

import numpy as np
import pytest
from recorder import Recorder

from gemenvs import megagem_v0
from gemenvs.agents import make_agent
from gemenvs.arena.match import play_engine_game
from gemenvs.agents.megagem import BidderGames
from gemenvs.agents.megagem.tuned import ParametricBidder, random_weights
from gemenvs.megagem.batched import BatchedMegaGem
from gemenvs.megagem.game import MegaGem

MEMORY = ("pend_round", "pend_loan", "pend_value", "pend_limit", "pend_extra", "pend_coins", "hist", "count",
          "private")


def _bidders(env, seed=0) -> list:
    """Members 0..2: HeuristicBidder, the tuned ParametricBidder, a ParametricBidder with random weights."""
    return [make_agent("megagem", "heuristic", env, seed=0), make_agent("megagem", "tuned", env),
            ParametricBidder.for_env(env, weights=random_weights(np.random.default_rng(seed), spread=1.5))]


def _table(bidders, num_games) -> BidderGames:
    table = bidders[0].batch_games(num_games)
    for b in bidders[1:]:
        table.add_member(b)
    return table


def _play(num_players, steps, seed, on_call, games=12, members=None):
    """Play ``games`` batched games (table game ``b * n + p`` is game b's seat p) through a fresh table; before each
    act call, ``on_call(table, obs, masks, games, mem)``; after it, ``on_call(..., actions=...)`` as well."""
    env = megagem_v0.env(num_players=num_players)
    n = num_players
    bidders = _bidders(env, seed) if members is None else members(env)
    table = _table(bidders, games * n)
    engine = BatchedMegaGem(games, seed=seed, num_players=n)
    rng = np.random.default_rng(seed)
    seat_member = np.arange(games * n) % len(bidders)
    for _ in range(steps):
        to_act = engine.to_act()
        b, p = np.nonzero(to_act)
        obs, masks = engine.observations()[to_act].copy(), engine.action_masks()[to_act].copy()
        g = b * n + p
        mem = seat_member[g]
        on_call(table, obs, masks, g, mem)
        chosen = table.act(obs, masks, g, mem)
        on_call(table, obs, masks, g, mem, actions=chosen)
        actions = np.full((games, n), -1, np.int64)
        actions[b, p] = chosen
        rand = rng.random(len(b)) < 0.15
        actions[b[rand], p[rand]] = engine.random_actions(rng)[b[rand], p[rand]]
        done = np.flatnonzero(engine.step(actions).done)
        if done.size:  # a new game in that slot: its seats start afresh, maybe with another member
            seats = (done[:, None] * n + np.arange(n)).ravel()
            table.reset(seats)
            seat_member[seats] = rng.integers(0, len(bidders), seats.size)
    return table


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_valuation_is_what_act_leaves_in_last_valuation(num_players):
    """Mixed members in one call, and each member alone (members=None: member 0, HeuristicBidder)."""
    seen = {"rows": 0, "bids": 0}
    pending = {}

    def check(table, obs, masks, g, mem, actions=None):
        if actions is None:
            pending["mixed"] = table.valuation(obs, masks, mem)
            pending["alone"] = [table.valuation(obs, masks, None if k == 0 else np.full(len(obs), k))
                                for k in range(len(table.members))]
            return
        assert np.array_equal(pending["mixed"], table.last_valuation)
        for k, v in enumerate(pending["alone"]):
            assert np.array_equal(v[mem == k], table.last_valuation[mem == k])
        seen["rows"] += len(obs)
        seen["bids"] += int(table.last_valuation.any(axis=1).sum())

    table = _play(num_players, 90, seed=num_players, on_call=check)
    assert seen["bids"] > 500 and seen["rows"] > seen["bids"]  # bids and reveals both met
    assert table.count.sum() > 0  # the opponent model learnt meanwhile


def test_valuation_reads_and_changes_no_memory():
    """valuation leaves every memory array alone (duplicate rows, any order); act after it chooses as act without."""
    twin_actions = []
    twin = _play(4, 60, seed=7, on_call=lambda *a, actions=None: actions is not None and twin_actions.append(actions))
    checked = []

    def check(table, obs, masks, g, mem, actions=None):
        if actions is not None:
            assert np.array_equal(actions, twin_actions[len(checked)])
            checked.append(len(obs))
            return
        before = {k: getattr(table, k).copy() for k in MEMORY + ("last_valuation",)}
        rows = np.random.default_rng(len(checked)).integers(0, len(obs), 2 * len(obs))  # duplicates, shuffled
        v = table.valuation(obs[rows], masks[rows], mem[rows])
        assert np.array_equal(v, table.valuation(obs, masks, mem)[rows])
        for k, x in before.items():
            assert np.array_equal(getattr(table, k), x), k

    table = _play(4, 60, seed=7, on_call=check)
    assert len(checked) == len(twin_actions) and (table.pend_round >= 0).any() and table.count.sum() > 0
    for k in MEMORY:
        assert np.array_equal(getattr(table, k), getattr(twin, k)), k


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_valuation_rows_are_the_scalar_bidders_last_valuation(num_players):
    """Row by row against ParametricBidder.last_valuation (the tuned one and one with random weights, one table);
    reveal rows (last_valuation not set) are zeros."""
    game = MegaGem(num_players=num_players)
    weights = random_weights(np.random.default_rng(num_players), spread=1.5)
    makers = [lambda: make_agent("megagem", "tuned", megagem_v0.env(num_players=num_players)),
              lambda: ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=weights)]
    table = None
    for k, make in enumerate(makers):
        seats = [Recorder(make()) for _ in range(num_players)]
        for seed in range(3):
            play_engine_game(game, seats, seed=31 + 10 * seed + k)
        if table is None:
            table = make().batch_games(1)
        else:
            assert table.add_member(seats[0].agent) == k
        rows = [r for s in seats for r in s.rows]
        obs, masks = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
        v = table.valuation(obs, masks, np.full(len(rows), k))
        bid = np.array([r[3] is not None for r in rows])
        assert bid.sum() > 100 and (~bid).sum() > 0
        assert np.allclose(v[bid], [r[3] for r in rows if r[3] is not None], rtol=1e-9, atol=1e-12)
        assert not v[~bid].any()


def test_valuation_rejects_bad_input():
    env = megagem_v0.env(num_players=4)
    table = _table(_bidders(env), 4)
    engine = BatchedMegaGem(4, seed=0, num_players=4)
    to_act = engine.to_act()
    obs, masks = engine.observations()[to_act].copy(), engine.action_masks()[to_act].copy()
    assert table.valuation(obs[:0], masks[:0]).shape == (0, 3)
    with pytest.raises(ValueError, match=r"observations have \d+ values per row, spec expects \d+"):
        table.valuation(obs[:, :-1], masks)
    empty = masks.copy()
    empty[2] = 0
    with pytest.raises(ValueError, match="row 2: the action mask allows no action"):
        table.valuation(obs, empty)
    with pytest.raises(ValueError, match="same G"):
        table.valuation(obs, masks[:-1])
    with pytest.raises(ValueError, match="member indices in 0..2"):
        table.valuation(obs, masks, np.full(len(obs), 3))
    with pytest.raises(ValueError, match="act needs the games' indices"):
        table.act(obs, masks, None)


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_advice_is_a_fresh_bidders_choice(num_players):
    """advice: valuation's three numbers, then the bid a bidder with no memory of the game makes (act on a reset
    table, every member), with its chance to win and expected gain recomputed from the scalar formula."""
    n = num_players
    calls = {"rows": 0, "bids": 0}

    def on_call(table, obs, masks, games, mem, actions=None):
        if actions is not None:
            return
        advice = table.advice(obs, masks, mem)
        assert advice.shape == (len(obs), 6)
        assert np.array_equal(advice[:, :3], table.valuation(obs, masks, mem))
        fresh = _table(table.members, len(obs))
        chosen = fresh.act(obs, masks, np.arange(len(obs)), mem)
        bidding = ~np.isin(chosen, np.arange(table.agent.reveals.start, table.agent.reveals.stop))
        assert np.array_equal(advice[bidding, 3], chosen[bidding] - table.agent.bids.start)
        assert not advice[~bidding].any()
        # the chance and gain are those of the chosen bid: gain = chance x (value - cost x bid)
        value, cost, bid, win, gain = advice[:, 0], advice[:, 1], advice[:, 3], advice[:, 4], advice[:, 5]
        placed = win > 0
        assert np.allclose(gain[placed], win[placed] * (value[placed] - cost[placed] * bid[placed]))
        assert ((win >= 0) & (win <= 1)).all()
        calls["rows"] += len(obs)
        calls["bids"] += int((bid > 0).sum())

    table = _play(n, 40, 3, on_call)
    assert calls["bids"] > 50 and table.count.sum() > 0


def test_advice_later_in_a_game_ignores_memory():
    """advice reads and changes no memory: on a table whose games remember bids, it equals a fresh table's."""
    calls = []

    def on_call(table, obs, masks, games, mem, actions=None):
        if actions is None:
            before = {k: getattr(table, k).copy() for k in MEMORY}
            calls.append(np.array_equal(table.advice(obs, masks, mem), _table(table.members, 1).advice(obs, masks, mem)))
            for k in MEMORY:
                assert np.array_equal(getattr(table, k), before[k]), k

    table = _play(4, 30, 5, on_call)
    assert all(calls) and len(calls) == 30 and table.count.sum() > 0


def test_a_set_one_hot_slot_is_read_as_rounding_reads_it():
    """``decodes_to_one`` is ``np.rint(x) == 1`` (half to even) on every value, edge cases included."""
    from gemenvs.agents.megagem.decode import decodes_to_one, first_true

    edges = [0.0, 0.5, np.nextafter(0.5, 1), 1.0, np.nextafter(1.5, 0), 1.5, 2.0, -0.5, np.nan, np.inf, -np.inf]
    values = np.concatenate([np.array(edges), np.random.default_rng(0).uniform(-1, 3, 10_000)])
    for dtype in (np.float64, np.float32):
        x = values.astype(dtype)
        with np.errstate(invalid="ignore"):
            assert np.array_equal(decodes_to_one(x), np.rint(x) == 1)
    assert first_true(np.array([[False, True, True], [False, False, False]])).tolist() == [1, -1]


def test_expected_values_of_broadcast_arguments_are_the_scalar_ones():
    """The packed-key table gives ``expected_value`` for arguments of different shapes broadcast together,
    and None for an argument outside it."""
    from gemenvs.agents.megagem.decode import CHARTS
    from gemenvs.agents.megagem.valuation import expected_value, expected_values

    rng = np.random.default_rng(1)
    chart, total, draws = rng.integers(0, 5, (50, 1)), rng.integers(0, 30, (50, 1)), rng.integers(0, 20, (50, 1))
    known, good = rng.integers(0, 6, (50, 5)), rng.integers(0, 7, (50, 5))
    got = expected_values(chart, known, total, good, draws)
    want = [[expected_value(CHARTS[c], k, t, g, d) for k, g in zip(kr, gr)]
            for c, kr, t, gr, d in zip(chart[:, 0], known, total[:, 0], good, draws[:, 0])]
    assert got.shape == (50, 5) and got.tolist() == want
    assert expected_values(chart, known + 16, total, good, draws) is None


def _compensated_sum(terms, start=0):
    """What ``sum`` does from Python 3.12 on: integers added exactly, floats by Neumaier's compensated summation."""
    terms = list(terms)
    if not any(isinstance(x, float) for x in [start, *terms]):
        total = start
        for x in terms:
            total = total + x
        return total
    total, comp = float(start), 0.0
    for x in terms:
        t = total + x
        comp += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + comp


def test_the_bidders_arithmetic_does_not_depend_on_how_the_interpreter_sums(monkeypatch):
    """The scalar bidders add floats left to right (``add_up``), so a seeded game is the same on every Python:
    with ``sum`` replaced by the compensated sum of Python >= 3.12, every decision stays the same."""
    import builtins

    from gemenvs.agents.megagem import bidders, tuned, valuation
    from gemenvs.agents.megagem.valuation import add_up

    assert add_up([1e16, 1.0, -1e16]) == 0.0 and _compensated_sum([1e16, 1.0, -1e16]) == 1.0
    game = MegaGem(num_players=4)

    def decisions():
        for cached in (valuation.expected_value, valuation.hypergeom_pmf, valuation._mission_gain):
            cached.cache_clear()
        valuation._EV_TABLE = None
        out = []
        for seed in range(3):
            seats = [Recorder(cls(spec=game.spec, action_spec=game.action_spec))
                     for cls in (bidders.HeuristicBidder, tuned.TunedBidder, bidders.TruthfulAgent, bidders.HeuristicBidder)]
            play_engine_game(game, seats, seed)
            out.append([[(r[2], r[3]) for r in s.rows] for s in seats])
        return out

    before = decisions()
    monkeypatch.setattr(builtins, "sum", _compensated_sum)
    assert decisions() == before
