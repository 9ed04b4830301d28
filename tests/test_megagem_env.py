"""MegaGem through PettingZoo: registration, spaces, masks, illegal actions, rewards, final
infos, rendering, the Parallel API and option validation (PettingZoo's own API, parallel, seed
and render tests run for every game in tests/test_contract.py)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

import gemenvs
from gemenvs import megagem_v0
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, COLOURS, SETUP

PLAYERS = (3, 4, 5)
#: players -> (Discrete actions, observation length): max_bid = start coins + 60 loan coins
SIZES = {3: (101, 227), 4: (91, 244), 5: (86, 261)}
REWARD_MODES = ("win", "score", "rank", "margin")


@pytest.fixture(autouse=True)
def _quiet_pettingzoo_warnings():
    # PettingZoo's tests warn that Dict observations are not plain Boxes; that is by design here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def masked_choice(rng: np.random.Generator, mask) -> int:
    legal = np.flatnonzero(mask)
    assert legal.size, "asked to act with an all-zero mask"
    return int(legal[rng.integers(legal.size)])


def play_aec_to_end(env, seed: int, rng: np.random.Generator) -> dict:
    """Play a game with random masked actions; return each agent's final reward and info."""
    env.reset(seed=seed)
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info)
            env.step(None)
        else:
            env.step(masked_choice(rng, obs["action_mask"]))
    assert env.agents == []
    return final


def advance_aec(env, rng: np.random.Generator, until, max_steps: int = 500) -> bool:
    """Step with random masked actions until ``until(state)`` holds; False if the game ended first."""
    raw = env.unwrapped
    for _ in range(max_steps):
        if raw.game.is_over(raw.game_state):
            return False
        if until(raw.game_state):
            return True
        env.step(masked_choice(rng, env.observe(env.agent_selection)["action_mask"]))
    raise AssertionError("no end in sight")


# ----------------------------------------------------------------------------- determinism through the Parallel API
# (PettingZoo's own api/parallel/seed/render tests run for every game in tests/test_contract.py)

@pytest.mark.parametrize("n", PLAYERS)
def test_parallel_masked_determinism(n):
    """Stronger than parallel_seed_test: full masked games, every output compared, seeds matter."""
    def run(seed, action_seed):
        env = megagem_v0.parallel_env(num_players=n)
        rng = np.random.default_rng(action_seed)
        obs, infos = env.reset(seed=seed)
        trace = [(obs, infos)]
        while env.agents:
            actions = {a: masked_choice(rng, obs[a]["action_mask"]) for a in env.agents
                       if obs[a]["action_mask"].any()}
            obs, rew, term, trunc, infos = env.step(actions)
            trace.append((actions, obs, rew, term, trunc, infos))
        return trace

    first, second = run(7, 1), run(7, 1)
    assert len(first) == len(second) > 15
    for a, b in zip(first, second):
        assert_same(a, b)
    other = run(8, 1)
    assert not all(same(a, b) for a, b in zip(first, other)), "a different seed gave the same game"


def same(a, b) -> bool:
    try:
        assert_same(a, b)
    except AssertionError:
        return False
    return True


def assert_same(a, b) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, type(a)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    else:
        assert type(a) is type(b) and a == b, (a, b)


# ----------------------------------------------------------------------------- registration and spaces

def test_registered_with_pettingzoo():
    assert gemenvs.entry("gemenvs/MegaGem-v0") is megagem_v0.ENTRY
    aec = pettingzoo.make("aec", "gemenvs/MegaGem-v0", num_players=5)
    par = pettingzoo.make("parallel", "gemenvs/MegaGem-v0", num_players=5)
    assert isinstance(aec.unwrapped, megagem_v0.raw_env)
    assert isinstance(par, megagem_v0.parallel_raw_env)
    for e in (aec, par):
        assert e.possible_agents == [f"player_{i}" for i in range(5)]
        assert e.action_space("player_4").n == SIZES[5][0]
    aec.reset(seed=0)
    assert len(aec.agents) == 5 and aec.agent_selection == "player_0"
    obs, _ = par.reset(seed=0)
    assert set(obs) == set(par.possible_agents)
    # the registry passes options through and validates them
    with pytest.raises(ValueError, match="value_chart"):
        pettingzoo.make("aec", "gemenvs/MegaGem-v0", value_chart="Z")


@pytest.mark.parametrize("n", PLAYERS)
def test_spaces(n):
    n_actions, obs_size = SIZES[n]
    for env in (megagem_v0.env(num_players=n), megagem_v0.parallel_env(num_players=n)):
        assert env.possible_agents == [f"player_{i}" for i in range(n)]
        for agent in env.possible_agents:
            act = env.action_space(agent)
            assert isinstance(act, spaces.Discrete) and act.n == n_actions and act.start == 0
            ob = env.observation_space(agent)
            assert isinstance(ob, spaces.Dict) and set(ob.spaces) == {"observation", "action_mask"}
            box, mask = ob["observation"], ob["action_mask"]
            assert box.shape == (obs_size,) and box.dtype == np.float32
            assert mask.shape == (n_actions,) and mask.dtype == np.int8
            assert env.observation_space(agent) is ob and env.action_space(agent) is act
    assert megagem_v0.env(num_players=n).unwrapped.observation_spec.size == obs_size
    # max bid = starting coins + all 60 loan coins; then one reveal action per colour
    assert n_actions == SETUP[n][0] + 60 + 1 + len(COLOURS)


@pytest.mark.parametrize("n", PLAYERS)
def test_aec_masks_zero_for_agents_not_to_act(n):
    env = megagem_v0.env(num_players=n)
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    raw = env.unwrapped
    steps = 0
    reveal_steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        assert env.observation_space(agent).contains(obs)
        assert obs["action_mask"].any()
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), f"{other} has legal actions on {agent}'s turn"
        if raw.game_state.phase == "reveal":
            reveal_steps += 1
            assert not obs["action_mask"][raw.game.action_spec["bid"].start:raw.game.action_spec["bid"].stop].any()
        env.step(masked_choice(rng, obs["action_mask"]))
        steps += 1
    assert steps > 8 * n and reveal_steps > 0


# ----------------------------------------------------------------------------- illegal actions

def first_decision(n=4, seed=0, card_type=None, env_fn=megagem_v0.env, **kw):
    """An env reset at a seed whose first auction card has ``card_type`` (any when None)."""
    for s in range(seed, seed + 200):
        env = env_fn(num_players=n, **kw)
        env.reset(seed=s)
        if card_type is None or AUCTION_TYPE[env.unwrapped.game_state.auction_card] == card_type:
            return env
    raise AssertionError(f"no seed starts with a {card_type} card")


def reveal_decision(n=4, seed=0, **kw):
    """An AEC env at a reveal whose winner lacks some colour; returns (env, agent, missing colour)."""
    for s in range(seed, seed + 50):
        env = megagem_v0.env(num_players=n, **kw)
        env.reset(seed=s)
        rng = np.random.default_rng(s)

        def lacking(st):
            return st.phase == "reveal" and 0 in st.hands[st.winner]

        if advance_aec(env, rng, lacking):
            st = env.unwrapped.game_state
            return env, env.agent_selection, st.hands[st.winner].index(0)
    raise AssertionError("no reveal found")


def illegal_cases():
    """(label, env builder, action, regex the reason must match)."""
    def oor(kw):
        env = first_decision(**kw)
        return env, env.action_space("player_0").n

    def over_limit(kw):
        env = first_decision(card_type="treasure", **kw)
        return env, env.unwrapped.game_state.coins[0] + 1

    def over_loan_limit(kw):
        env = first_decision(card_type="loan", **kw)
        st = env.unwrapped.game_state
        return env, st.coins[0] + AUCTION_AMOUNT[st.auction_card] + 1

    def reveal_while_bidding(kw):
        env = first_decision(**kw)
        return env, env.unwrapped.game.action_spec["reveal"][0]

    def colour_not_in_hand(kw):
        env, _, missing = reveal_decision(**kw)
        return env, env.unwrapped.game.action_spec["reveal"][missing]

    def bid_while_revealing(kw):
        env, _, _ = reveal_decision(**kw)
        return env, 0

    def non_integer(value):
        def build(kw):
            return first_decision(**kw), value
        return build

    return [
        ("out_of_range", oor, r"out of range 0\.\.90"),
        ("negative", non_integer(-1), r"out of range"),
        ("over_limit", over_limit, r"bid 26 exceeds the limit of 25"),
        ("over_loan_limit", over_loan_limit, r"exceeds the limit of \d+ \(coins \+ loan\)"),
        ("reveal_while_bidding", reveal_while_bidding, r"reveal actions are not allowed"),
        ("colour_not_in_hand", colour_not_in_hand, r"no (Blue|Green|Pink|Purple|Yellow) gem in hand"),
        ("bid_while_revealing", bid_while_revealing, r"must reveal a gem"),
        ("float", non_integer(3.0), r"integers .* not float"),
        ("numpy_float", non_integer(np.float32(3)), r"integers .* not float32"),
        ("string", non_integer("3"), r"integers .* not str"),
        ("none", non_integer(None), r"integers .* not NoneType"),
        ("bool", non_integer(True), r"integers .* not bool"),
        ("array", non_integer(np.array([3])), r"integers .* not ndarray"),
    ]


@pytest.mark.parametrize("label,build,why", illegal_cases(), ids=[c[0] for c in illegal_cases()])
def test_illegal_action_raise(label, build, why):
    env, action = build({})
    agent = env.agent_selection
    raw = env.unwrapped
    before = {a: env.observe(a)["observation"].copy() for a in env.agents}
    state_before = raw.game_state.to_dict()
    with pytest.raises(ValueError) as err:
        env.step(action)
    msg = str(err.value)
    assert agent in msg, msg
    assert repr(action) in msg, msg
    assert re.search(why, msg), msg
    # nothing changed, and the same agent can still act legally
    assert raw.game_state.to_dict() == state_before
    assert env.agent_selection == agent
    assert all(np.array_equal(env.observe(a)["observation"], before[a]) for a in env.agents)
    assert not any(env.terminations.values())
    env.step(masked_choice(np.random.default_rng(0), env.observe(agent)["action_mask"]))


def test_numpy_integer_actions_are_accepted():
    env = first_decision(card_type="treasure")
    env.step(np.int64(1))
    env.step(np.array(2))  # a 0-d integer array, as Discrete.sample() gives
    env.step(np.uint8(0))
    assert env.unwrapped.game_state.bids[:3] == [1, 2, 0]


@pytest.mark.parametrize("label,build,why", illegal_cases()[:7], ids=[c[0] for c in illegal_cases()[:7]])
def test_illegal_action_terminate_aec(label, build, why):
    env, action = build({"illegal_action": "terminate"})
    offender = env.agent_selection
    env.step(action)
    assert all(env.terminations.values())
    assert env.rewards == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    for a in env.possible_agents:
        info = env.infos[a]["illegal_action"]
        assert info["agent"] == offender and re.search(why, info["reason"]) and offender in info["reason"]
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term and not obs["action_mask"].any()
        final[agent] = reward
        env.step(None)
    assert final == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    assert env.agents == []


def test_illegal_action_terminate_parallel():
    env = megagem_v0.parallel_env(num_players=4, illegal_action="terminate")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    actions = {a: masked_choice(rng, obs[a]["action_mask"]) for a in env.agents}
    actions["player_2"] = 10_000
    obs, rew, term, trunc, infos = env.step(actions)
    assert rew == {"player_0": 0.0, "player_1": 0.0, "player_2": -1.0, "player_3": 0.0}
    assert all(term.values()) and not any(trunc.values()) and env.agents == []
    assert all(infos[a]["illegal_action"]["agent"] == "player_2" for a in infos)
    assert "out of range" in infos["player_0"]["illegal_action"]["reason"]
    assert not any(o["action_mask"].any() for o in obs.values())
    with pytest.raises(RuntimeError, match="reset"):
        env.step(actions)


def test_illegal_action_raise_parallel_is_atomic():
    """A raising step applies none of the step's actions, even the legal ones of earlier seats."""
    env = megagem_v0.parallel_env(num_players=4)
    obs, _ = env.reset(seed=5)
    legal = {a: 0 for a in env.agents}
    bad = dict(legal, player_3=10_000)
    with pytest.raises(ValueError, match=r"10000.*by player_3: out of range"):
        env.step(bad)
    assert env.game_state.bids == [None] * 4
    with pytest.raises(ValueError, match="player_1 is to act"):
        env.step({"player_0": 0, "player_2": 0, "player_3": 0})
    out_a = env.step(legal)
    ref = megagem_v0.parallel_env(num_players=4)
    ref.reset(seed=5)
    out_b = ref.step(legal)
    assert_same(out_a, out_b)


# ----------------------------------------------------------------------------- rewards and final infos

def expected_rewards(mode: str, scores: list[float]) -> list[float]:
    n, best = len(scores), max(scores)
    if mode == "win":
        return [1.0 if s == best else -1.0 for s in scores]
    if mode == "score":
        return [s / 100.0 for s in scores]
    if mode == "margin":
        return [(s - max(t for j, t in enumerate(scores) if j != i)) / 100.0 for i, s in enumerate(scores)]
    out = []
    for s in scores:  # rank: +1 first ... -1 last, tied players share the mean of their places
        places = [i for i, t in enumerate(sorted(scores, reverse=True)) if t == s]
        out.append(1.0 - 2.0 * (sum(places) / len(places)) / (n - 1))
    return out


@pytest.mark.parametrize("n", PLAYERS)
def test_rewards_match_final_scores_for_every_mode(n):
    for seed in range(3):
        results = {}
        for mode in REWARD_MODES:
            env = megagem_v0.env(num_players=n, reward=mode)
            final = play_aec_to_end(env, seed, np.random.default_rng(seed))
            assert set(final) == set(env.possible_agents)
            scores = final["player_0"][1]["scores"]
            order = [scores[a] for a in env.possible_agents]
            want = expected_rewards(mode, order)
            got = [final[a][0] for a in env.possible_agents]
            assert got == pytest.approx(want, abs=1e-12), (mode, order)
            results[mode] = order
        # the reward mode does not change the game itself
        assert all(results[m] == results["win"] for m in REWARD_MODES)


def test_reward_edge_cases_ties():
    from gemenvs.core.rewards import terminal_rewards
    assert terminal_rewards("win", [10, 10, 5], 100) == [1.0, 1.0, -1.0]
    assert terminal_rewards("rank", [10, 10, 5], 100) == [0.5, 0.5, -1.0]
    assert terminal_rewards("rank", [1, 2, 3, 4], 100) == pytest.approx([-1, -1 / 3, 1 / 3, 1])
    assert terminal_rewards("margin", [10, 10, 5], 100) == [0.0, 0.0, -0.05]
    assert terminal_rewards("score", [-7, 0, 93], 100) == [-0.07, 0.0, 0.93]
    for mode in REWARD_MODES:
        assert terminal_rewards(mode, [4, 4, 4], 100) == expected_rewards(mode, [4, 4, 4])


@pytest.mark.parametrize("n", PLAYERS)
def test_final_infos_carry_score_breakdown(n):
    env = megagem_v0.env(num_players=n)
    final = play_aec_to_end(env, 11, np.random.default_rng(11))
    infos = {a: info for a, (_, info) in final.items()}
    scores = infos["player_0"]["scores"]
    assert set(scores) == set(env.possible_agents)
    for agent, info in infos.items():
        b = info["score_breakdown"]
        assert set(b) == {"coins", "gems", "missions", "loans", "investments", "total"}
        assert b["coins"] + b["gems"] + b["missions"] + b["loans"] + b["investments"] == b["total"]
        assert info["score"] == b["total"] == scores[agent]
        assert b["coins"] >= 0 and b["gems"] >= 0 and b["missions"] >= 0 and b["loans"] <= 0
        assert info["scores"] == scores
        assert info["winners"] == [a for a in env.possible_agents if scores[a] == max(scores.values())]
        assert info["value_chart"] == "A"
    # the same infos arrive through the Parallel API
    par = megagem_v0.parallel_env(num_players=n)
    obs, _ = par.reset(seed=11)
    rng = np.random.default_rng(11)
    while par.agents:
        acting = [a for a in par.agents if obs[a]["action_mask"].any()]
        obs, rew, term, trunc, pinfos = par.step({a: masked_choice(rng, obs[a]["action_mask"]) for a in acting})
    assert set(pinfos) == set(par.possible_agents)
    assert all(set(i["score_breakdown"]) >= {"coins", "gems", "missions", "loans", "investments"}
               for i in pinfos.values())
    assert rew == {a: expected_rewards("win", list(pinfos[a]["scores"].values()))[i]
                   for i, a in enumerate(par.possible_agents)}


# ----------------------------------------------------------------------------- rendering

def hand_text(hand) -> str:
    return ", ".join(f"{COLOURS[c]} x{k}" for c, k in enumerate(hand) if k)


@pytest.mark.parametrize("n", PLAYERS)
def test_render_ansi_shows_only_the_viewers_hand(n):
    env = megagem_v0.env(num_players=n, render_mode="ansi")
    env.reset(seed=21)
    rng = np.random.default_rng(21)
    raw = env.unwrapped
    checked = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            text = env.render()
            assert "game over" in text and "final scores" in text and "'s hand" not in text
            env.step(None)
            continue
        st = raw.game_state
        text = env.render()
        assert isinstance(text, str)
        viewer = raw.agent_name_mapping[agent]
        assert f"{agent}'s hand: {hand_text(st.hands[viewer])}" in text
        for j in range(n):
            if j != viewer:
                assert f"player_{j}'s hand" not in text
        # re-dealing the other hands (same sizes) must not change the picture
        others = [j for j in range(n) if j != viewer]
        pool = [c for j in others for c in range(5) for _ in range(st.hands[j][c])] + list(st.gem_deck)
        rng.shuffle(pool)
        saved = ([list(h) for h in st.hands], list(st.gem_deck))
        k = 0
        for j in others:
            size = sum(st.hands[j])
            st.hands[j] = [0] * 5
            for c in pool[k:k + size]:
                st.hands[j][c] += 1
            k += size
        st.gem_deck = [int(c) for c in pool[k:]]
        assert env.render() == text
        st.hands, st.gem_deck = saved
        checked += 1
        env.step(masked_choice(rng, obs["action_mask"]))
    assert checked > 10 * n


def test_parallel_render_shows_a_hand_only_to_a_lone_actor():
    env = megagem_v0.parallel_env(num_players=4, render_mode="ansi")
    assert env.render() == "(no game: call reset() first)"
    obs, _ = env.reset(seed=2)
    assert "'s hand" not in env.render()  # four bidders at once: nobody's hand is shown
    rng = np.random.default_rng(2)
    saw_reveal = False
    while env.agents:
        acting = [a for a in env.agents if obs[a]["action_mask"].any()]
        if len(acting) == 1:  # a reveal, or a bid when every other seat's bid was forced
            st = env.game_state
            assert f"{acting[0]}'s hand: {hand_text(st.hands[env.agent_name_mapping[acting[0]]])}" in env.render()
            saw_reveal |= st.phase == "reveal"
        else:
            assert "'s hand" not in env.render()
        obs, *_ = env.step({a: masked_choice(rng, obs[a]["action_mask"]) for a in acting})
    assert saw_reveal and "final scores" in env.render()


def test_render_hides_bids_when_they_are_not_public():
    env = megagem_v0.env(num_players=3, public_bids=False, render_mode="ansi")
    env.reset(seed=1)
    for bid in (5, 9, 2):  # three players with 35 coins: legal on any card
        env.step(bid)
    assert env.unwrapped.game_state.history[-1].bids == [5, 9, 2]
    spec = env.unwrapped.observation_spec
    assert not spec.decode(env.observe("player_0")["observation"])["last_bids"].any()
    text = env.render()
    assert "5, 9, 2" not in text and "[5" not in text


def test_render_without_mode_returns_none():
    env = megagem_v0.env()
    env.reset(seed=0)
    assert env.render() is None


# ----------------------------------------------------------------------------- the Parallel API

@pytest.mark.parametrize("n", PLAYERS)
def test_parallel_bids_in_one_step_reveal_alone(n):
    env = megagem_v0.parallel_env(num_players=n)
    obs, infos = env.reset(seed=40 + n)
    rng = np.random.default_rng(n)
    bid_steps = reveal_steps = 0
    while env.agents:
        st = env.game_state
        acting = [a for a in env.possible_agents if obs[a]["action_mask"].any()]
        if st.phase == "bid":
            # every player bids in the same step, but a seat with nothing to bid, whose 0 is in already
            assert acting == [a for i, a in enumerate(env.possible_agents) if st.bids[i] is None]
            assert all(b == 0 for b in st.bids if b is not None)
            rounds = st.round
            actions = {a: masked_choice(rng, obs[a]["action_mask"]) for a in acting}
            obs, rew, term, trunc, infos = env.step(actions)
            bid_steps += 1
            record = env.game_state.history[rounds - 1]
            assert record.bids == [actions.get(a, 0) for a in env.possible_agents]
        else:
            assert st.phase == "reveal"
            assert acting == [f"player_{st.winner}"], "only the winner acts in a reveal step"
            winner = acting[0]
            mask = obs[winner]["action_mask"]
            assert not any(mask[a] for a in range(mask.size) if a not in env.game.action_spec["reveal"])
            # actions for agents not to act are ignored, whatever they are
            actions = {a: 10**6 for a in env.possible_agents}
            actions[winner] = masked_choice(rng, mask)
            obs, rew, term, trunc, infos = env.step(actions)
            reveal_steps += 1
        assert set(term) == set(rew) == set(env.possible_agents)
    # a round in which every bid was forced (nobody had a coin to bid) took no step
    st, n_seats = env.game_state, len(env.possible_agents)
    bids = [f for _, a, f in st.log if a in env.game.action_spec["bid"]]
    asked_rounds = sum(1 for r in range(st.round) if not all(bids[r * n_seats:(r + 1) * n_seats]))
    assert bid_steps == asked_rounds and 5 <= bid_steps <= st.round <= 25 and reveal_steps > 0
    assert reveal_steps == sum(1 for _, a, f in st.log if a in env.game.action_spec["reveal"] and not f)


def test_not_declared_parallelizable():
    # PettingZoo's aec_to_parallel needs every agent to act once per cycle, and a reveal step is
    # the winner's alone: the env must not claim it converts; megagem_v0.parallel_env is native.
    env = megagem_v0.env(num_players=3)
    assert env.metadata.get("is_parallelizable") is False
    assert megagem_v0.parallel_env(num_players=3).metadata["name"] == "megagem_v0"


# ----------------------------------------------------------------------------- options

BAD_OPTIONS = [
    ("value_chart", "F"), ("value_chart", "a"), ("tie_break", "random"), ("reveal_after", "never"),
    ("two_pairs", "all"), ("public_bids", "yes"), ("public_bids", 1), ("reward", "points"),
    ("illegal_action", "ignore"), ("render_mode", "rgb"),
]


@pytest.mark.parametrize("factory", [megagem_v0.env, megagem_v0.parallel_env, megagem_v0.raw_env])
@pytest.mark.parametrize("option,value", BAD_OPTIONS)
def test_bad_option_values_raise_naming_the_option(factory, option, value):
    with pytest.raises(ValueError, match=option):
        factory(**{option: value})


@pytest.mark.parametrize("value", [2, 6, 0, -4, "4", 4.0, True, None])
def test_wrong_num_players_raises(value):
    for factory in (megagem_v0.env, megagem_v0.parallel_env):
        with pytest.raises(ValueError, match="num_players"):
            factory(num_players=value)
    with pytest.raises(ValueError, match="num_players"):
        pettingzoo.make("parallel", "gemenvs/MegaGem-v0", num_players=value)


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError, match="bogus"):
        megagem_v0.env(bogus=1)


@pytest.mark.parametrize("n", PLAYERS)
def test_every_valid_option_builds_and_plays(n):
    rng = np.random.default_rng(n)
    for chart in ("A", "B", "C", "D", "E", "random"):
        env = megagem_v0.env(num_players=n, value_chart=chart, tie_break="queue", reveal_after="treasure_only",
                             two_pairs="distinct", public_bids=False, reward="rank", illegal_action="terminate")
        final = play_aec_to_end(env, 3, rng)
        charts = {info["value_chart"] for _, info in final.values()}
        assert len(charts) == 1 and charts <= set("ABCDE")
        if chart != "random":
            assert charts == {chart}
