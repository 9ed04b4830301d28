"""The GEM PettingZoo environments: what is GEM's own (registry, options, masks, rewards, infos).

PettingZoo's suites, round trips, the leak test and golden games run for every game in
``tests/test_contract.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import gemenvs
from gemenvs import gem_v0
from gemenvs.agents import RandomAgent
from gemenvs.arena import play_game, run_match
from gemenvs.agents.gem import GemGreedyAgent
from gemenvs.core.engine import IllegalActionError
from gemenvs.gem import rules
from gemenvs.core.rewards import terminal_rewards
from gemenvs.gem.rules import OVER


def test_registered_in_pettingzoo():
    import pettingzoo

    assert gemenvs.entry("gemenvs/GEM-v0") is gemenvs.gem_v0.ENTRY
    env = pettingzoo.make("aec", "gemenvs/GEM-v0", num_players=4)
    env.reset(seed=1)
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    par = pettingzoo.make("parallel", "gemenvs/GEM-v0", num_players=2)
    par.reset(seed=1)


def test_spaces_and_spec():
    env = gem_v0.raw_env(num_players=3)
    spec = env.observation_spec
    assert env.action_space("player_0").n == 122
    assert env.observation_space("player_0")["observation"].shape == (spec.size,) == (413,)
    table = spec.markdown_table()
    for name in ("card_place", "bid_state", "credit", "owed", "capital"):
        assert f"`{name}`" in table
    env.reset(seed=3)
    obs = env.observe("player_0")
    d = spec.decode(obs["observation"])
    assert d["phase"].tolist() == [1, 0, 0, 0] and d["actor"].tolist() == [1, 0, 0]
    assert np.allclose(d["capital"], [6, 6, 6])
    face_up = env.unwrapped.game_state.face_up
    assert sorted(np.flatnonzero(d["card_place"][:, 1]).tolist()) == face_up
    assert d["card_place"][:, 0].sum() == 15 and d["hidden_cards"][0] == pytest.approx(15)
    assert np.allclose(d["card_value"][:3], 2) and d["card_cost"][3] == pytest.approx(3)


def test_module_docstring_actions_match_the_action_spec():
    spec = gem_v0.raw_env().action_spec
    doc = " ".join(gem_v0.__doc__.split())
    assert f"Discrete({spec.size})" in doc
    for r in spec.ranges:
        ids = f"{r.start}" if r.size == 1 else f"{r.start}..{r.stop - 1}"
        assert f"`{r.name}` {ids}" in doc, f"gem_v0's docstring does not give {r.name} as {ids}"


def test_face_down_stacks_are_not_observed():
    g = gem_v0.raw_env(num_players=3).game
    deal = [[0, 3, 8], [1, 4, 9], [2, 5, 10], [6, 11, 12], [7, 13, 14], [15, 16, 17]]
    swapped = [deal[0], deal[3], deal[2], deal[1], deal[5], deal[4]]
    a, b = rules.state_from_deal(g.cfg, deal), rules.state_from_deal(g.cfg, swapped)
    for p in range(3):
        assert np.array_equal(g.observe(a, p), g.observe(b, p))


def test_masks_follow_the_engine_and_observations_stay_in_bounds():
    env = gem_v0.env(num_players=4)
    env.reset(seed=8)
    game = env.unwrapped.game
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert space.contains(obs["observation"])
        if term or trunc:
            env.step(None)
            continue
        state = env.unwrapped.game_state
        legal = game.legal_actions(state, env.unwrapped.agent_name_mapping[agent]).tolist()
        assert np.flatnonzero(obs["action_mask"]).tolist() == legal and len(legal) >= 2
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(int(rng.choice(legal)))


def test_illegal_action_raise_and_terminate():
    env = gem_v0.env(num_players=3)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opening bidder must bid"):
        env.step(63)  # pass
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(500)
    with pytest.raises(IllegalActionError, match="actions are integers"):
        env.step(1.5)
    env = gem_v0.env(num_players=3, illegal_action="terminate")
    env.reset(seed=0)
    env.step(7)  # bid 7 > capital 6
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0}
    assert "exceeds the 6" in env.infos["player_1"]["illegal_action"]["reason"]


def test_bad_options_are_errors():
    with pytest.raises(ValueError, match="reward"):
        gem_v0.env(reward="points")
    with pytest.raises(ValueError, match="illegal_action"):
        gem_v0.env(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode"):
        gem_v0.env(render_mode="rgb")
    with pytest.raises(ValueError, match="num_players"):
        gem_v0.env(num_players=5)


def test_final_infos_carry_the_score_breakdown():
    env = gem_v0.env(num_players=3)
    agents = [RandomAgent.for_env(env, seed=i) for i in range(3)]
    final = play_game(env, agents, seed=5)
    state = env.unwrapped.game_state
    res = env.unwrapped.game.results(state)
    for i, agent in enumerate(env.possible_agents):
        info = final[agent]
        b = info["score_breakdown"]
        assert {"gems", "majorities", "total"} <= set(b) and b["total"] == b["gems"] + b["majorities"]
        assert info["score"] == res.scores[i] == info["scores"][agent]
        assert info["winners"] == [env.possible_agents[w] for w in res.winners]


def test_rewards_use_the_tiebreak():
    env = gem_v0.raw_env(num_players=3)
    g = env.game
    s = g.new_state(0)
    s.owner, s.invested = [-1] * 18, [False] * 18
    for p, cards in {0: [4, 0], 1: [7], 2: [17, 14]}.items():  # 9 points (3 gems), 4, 9 (4 gems)
        for c in cards:
            s.owner[c], s.invested[c] = p, True
    s.phase = OVER
    res = g.results(s)

    def gem_rewards(mode):
        return terminal_rewards(mode, res.scores, g.score_scale, res.rank_keys)

    assert gem_rewards("win") == [-1.0, -1.0, 1.0]
    assert gem_rewards("rank") == [0.0, -1.0, 1.0]
    assert gem_rewards("score") == pytest.approx([9 / 30, 4 / 30, 9 / 30])
    assert gem_rewards("margin") == pytest.approx([0.0, -5 / 30, 0.0])
    # through the env: the last step of a finished game hands out these rewards
    env.reset(seed=0)
    env.game_state = s
    env._end_game()
    assert env.rewards == {"player_0": -1.0, "player_1": -1.0, "player_2": 1.0}


def test_render_modes(capsys):
    env = gem_v0.env(num_players=2, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert text.startswith("GEM - round 1/6: auction, player_0 to bid") and ">player_0" in text
    env = gem_v0.env(num_players=2, render_mode="human")
    env.reset(seed=4)
    env.step(0)
    assert "GEM - round 1/6" in capsys.readouterr().out


def test_random_and_greedy_agents_play():
    env = gem_v0.env(num_players=3)
    greedy = GemGreedyAgent.for_env(env, seed=0)
    result = run_match(lambda: gem_v0.env(num_players=3), greedy,
                       [RandomAgent.for_env(env, seed=1), RandomAgent.for_env(env, seed=2)], games=24, seed=1000)
    assert result.games == 24 and result.win_rate >= 0.7


def test_observation_cache_follows_any_state():
    """The encoder keeps the card and coin parts of the latest state it saw (keyed by their
    values): two games observed in turn, and a state changed by hand in place, still get the
    observation of an encoder that never saw another state."""
    from gemenvs.gem import Gem
    from gemenvs.gem.encode import Encoder

    g = Gem(num_players=3)
    rng = np.random.default_rng(5)
    games = [g.new_state(1), g.new_state(2)]
    for _ in range(60):
        for s in games:
            if g.is_over(s):
                continue
            for p in range(3):
                assert np.array_equal(g.observe(s, p), Encoder(g.cfg).observe(s, p))
            legal = g.legal_actions(s, s.current)
            g.apply_legal(s, s.current, int(legal[rng.integers(legal.size)]))
    s = games[0]
    g.observe(s, 0)
    s.owner[s.owner.index(-1)] = 1  # in place: the same list objects, new values
    s.coins[2][0] = not s.coins[2][0]
    assert np.array_equal(g.observe(s, 0), Encoder(g.cfg).observe(s, 0))
