"""The Gem Jam environments: full games, final infos, who decides, illegal actions, the documented sizes
(PettingZoo's API, parallel, seed and render tests run for every game in tests/test_contract.py)."""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs import gemjam_v0
from gemenvs.core.engine import IllegalActionError


def play_out(env, seed=0, final=None):
    """A random game through the AEC env; returns the number of agent decisions (``final``
    collects each agent's (reward, info) at its end)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            if final is not None:
                final[agent] = (reward, info)
            env.step(None)
            continue
        assert obs["action_mask"].sum() >= 2
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return steps


def test_a_full_game_ends_with_rewards_and_infos():
    env = gemjam_v0.env(render_mode="ansi")
    final = {}
    assert play_out(env, 1, final) > 50
    raw = env.unwrapped
    info = final["player_0"][1]
    assert info["end_reason"] in ("four_sets", "deck_out", "max_rounds")
    assert set(info["score_breakdown"]) == {"completed_sets", "won"}
    rewards = sorted(r for r, _ in final.values())
    assert rewards in ([-1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert "game over" in env.render()
    log = raw.game.game_log(raw.game_state, 0)
    assert any("casts" in line for line in log) and any(line.startswith("game over") for line in log)


def test_agent_selection_follows_responders_and_payers():
    env = gemjam_v0.env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    seen = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        d = env.unwrapped.game_state.decision
        seen.add((d.kind, env.unwrapped.game_state.turn == d.seat))
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert any(not own for _, own in seen)  # someone decided in another player's turn


def test_illegal_actions_raise_or_terminate():
    env = gemjam_v0.env()
    env.reset(seed=0)
    mask = env.last()[0]["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(bad)
    env = gemjam_v0.env(illegal_action="terminate")
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(bad)
    assert env.unwrapped.rewards[agent] == -1.0 and all(env.unwrapped.terminations.values())


def test_observation_spec_and_action_spec_are_exposed():
    env = gemjam_v0.env(num_players=4)
    env.reset(seed=0)
    spec = env.unwrapped.observation_spec
    obs = env.observe(env.agent_selection)["observation"]
    assert obs.shape == (spec.size,) and obs.dtype == np.float32
    low, high = spec.bounds()
    assert (obs >= low).all() and (obs <= high).all()
    names = env.unwrapped.game.action_spec.names
    assert names == ["play", "bank", "end_plays", "adjust", "gem_type", "target_player", "king_vault", "set",
                     "new_set", "card", "yes", "pass"]


def test_module_docstring_states_the_sizes():
    from gemenvs.gemjam import GemJam

    doc = gemjam_v0.__doc__
    sizes = [GemJam(num_players=n).spec.size for n in (2, 3, 4)]
    actions = [GemJam(num_players=n).num_actions for n in (2, 3, 4)]
    assert f"{sizes[0]} (2 players), {sizes[1]} (3 players), {sizes[2]} (4 players)" in doc
    assert f"Discrete({actions[0]}) for 2 players, {actions[1]} for 3, {actions[2]} for 4" in doc


def test_game_log_reaches_infos_as_each_agent_may_see_it():
    """Every event an agent may see reaches its infos["game_log"] exactly once, in order."""
    env = gemjam_v0.env(num_players=3)
    env.reset(seed=4)
    raw = env.unwrapped
    read = {a: [] for a in raw.possible_agents}
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        read[agent] += info.get("game_log", [])  # what it is shown at its decision (or at the end)
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    full = raw.game.game_log(raw.game_state, None)
    assert any("cast" in e for e in full) and len(full) > 20
    for i, a in enumerate(raw.possible_agents):
        assert read[a] == raw.game_log(a) == raw.game.game_log(raw.game_state, i)


def test_type_progress_summarises_every_shrine_from_the_observers_seat():
    """type_progress row r, type t: fullest incomplete set's fill and Basic, completed sets, all gems of t."""
    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    cfg = game.cfg
    rng = np.random.default_rng(3)
    state = game.new_state(11)
    checked = 0
    while not game.is_over(state) and checked < 40:
        p = game.to_act(state)[0]
        game.apply(state, p, int(rng.choice(np.flatnonzero(game.legal_mask(state, p)))))
        if len(state.log) % 25:
            continue
        checked += 1
        viewer = int(rng.integers(3))
        got = game.spec.decode(game.observe(state, viewer))["type_progress"]
        for q in range(3):
            want = np.zeros((cfg.num_types, 4))
            for s in state.shrines[q]:
                t, gems = s.gem_type, s.gems
                want[t, 3] += len(gems)
                if len(gems) == cfg.set_size[t] and cfg.basic_of[t] in gems:
                    want[t, 2] += 1
                    continue
                fill = len(gems) / cfg.set_size[t]
                if (fill, cfg.basic_of[t] in gems) > (want[t, 0], want[t, 1]):
                    want[t, 0], want[t, 1] = fill, cfg.basic_of[t] in gems
            want[:, 2:] /= 4  # stored as counts / 4
            np.testing.assert_allclose(got[(q - viewer) % 3], want, atol=1e-6, err_msg=f"seat {q} seen by {viewer}")
    assert checked >= 10
