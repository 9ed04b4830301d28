"""The contract every game keeps, run over every registered entry (``gemenvs.entries()``).

As Pgx's ``api_test`` serves every Pgx game, this one file checks every game at every player
count: PettingZoo's API, parallel and seed tests; Gymnasium's ``check_env`` on the
single-learner view; the mask as the single source of legality (``explain`` words every illegal
action, never decides one); forced decisions never reach an agent; state round trips through
JSON; no hidden information in an observation (by resampling what the observer cannot see), nor in what a
program playing a seat over the JSON-lines protocol is sent;
the full state for centralised critics; clear errors for bad input; golden games; docs
coverage of the games with a docs page. A new game gets all of it by registering its entry, as
the tests' own toy game does (``tests/conftest.py``, ``tests/toy_game.py``).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test

from gemenvs.core.engine import IllegalActionError, StateError

import golden

CASES = golden.golden_cases()
IDS = [f"{entry.env_id.split('/')[-1]}-{n}p" for entry, n in CASES]
ENTRIES = list(dict.fromkeys(entry for entry, _ in CASES))


def _envs(entry):
    """The entry's environment functions (``raw_env``, ``env``, ``parallel_env`` ...)."""
    return entry.env_functions()


def _game(entry, n: int):
    return entry.game_class(num_players=n)


def random_states(game, seed: int, games: int = 2, every: int = 7):
    """States met in ``games`` seeded random games (every ``every``-th decision and the last)."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        s = game.new_state(seed * 1000 + g)
        k = 0
        while not game.is_over(s):
            if k % every == 0:
                yield s.copy()
            p = game.to_act(s)[int(rng.integers(len(game.to_act(s))))]
            legal = game.legal_actions(s, p)
            game.apply_legal(s, p, int(legal[rng.integers(legal.size)]))
            k += 1
        yield s


parametrize_cases = pytest.mark.parametrize("entry, n", CASES, ids=IDS)


# ----------------------------------------------------------------------------- PettingZoo and Gymnasium


@parametrize_cases
def test_pettingzoo_api(entry, n):
    api_test(_envs(entry).env(num_players=n), num_cycles=200)


@parametrize_cases
def test_pettingzoo_parallel_api(entry, n):
    parallel_api_test(_envs(entry).parallel_env(num_players=n), num_cycles=200)


@parametrize_cases
def test_pettingzoo_seed(entry, n):
    seed_test(lambda: _envs(entry).env(num_players=n), num_cycles=50)


@parametrize_cases
def test_pettingzoo_parallel_seed(entry, n):
    # parallel_seed_test samples actions without masks: an illegal one must end the game, not raise
    parallel_seed_test(lambda: _envs(entry).parallel_env(num_players=n, illegal_action="terminate"))


@parametrize_cases
def test_pettingzoo_render(entry, n, capsys):
    def env_fn(render_mode=None):
        return _envs(entry).env(num_players=n, render_mode=render_mode)

    render_test(env_fn, custom_tests={"ansi": lambda text: isinstance(text, str) and len(text) > 20})
    assert capsys.readouterr().out  # human mode printed the picture


@parametrize_cases
def test_registered_in_both_registries(entry, n):
    import gymnasium
    import pettingzoo

    env_id = entry.env_id
    assert env_id in pettingzoo.aec_registry and env_id in pettingzoo.parallel_registry
    assert env_id in gymnasium.registry
    env = pettingzoo.make("aec", env_id, num_players=n)
    env.reset(seed=1)
    assert len(env.possible_agents) == n


@parametrize_cases
def test_gymnasium_check_env_on_single_learner_view(entry, n):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(entry.env_id, num_players=n, opponents="random", disable_env_checker=True)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    mask = env.unwrapped.action_masks()
    assert mask.any() and env.observation_space.contains(obs)


# ----------------------------------------------------------------------------- legality


@parametrize_cases
def test_mask_is_the_only_source_of_legality(entry, n):
    """Every action id of every seat: legal exactly when masked; an illegal one gets words from explain."""
    game = _game(entry, n)
    for s in random_states(game, seed=11, games=1, every=5):
        if game.is_over(s):
            assert all(game.why_illegal(s, p, 0) == "the game is over" for p in range(n))
            continue
        acting = game.to_act(s)
        for p in range(n):
            mask = game.legal_mask(s, p)
            assert mask.dtype == np.int8 and mask.shape == (game.num_actions,)
            if p not in acting:
                assert not mask.any(), f"seat {p} is not to act but has legal actions"
                continue
            assert mask.sum() >= 2, "a decision with a single legal action must be played by the engine"
            for a in range(game.num_actions):
                reason = game.why_illegal(s, p, a)
                assert (reason is None) == bool(mask[a]), (p, a, reason)
                if not mask[a]:
                    assert isinstance(reason, str) and reason and reason != "legal", (p, a)


@parametrize_cases
def test_forced_decisions_are_played_and_logged_by_the_engine(entry, n):
    """No agent is ever asked a one-option question; forced decisions are in the log, flagged."""
    game = _game(entry, n)
    forced_seen = 0
    for s in random_states(game, seed=5, games=3, every=1000):
        if not game.is_over(s):
            continue
        for p, a, f in s.log:
            assert 0 <= p < n and 0 <= a < game.num_actions and f in (0, 1)
        forced_seen += sum(f for _, _, f in s.log)
        assert len(s.log) <= game.max_decisions
        for viewer in range(n):
            view = game.visible_log(s, viewer)
            assert len(view) == len(s.log)
            for (p, a, f), (vp, va, vf) in zip(s.log, view):
                assert vp == p
                if p == viewer:
                    assert (va, vf) == (a, bool(f))
                elif not game.forced_is_public:
                    assert vf is None, "another seat's forced flag may reveal hidden information"
    assert forced_seen >= 0


@parametrize_cases
def test_bad_actions_are_illegal_with_a_clear_message(entry, n):
    env = _envs(entry).env(num_players=n)
    env.reset(seed=0)
    size = env.action_space(env.agent_selection).n
    for bad in (math.inf, math.nan, -1, size, 10**30, 2.0, "1", None, True, np.float64(1.0)):
        with pytest.raises(IllegalActionError, match="illegal action"):
            env.step(bad)
    # under "terminate" the offender gets -1 and the game ends
    env = _envs(entry).env(num_players=n, illegal_action="terminate")
    env.reset(seed=0)
    offender = env.agent_selection
    env.step(math.inf)
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1.0
    assert "not float" in env.infos[offender]["illegal_action"]["reason"]


@parametrize_cases
def test_parallel_terminate_penalises_every_offender_and_rejects_unknown_agents(entry, n):
    penv = _envs(entry).parallel_env(num_players=n, illegal_action="terminate")
    obs, _ = penv.reset(seed=0)
    acting = [a for a in penv.agents if obs[a]["action_mask"].any()]
    with pytest.raises(ValueError, match="unknown agent"):
        penv.step({**{a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in acting}, "player_99": 0})
    _, rewards, terms, _, infos = penv.step({a: -5 for a in acting})
    assert all(terms.values())
    assert {a for a, r in rewards.items() if r == -1.0} == set(acting)
    assert set(infos[acting[0]]["illegal_action"]["offenders"]) == set(acting)
    with pytest.raises(RuntimeError, match="reset"):
        penv.step({})


@parametrize_cases
def test_calls_before_reset_and_bad_seeds_are_clear_errors(entry, n):
    raw = _envs(entry).raw_env(num_players=n)
    with pytest.raises(RuntimeError, match="reset"):
        raw.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        raw.observe("player_0")
    for seed in (-1, 2**64, 1.5, "7"):
        with pytest.raises(ValueError, match="seed"):
            raw.reset(seed=seed)
    penv = _envs(entry).parallel_env(num_players=n)
    with pytest.raises(RuntimeError, match="reset"):
        penv.step({})
    with pytest.raises(RuntimeError, match="reset"):
        penv.state()


@parametrize_cases
def test_option_values_are_checked_by_type_and_player_count(entry, n):
    mod = _envs(entry)
    counts = entry.player_counts
    for bad in (max(counts) + 1, min(counts) - 1, True, float(n), str(n)):
        with pytest.raises(ValueError, match="num_players"):
            mod.env(num_players=bad)
    for option, bad in (("reward", np.array(["win"])), ("illegal_action", ["raise"]), ("render_mode", "rgb")):
        with pytest.raises(ValueError, match=option):
            mod.env(num_players=n, **{option: bad})
    with pytest.raises(TypeError):
        mod.env(num_players=n, no_such_option=1)


# ----------------------------------------------------------------------------- state


@parametrize_cases
def test_state_round_trips_through_json_and_copies_continue_identically(entry, n):
    game = _game(entry, n)
    rng = np.random.default_rng(1)
    for s in random_states(game, seed=3, games=1, every=9):
        d = s.to_dict()
        text = json.dumps(d)
        back = game.state_from_dict(json.loads(text))
        assert back == s and back.to_dict() == d
        c = s.copy()
        assert c == s
        if not game.is_over(s):
            p = game.to_act(s)[0]
            legal = game.legal_actions(s, p)
            a = int(legal[rng.integers(legal.size)])
            game.apply_legal(c, p, a)
            game.apply_legal(back, p, a)
            assert back == c and c != s


@parametrize_cases
def test_state_from_dict_rejects_bad_input_with_short_messages(entry, n):
    game = _game(entry, n)
    s = next(random_states(game, seed=4, games=1, every=13))
    d = json.loads(json.dumps(s.to_dict()))
    bad_cases = [
        ("not a dict", [1, 2]),
        ("nan", {**d, "seed": math.nan}),
        ("numpy value", {**d, "seed": np.int64(d["seed"])}),
        ("tuple", {**d, "log": tuple(d["log"])}),
        ("missing log", {k: v for k, v in d.items() if k != "log"}),
        ("negative seed", {**d, "seed": -3}),
        ("junk log entry", {**d, "log": d["log"] + [["x", 1, 0]]}),
        ("illegal logged action", {**d, "log": d["log"] + [[0, -1, 0]]}),
        ("unknown key", {**d, "bogus": 1}),
    ]
    field = next(k for k in d if k not in ("seed", "log"))
    bad_cases.append(("tampered field", {**d, field: [d[field], "junk" * 100]}))
    for label, bad in bad_cases:
        with pytest.raises(StateError) as err:
            game.state_from_dict(bad)
        assert len(str(err.value)) < 200, (label, str(err.value))
        assert "junkjunk" not in str(err.value)


@parametrize_cases
def test_full_state_for_centralised_critics(entry, n):
    for env in (_envs(entry).env(num_players=n), _envs(entry).parallel_env(num_players=n)):
        env.reset(seed=2)
        st = env.state()
        space = env.unwrapped.state_space if hasattr(env, "unwrapped") else env.state_space
        assert st.dtype == np.float32 and st.shape == space.shape
        assert space.contains(st)
        assert st.size == env.unwrapped.state_spec.size


# ----------------------------------------------------------------------------- hidden information


@parametrize_cases
def test_no_hidden_information_in_observations(entry, n):
    """Resampling what a seat cannot see changes nothing it observes (observation, mask, visible log)."""
    game = _game(entry, n)
    rng = np.random.default_rng(9)
    changed = 0
    for s in random_states(game, seed=8, games=2, every=6):
        if game.is_over(s):
            continue
        for observer in range(n):
            r = game.resample_hidden(s, observer, rng)
            assert r is not s
            np.testing.assert_array_equal(game.observe(r, observer), game.observe(s, observer))
            np.testing.assert_array_equal(game.legal_mask(r, observer), game.legal_mask(s, observer))
            assert game.visible_log(r, observer) == game.visible_log(s, observer)
            assert game.to_act(r) == game.to_act(s)
            changed += r != s
            # the resampled state is a playable game
            p = game.to_act(r)[0]
            game.apply_legal(r, p, int(game.legal_actions(r, p)[0]))
    assert changed > 0, "resample_hidden never changed anything: is there really nothing hidden?"


@parametrize_cases
def test_no_hidden_information_in_protocol_messages(entry, n):
    """What a program playing a seat over the JSON-lines protocol is sent (gemenvs.agents.protocol: the start
    message, and a decide message with the events since any earlier point) is the same, byte for byte, in
    every state that seat cannot tell apart (the state with what it cannot see resampled)."""
    from gemenvs.agents.protocol import Limits, Seen, decide_message, encode, start_message

    game = _game(entry, n)
    rng = np.random.default_rng(10)
    compared = 0
    for s in random_states(game, seed=8, games=1, every=6):
        if game.is_over(s):
            continue
        for observer in range(n):
            r = game.resample_hidden(s, observer, rng)
            assert encode(start_message(game, observer, Limits())) == encode(start_message(_game(entry, n), observer,
                                                                                           Limits()))
            # (the events since the game's start: those since any later point are a part of them)
            assert encode(decide_message(game, r, observer, Seen())) == encode(decide_message(game, s, observer, Seen())), \
                f"seat {observer} is sent something it cannot see"
            compared += 1
    assert compared > 0


# ----------------------------------------------------------------------------- golden games and docs


@parametrize_cases
def test_golden_game_replays(entry, n):
    path = golden.golden_path(entry.env_id, n)
    assert path.exists(), f"no golden game {path.name}: run `python tests/golden.py --game {entry.name}` and commit it"
    record = json.loads(path.read_text())
    assert record["env_id"] == entry.env_id and record["options"] == {"num_players": n}
    why = golden.first_difference(record, entry)
    assert why is None, f"{path.name}: {why} (a deliberate change re-records with `python tests/golden.py`)"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.docs_page is not None], ids=lambda e: e.name)
def test_docs_cover_every_observation_slot_and_action_id(entry):
    import gen_tables_loader

    gen = gen_tables_loader.load()
    game_class = entry.game_class
    assert gen.GAME_PAGES.get(entry.docs_page) == entry, f"docs/gen_tables.py has no page for {game_class.__name__}"
    counts = entry.player_counts
    assert tuple(counts) == tuple(game_class.player_counts)
    text = (gen.DOCS / entry.docs_page).read_text()
    for n in counts:
        assert f"<!-- BEGIN obs-table players={n} -->" in text and f"<!-- BEGIN action-table players={n} -->" in text
        game = game_class(num_players=n)
        block = text.split(f"<!-- BEGIN obs-table players={n} -->")[1].split("<!-- END")[0]
        names = [line.split(" | ")[3].strip("`") for line in block.splitlines()
                 if line.startswith("| ") and not line.startswith("| offset")]
        assert names == game.spec.names
        block = text.split(f"<!-- BEGIN action-table players={n} -->")[1].split("<!-- END")[0]
        names = [line.split(" | ")[1].strip("`") for line in block.splitlines()
                 if line.startswith("| ") and not line.startswith("| ids")]
        assert names == game.action_spec.names


def test_golden_replay_names_the_first_differing_observation_slot():
    entry, n = CASES[0]
    record = json.loads(golden.golden_path(entry.env_id, n).read_text())
    spec = _game(entry, n).spec
    k = 3
    slot = min(int(i) for i in record["steps"][k]["observation"])
    record["steps"][k]["observation"][str(slot)] += 0.5
    name = next(s.name for s in spec.slices if s.offset <= slot < s.stop)
    why = golden.first_difference(record, entry)
    assert why.startswith(f"decision {k} ") and f"observation slot {slot} = {name}" in why
    record = json.loads(golden.golden_path(entry.env_id, n).read_text())
    record["scores"][0] += 1
    assert "final scores" in golden.first_difference(record, entry)


@parametrize_cases
def test_final_infos_share_no_mutable_object_between_agents(entry, n):
    penv = _envs(entry).parallel_env(num_players=n)
    obs, _ = penv.reset(seed=5)
    rng = np.random.default_rng(5)
    while penv.agents:
        acts = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items() if o["action_mask"].any()}
        obs, rewards, terms, truncs, infos = penv.step(acts)
    a, b = penv.possible_agents[:2]
    assert infos[a]["winners"] == infos[b]["winners"]
    infos[a]["winners"].append("someone")
    infos[a]["scores"][a] = 1e9
    assert "someone" not in infos[b]["winners"] and infos[b]["scores"][a] != 1e9
