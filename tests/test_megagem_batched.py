"""The batched MegaGem engine against the scalar one (``gemenvs/megagem/batched/``).

* The deal: the vectorized replay of ``np.random.default_rng(seed)`` (SeedSequence, PCG64's
  uint32 stream, shuffles, Lemire's ``integers``) deals exactly the cards ``rules.new_state``
  deals, for thousands of seeds and every option that draws.
* Differential play: seeded random masked games are played through ``BatchedMegaGem`` and, game
  by game, through ``MegaGem.apply_legal`` with the same actions; at every step the seats to act,
  every seat's mask and observation (byte for byte) must be equal, a few games are compared
  through ``to_dict`` at every step and every game through ``to_dict`` (and the scalar replay of
  it) when it ends, with its scores, winners and rewards. A round whose every bid is forced,
  which the scalar engine plays within the decision before it, is a step of its own for the batched
  engine with no seat to act and all-zero masks (its ``to_dict`` is then the scalar engine's state
  past it): a game takes exactly as many such steps as its log has rounds of forced bids only.
  3, 4 and 5 players, one case per value of every option, and a case mixing them; the rare paths
  (first-auction ties, runs of forced rounds, a 2-gem card with one gem left) are checked to have
  been played. Uniform random play, and bidders of five styles (low, high, mostly 0, all or
  nothing) that keep coins to the end.
* Auto-reset and seeding: game b of a batch seeded s plays ``new_state(game_seeds(s, b, j))`` as
  its j-th game, whatever the batch size; ``reset`` restarts the same games.
* Errors: the shape and type of ``actions``, an illegal action (the game, seat and action named),
  ``to_dict`` without the record.
"""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs.core.engine import IllegalActionError, same_data
from gemenvs.core.rewards import terminal_rewards
from gemenvs.megagem import rules
from gemenvs.megagem.batched import BatchedMegaGem, game_seeds
from gemenvs.megagem.batched.deal import PICK_MASK, PICK_SHIFT, deal
from gemenvs.megagem.batched.rng import pcg64_seed, uint32_stream
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, CHART_NAMES
from gemenvs.megagem.game import SCORE_SCALE, MegaGem

EDGE_SEEDS = [0, 1, 2**31, 2**32 - 1, 2**32, 2**62 + 12345, 2**63 - 1]


# ----------------------------------------------------------------------------- the deal

def test_uint32_stream_is_default_rng():
    seeds = np.array(EDGE_SEEDS + list(range(2, 40)), dtype=np.uint64)
    stream, _ = uint32_stream(pcg64_seed(seeds), 12)
    for row, seed in zip(stream.T, seeds):  # (positions, generators)
        raw = np.random.default_rng(int(seed)).bit_generator.random_raw(6)
        halves = [int(x) for r in raw for x in (r & 0xFFFFFFFF, r >> 32)]  # next_uint32: low half first
        assert [int(x) for x in row] == halves, int(seed)


@pytest.mark.parametrize("options", [
    dict(num_players=3), dict(num_players=4), dict(num_players=5),
    dict(num_players=4, value_chart="random"), dict(num_players=3, tie_break="queue"),
    dict(num_players=5, value_chart="random", tie_break="queue"),
])
def test_deal_is_rules_new_state(options):
    opts = rules.Options(**options)
    n, k = opts.num_players, opts.hand_size
    seeds = np.concatenate([EDGE_SEEDS, np.random.default_rng(5).integers(0, 2**63 - 1, 1400)]).astype(np.uint64)
    d = deal(opts, seeds)
    for i, seed in enumerate(seeds):
        s = rules.new_state(opts, int(seed))
        assert CHART_NAMES[d.chart[i]] == s.chart
        assert [np.bincount(d.gems[i, p * k:(p + 1) * k], minlength=5).tolist() for p in range(n)] == s.hands
        assert d.gems[i, n * k:n * k + 2].tolist() == s.gem_row and d.gems[i, n * k + 2:].tolist() == s.gem_deck
        assert d.auction[i, 0] == s.auction_card and d.auction[i, 1:].tolist() == s.auction_deck
        assert d.missions[i].tolist() == s.missions
        if opts.tie_break == "queue":
            assert d.queue[i].tolist() == s.tie_queue
        else:  # the first auction's tie draw, for every number of tied bidders
            for tied in range(2, n + 1):
                rng = copy_rng(s.rng)
                assert (d.tie_picks[i] >> PICK_SHIFT[tied]) & PICK_MASK[tied] == rng.integers(tied)


def test_deal_in_chunks_is_the_same_deal(monkeypatch):
    from gemenvs.megagem.batched import deal as deal_module
    opts = rules.Options(num_players=4, value_chart="random")
    seeds = np.arange(40, dtype=np.uint64) * np.uint64(2**40 + 7)
    whole = deal(opts, seeds)
    monkeypatch.setattr(deal_module, "CHUNK", 7)
    parts = deal(opts, seeds)
    for name in ("seeds", "chart", "gems", "auction", "missions", "queue", "tie_picks"):
        assert np.array_equal(getattr(whole, name), getattr(parts, name)), name


def copy_rng(rng: np.random.Generator) -> np.random.Generator:
    out = np.random.default_rng()
    out.bit_generator.state = rng.bit_generator.state
    return out


# ----------------------------------------------------------------------------- differential play

def masked_random(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per seat with a non-zero mask, -1 elsewhere."""
    actions = np.full(masks.shape[:2], -1, dtype=np.int64)
    for b, p in zip(*np.nonzero(masks.any(axis=2))):
        legal = np.flatnonzero(masks[b, p])
        actions[b, p] = legal[rng.integers(legal.size)]
    return actions


def longest_forced_run(state: rules.MegaGemState, reveal_start: int) -> int:
    """The most consecutive rounds of a game in which every bid was forced (the log says so)."""
    n = state.num_players
    bids = [e for e in state.log if e[1] < reveal_start]
    longest = run = 0
    for r in range(len(state.history)):
        run = run + 1 if all(e[2] for e in bids[r * n:(r + 1) * n]) else 0
        longest = max(longest, run)
    return longest


def styled_bidders(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A legal action per seat with a non-zero mask (-1 elsewhere) in one of five styles, by game
    and seat: uniform, low bids likelier, high bids likelier, 0 four times in five, the largest bid
    or 0. Uniform play spends its coins early (no player ended a game of 150 holding its starting
    coins); with these some do, and more auctions are bid 0 by every seat by choice."""
    actions = np.full(masks.shape[:2], -1, dtype=np.int64)
    for b, p in zip(*np.nonzero(masks.any(axis=2))):
        legal = np.flatnonzero(masks[b, p])
        style, size = (3 * b + p) % 5, legal.size
        if style == 0 or size == 1:
            k = rng.integers(size)
        elif style in (1, 2):
            w = (1.0 + np.arange(size)) ** (2 if style == 2 else -2)
            k = rng.choice(size, p=w / w.sum())
        elif style == 3:
            k = 0 if rng.random() < 0.8 else rng.integers(size)
        else:
            k = size - 1 if rng.random() < 0.5 else 0
        actions[b, p] = legal[k]
    return actions


def play_differential(games: int, batch: int, seed: int, reward: str = "win", full_every_step: int = 2,
                      policy=masked_random, **options) -> tuple[int, dict]:
    """Play until ``games`` games have ended, every seat's action drawn by ``policy(rng, masks)``;
    compare as the module docstring says. Returns (games played, coverage counts)."""
    game = MegaGem(**options)
    eng = BatchedMegaGem(batch, seed=seed, reward=reward, record=True, auto_reset=False, **options)
    n = eng.num_players
    states = [game.new_state(int(eng.seeds[b])) for b in range(batch)]
    rng = np.random.default_rng(seed)
    seen = {"first_auction_ties": 0, "forced_runs": 0, "long_forced_runs": 0, "one_gem_of_two": 0, "forced_reveals": 0,
            "zero_auctions_by_choice": 0, "coins_kept": 0, "forced_round_steps": 0, "over": 0}
    played = 0
    forced_steps = [0] * batch  # steps each game has taken with no seat to act (rounds of forced bids)
    while played < games:
        masks, obs, to_act = eng.action_masks().copy(), eng.observations().copy(), eng.to_act()
        waiting = to_act.any(axis=1)
        for b, s in enumerate(states):
            if not waiting[b]:  # a round of forced bids only: the scalar engine has played on past it
                assert not masks[b].any(), f"game {b}: masks of a forced round"
                if b < full_every_step:
                    assert same_data(eng.to_dict(b), s.to_dict()), f"game {b}: state past a forced round"
                forced_steps[b] += 1
                continue
            assert to_act[b].tolist() == [p in game.to_act(s) for p in range(n)], f"game {b}: seats to act"
            for p in range(n):
                assert np.array_equal(masks[b, p], game.legal_mask(s, p)), f"game {b} seat {p}: mask"
                assert obs[b, p].tobytes() == game.observe(s, p).tobytes(), f"game {b} seat {p}: observation"
            if b < full_every_step:
                assert same_data(eng.to_dict(b), s.to_dict()), f"game {b}: state"
        actions = policy(rng, masks)
        result = eng.step(actions)
        for b, s in enumerate(states):
            if waiting[b]:
                for p in game.to_act(s):
                    game.apply_legal(s, p, int(actions[b, p]))
            # (a game whose forced rounds end it is over for the scalar engine first)
            assert not result.done[b] or game.is_over(s), f"game {b}: over"
            if not result.done[b]:
                continue
            r = game.results(s)
            assert result.scores[b].tolist() == r.scores and np.flatnonzero(result.winners[b]).tolist() == r.winners
            assert result.rewards[b].tolist() == terminal_rewards(reward, r.scores, SCORE_SCALE)
            assert result.seeds[b] == s.seed
            d = eng.to_dict(b)
            assert same_data(d, s.to_dict()), f"game {b}: final state"
            assert eng.state(b) == s  # the scalar engine replays it and checks every field
            assert [o.tobytes() for o in eng.observations()[b]] == [game.observe(s, p).tobytes() for p in range(n)]
            assert not eng.action_masks()[b].any()
            h = s.history
            seen["first_auction_ties"] += not game.opts.tie_break == "queue" and h[0].bids.count(max(h[0].bids)) > 1
            seen["one_gem_of_two"] += any(AUCTION_AMOUNT[x.card] == 2 and AUCTION_TYPE[x.card] == "treasure"
                                          and len(x.gems) == 1 for x in h)
            rs = game.action_spec["reveal"].start
            seen["forced_reveals"] += sum(1 for p, a, f in s.log if f and a >= rs)
            seen["forced_runs"] += longest_forced_run(s, rs) >= 2
            seen["long_forced_runs"] += longest_forced_run(s, rs) > n
            bids = [e for e in s.log if e[1] < rs]
            rounds = [bids[r * n:(r + 1) * n] for r in range(len(h))]  # (seat, bid, forced) of each auction
            seen["zero_auctions_by_choice"] += sum(all(a == 0 for _, a, _ in x) and not all(f for *_, f in x)
                                                   for x in rounds)
            assert forced_steps[b] == sum(all(f for *_, f in x) for x in rounds), f"game {b}: steps of forced rounds"
            seen["forced_round_steps"] += forced_steps[b]
            seen["coins_kept"] += max(s.coins) >= game.opts.start_coins
            seen["over"] += 1
            played += 1
        for b in eng.reset_finished():
            assert eng.episodes[b] >= 1 and eng.seeds[b] == game_seeds(seed, b, eng.episodes[b])
            states[b] = game.new_state(int(eng.seeds[b]))
            forced_steps[b] = 0
    return played, seen


CASES = [
    dict(num_players=3), dict(num_players=5),
    dict(value_chart="B"), dict(value_chart="C"), dict(value_chart="D"), dict(value_chart="E"),
    dict(value_chart="random"), dict(tie_break="queue"), dict(reveal_after="treasure_only"),
    dict(two_pairs="distinct"), dict(public_bids=False),
    dict(reward="score"), dict(reward="rank"), dict(reward="margin"),
]


@pytest.mark.parametrize("options", CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_differential_each_option(options):
    played, seen = play_differential(games=120, batch=40, seed=CASES.index(options), **options)
    assert played >= 120 and seen["forced_reveals"] > 0


def play_cases(cases: list[dict], first_seed: int, **kwargs) -> tuple[int, dict]:
    """:func:`play_differential` for each option set (seeds first_seed, first_seed + 1, ...): games
    played and coverage counts, summed."""
    total, counts = 0, {}
    for seed, options in enumerate(cases, start=first_seed):
        played, seen = play_differential(seed=seed, full_every_step=1, **kwargs, **options)
        total += played
        for k, v in seen.items():
            counts[k] = counts.get(k, 0) + v
    return total, counts


def test_differential_defaults_and_mixed_thousands():
    """The default game (4 players) and mixed options at every player count: about 1,500 games."""
    total, counts = play_cases([
        dict(num_players=4),
        dict(num_players=3, value_chart="random", tie_break="queue", two_pairs="distinct", reward="rank"),
        dict(num_players=4, value_chart="random", reveal_after="treasure_only", public_bids=False, reward="margin"),
        dict(num_players=5, value_chart="E", tie_break="queue", reveal_after="treasure_only", two_pairs="distinct",
             public_bids=False, reward="score"),
        dict(num_players=5, value_chart="random", reward="win"),
    ], first_seed=100, games=300, batch=100)
    assert total >= 1500
    # the rare paths were played (runs of forced rounds are common in random play: coins run out)
    assert counts["first_auction_ties"] > 0 and counts["forced_runs"] > 0 and counts["long_forced_runs"] > 0
    assert counts["one_gem_of_two"] > 0 and counts["forced_reveals"] > 0


def test_differential_styled_bidders():
    """Play other than uniform (:func:`styled_bidders`), mixed options at every player count: 450 games,
    some of them ending with a player holding its starting coins (which uniform play does not reach)."""
    total, counts = play_cases([
        dict(num_players=3, value_chart="random", tie_break="queue", reward="score"),
        dict(num_players=4, reveal_after="treasure_only", two_pairs="distinct", reward="margin"),
        dict(num_players=5, value_chart="random", public_bids=False),
    ], first_seed=200, games=150, batch=50, policy=styled_bidders)
    assert total >= 450
    assert counts["coins_kept"] > 0 and counts["zero_auctions_by_choice"] > 0 and counts["first_auction_ties"] > 0


# ----------------------------------------------------------------------------- auto-reset and seeding

@pytest.mark.parametrize("pool_games", [32768, 16], ids=["deep_pool", "pool_refilled_every_other_game"])
def test_auto_reset_deals_the_seeded_next_games(pool_games):
    eng = BatchedMegaGem(16, seed=7, num_players=4)
    eng._POOL_GAMES = pool_games  # 16: two openings held per slot, dealt afresh every other game
    eng.reset(7)
    game = MegaGem()
    assert eng.seeds.tolist() == game_seeds(7, np.arange(16), 0).tolist()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        result = eng.step(eng.random_actions(rng))
        for b in np.flatnonzero(result.done):
            ended += 1
            assert result.seeds[b] == game_seeds(7, b, eng.episodes[b] - 1)
            assert eng.seeds[b] == game_seeds(7, b, eng.episodes[b])
            fresh = game.new_state(int(eng.seeds[b]))  # the game dealt in its place is the scalar one
            obs, masks = eng.observations(), eng.action_masks()
            for p in range(4):
                assert obs[b, p].tobytes() == game.observe(fresh, p).tobytes()
                assert np.array_equal(masks[b, p], game.legal_mask(fresh, p))
        # every game waits on a choice, or on a round of forced bids (no seat has coins)
        assert (eng.to_act().any(axis=1) | ((eng.phase == 0) & (eng.coins == 0).all(axis=0))).all()
    assert ended > 16


def test_seeding_does_not_depend_on_the_batch_size_and_reset_repeats():
    seeds = [int(x) for x in game_seeds(3, np.arange(5), np.arange(5))]
    assert len(set(seeds)) == 5 and all(0 <= x < 2**63 for x in seeds)
    small, large = BatchedMegaGem(3, seed=11, record=True), BatchedMegaGem(9, seed=11, record=True)
    assert small.seeds.tolist() == large.seeds[:3].tolist()
    trace = []
    for _ in range(2):
        small.reset(11)
        rng = np.random.default_rng(2)
        steps = []
        for _ in range(60):
            actions = small.random_actions(rng)
            steps.append((actions.copy(), small.observations().copy()))
            small.step(actions)
        trace.append(steps)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(*trace))
    unseeded = BatchedMegaGem(2)
    assert 0 <= unseeded.seed < 2**63 and unseeded.seeds[0] == game_seeds(unseeded.seed, 0, 0)


def test_observations_do_not_depend_on_when_they_were_last_built():
    """The mission and mission_owner one-hots stay in the buffer between calls and are moved only
    where a card or an owner changed: built every step, every 7th step or after a reset to another
    seed, the observations are the same (and the scalar encoder's)."""
    every, seldom = BatchedMegaGem(24, seed=5, record=True), BatchedMegaGem(24, seed=5)
    game = MegaGem()
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    claims = deals = 0
    for step in range(160):
        if step == 90:  # every game dealt afresh from another seed
            every.reset(6)
            seldom.reset(6)
        obs = every.observations().copy()
        if step % 7 == 0 or step == 90:
            assert np.array_equal(seldom.observations(), obs), f"step {step}"
            for b in np.flatnonzero(every.to_act().any(axis=1))[::3]:  # (not at a forced round: see to_dict)
                s = every.state(int(b))
                assert [o.tobytes() for o in obs[b]] == [game.observe(s, p).tobytes() for p in range(4)]
        owners = every.mission_owner.copy()
        result = every.step(every.random_actions(rng_a))
        seldom.step(seldom.random_actions(rng_b))
        claims += int(((owners < 0) & (every.mission_owner >= 0)).sum())
        deals += int(result.done.sum())
    assert claims > 100 and deals > 24


def test_a_round_of_forced_bids_is_a_step_with_no_seat_to_act():
    """Such a game has no seat to act and all-zero masks; the next step plays the round whatever its
    entries of ``actions`` (even out of range); its state is the scalar one past the forced rounds."""
    game = MegaGem()
    eng = BatchedMegaGem(32, seed=9, record=True, auto_reset=False)
    states = [game.new_state(int(x)) for x in eng.seeds]
    rng = np.random.default_rng(9)
    forced_steps = 0
    while forced_steps < 30:
        masks, to_act = eng.action_masks().copy(), eng.to_act()
        waiting = to_act.any(axis=1)
        forced = ~waiting & (eng.phase == 0)
        actions = masked_random(rng, masks)
        for b in np.flatnonzero(forced):
            assert not masks[b].any() and (eng.coins[:, b] == 0).all()
            assert same_data(eng.to_dict(b), states[b].to_dict())  # (the scalar game is past the round)
            actions[b] = 999
        rounds = eng.round.copy()
        result = eng.step(actions)
        forced_steps += int(forced.sum())
        # each such game played its round: the next one began, the winner chooses a reveal, or it ended
        assert ((eng.round > rounds) | (eng.phase == 1) | result.done)[forced].all()
        for b in np.flatnonzero(waiting):
            for p in game.to_act(states[b]):
                game.apply_legal(states[b], p, int(actions[b, p]))
        for b in eng.reset_finished():
            states[b] = game.new_state(int(eng.seeds[b]))


def test_random_actions_are_legal_and_cover_every_choice():
    eng = BatchedMegaGem(64, seed=3, num_players=5, record=True)
    rng = np.random.default_rng(4)
    seen_bids, seen_reveals = set(), set()
    for _ in range(80):
        masks, actions = eng.action_masks(), eng.random_actions(rng)
        acting = eng.to_act()
        assert np.array_equal(acting, masks.any(axis=2)) and ((actions >= 0) == acting).all()
        b, p = np.nonzero(acting)
        assert masks[b, p, actions[b, p]].all()
        seen_bids.update(actions[acting & eng._bidding[:, None]].tolist())
        seen_reveals.update(actions[acting & ~eng._bidding[:, None]].tolist())
        eng.step(actions)
    assert set(range(0, 20)) <= seen_bids and len(seen_reveals) == 5
    # a seed instead of a Generator draws as default_rng(seed) does; None draws fresh; anything else is refused
    assert np.array_equal(eng.random_actions(7), eng.random_actions(np.random.default_rng(7)))
    assert ((eng.random_actions() >= 0) == eng.to_act()).all()
    for bad in ("7", 1.5, True):
        with pytest.raises(ValueError, match="rng must be a numpy Generator, an integer seed or None"):
            eng.random_actions(bad)


def test_scaled_count_slots_divide_in_float32_as_the_encoder_does():
    """The engine divides counts by their scales in float32; the scalar encoder divides in float64
    and stores float32. The two agree bit for bit over every count a byte can hold."""
    from gemenvs.megagem.batched import tables as T
    counts = np.arange(256)
    for div in (T.COIN_DIV, T.DISPLAY_DIV, T.DECK_KIND_DIV, *T.DEBT_DIVS.reshape(-1)):
        engine = np.divide(counts.astype(np.uint8), div)
        assert engine.dtype == np.float32
        encoder = np.array([k / float(div) for k in counts], dtype=np.float64).astype(np.float32)
        assert engine.tobytes() == encoder.tobytes()


def test_memory_per_game():
    for n in (3, 4, 5):
        eng = BatchedMegaGem(8, seed=0, num_players=n)
        assert eng.state_bytes <= 256
        assert eng.buffer_bytes["observations"] == n * eng.obs_dim * 4
        assert eng.buffer_bytes["masks"] == n * eng.num_actions


# ----------------------------------------------------------------------------- errors

def test_action_shape_and_type_errors():
    eng = BatchedMegaGem(4, seed=0)
    with pytest.raises(ValueError, match=r"shape \(num_games, num_players\) = \(4, 4\); got \(4, 3\)"):
        eng.step(np.zeros((4, 3), np.int64))
    with pytest.raises(ValueError, match="integers; got dtype float64"):
        eng.step(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="record=True"):
        eng.to_dict(0)
    with pytest.raises(ValueError, match="num_games"):
        BatchedMegaGem(0)
    with pytest.raises(ValueError, match="tie_break"):
        BatchedMegaGem(2, tie_break="coin")
    with pytest.raises(ValueError, match="reward"):
        BatchedMegaGem(2, reward="points")


def test_illegal_action_names_game_seat_and_action_and_changes_nothing():
    eng = BatchedMegaGem(6, seed=1, record=True)
    rng = np.random.default_rng(0)
    actions = eng.random_actions(rng)
    before = [eng.to_dict(b) for b in range(6)]
    bad = actions.copy()
    bad[3, 2] = eng.num_actions + 4
    with pytest.raises(IllegalActionError, match=r"game 3: illegal action 95 \(not an action\) by seat 2: out of range"):
        eng.step(bad)
    d = before[3]
    limit = d["coins"][2] + (AUCTION_AMOUNT[d["auction_card"]] if AUCTION_TYPE[d["auction_card"]] == "loan" else 0)
    bad[3, 2] = limit + 1
    with pytest.raises(ValueError, match=rf"game 3: illegal action {limit + 1} \(bid\[{limit + 1}\]\) by seat 2: "
                                         rf"bid {limit + 1} exceeds the limit of {limit}"):
        eng.step(bad)
    bad[3, 2] = eng.game.action_spec["reveal"][0]
    with pytest.raises(ValueError, match="game 3: .* by seat 2: this is a bidding decision"):
        eng.step(bad)
    assert [eng.to_dict(b) for b in range(6)] == before
    # seats not to act are ignored, whatever they send
    ignored = actions.copy()
    ignored[~eng.to_act()] = 10**6
    eng.step(ignored)
    # a reveal of a colour not in hand
    for _ in range(200):
        revealing = np.flatnonzero(eng.phase == 1)
        if revealing.size:
            break
        eng.step(eng.random_actions(rng))
    b = int(revealing[0])
    w = int(eng.winner[b])
    hand = eng.to_dict(b)["hands"][w]
    missing = next(c for c in range(5) if hand[c] == 0)
    actions = eng.random_actions(rng)
    actions[b, w] = eng.game.action_spec["reveal"][missing]
    with pytest.raises(IllegalActionError, match=rf"game {b}: .* by seat {w}: no .* gem in hand"):
        eng.step(actions)
    actions[b, w] = 0
    with pytest.raises(IllegalActionError, match=rf"game {b}: .* by seat {w}: the winner must reveal"):
        eng.step(actions)


def test_benchmark_script_runs(capsys):
    """benchmarks/megagem_batched.py, a moment per configuration: every row and the memory table print."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "megagem_batched.py"
    spec = importlib.util.spec_from_file_location("megagem_batched_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--seconds", "0.05", "--rounds", "1", "--batches", "1,8", "--players", "3",
                        "--breakdown", "4", "--without-dealing", "8"]) == 0
    out = capsys.readouterr().out
    for row in ("BatchedMegaGem B=1 obs+masks", "BatchedMegaGem B=8 masks", "megagem_v0.env()",
                "| BatchedMegaGem B=8 obs+masks, dealing left out (timing only: openings reused) |",
                "| BatchedMegaGem B=8 masks, dealing left out (timing only: openings reused) |",
                "OpenSpiel first_sealed_auction", "| 8 | 153 | 2,724 | 303 |", "decisions per game step |",
                "whole loop per game step (us) |"):
        assert row in out
    # the batched rows give game steps per second and decisions per game step: at most 3 (seats)
    # and at least 1 (a reveal step has the winner alone), the scalar env's row has neither
    row = next(line for line in out.splitlines() if line.startswith("| BatchedMegaGem B=8 masks"))
    per_step = float(row.rstrip(" |").split("|")[-1])
    assert 1.0 <= per_step <= 3.0
    assert next(line for line in out.splitlines() if line.startswith("| megagem_v0.env()")).endswith("| - | - |")
    # the breakdown's parts (timed apart) fit in the whole loop, whose cost per game step is the loop's / B
    cells = [float(x.replace(",", "")) for x in out.splitlines()[
        max(i for i, line in enumerate(out.splitlines()) if line.startswith("| 8 |"))].strip("| ").split(" | ")]
    assert len(cells) == 6 and sum(cells[1:4]) <= cells[4] + 2 and cells[5] == pytest.approx(cells[4] / 8, abs=0.07)  # (rounded)
