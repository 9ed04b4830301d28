"""Behaviour-cloning warm start (gemenvs.training.pretrain): the teacher's demonstrations are its own
legal decisions with correctly discounted returns, cloning makes the policy follow the teacher, and
the config checks the new section."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from gemenvs.agents.registry import make_agent  # noqa: E402
from gemenvs.training.config import ConfigError, load_config  # noqa: E402
from gemenvs.training.pretrain import _agreement_and_mse, clone, collect  # noqa: E402
from gemenvs.training.selfplay import make_model, make_vec_env  # noqa: E402
from gemenvs.arena.single_agent import make_aec_env  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
GEMJAM = "gemenvs/GemJam-v0"


def test_demonstrations_are_the_teachers_legal_choices_with_discounted_returns():
    gamma = 0.9
    data = collect(GEMJAM, {"num_players": 3}, "rule", games=2, seed=5, reward="win", gamma=gamma)
    n = len(data)
    assert data.obs.shape == (n, 3187) and data.masks.shape == (n, 233) and data.obs.dtype == np.float32
    assert set(np.unique(data.game)) == {5, 6}
    assert data.masks[np.arange(n), data.actions].all(), "every demonstrated action is legal where it was taken"
    env = make_aec_env(GEMJAM, num_players=3)
    teacher = make_agent("gemjam", "rule", env)  # deterministic: it reproduces its own choices
    assert all(teacher.act(o, m) == a for o, m, a in zip(data.obs[:200], data.masks[:200], data.actions[:200]))
    # returns: +-1 discounted by gamma per later decision of the same seat, |return| = 1 at its last decision
    game = env.unwrapped.game
    for seed in (5, 6):
        rows = np.flatnonzero(data.game == seed)
        state = game.new_state(seed)
        seats = []
        for row in rows:
            p = game.to_act(state)[0]
            assert np.array_equal(game.observe(state, p), data.obs[row])
            seats.append(p)
            game.apply(state, p, int(data.actions[row]))
        assert game.is_over(state)
        winners = game.results(state).winners
        for p in range(3):
            mine = rows[np.array(seats) == p]
            sign = 1.0 if p in winners else -1.0
            expected = sign * gamma ** np.arange(len(mine) - 1, -1, -1)
            assert np.allclose(data.returns[mine], expected)


def test_a_teacher_that_reads_the_state_is_handed_it():
    """Gem Jam's lookahead teacher (needs_state) decides from the engine state, as in matches: the rows are its
    own choices (agents rebuilt with the same seeds replay them exactly), and some differ from the rule agent's."""
    from gemenvs.agents.base import decide

    seed = 3
    data = collect(GEMJAM, {"num_players": 3}, "lookahead", games=1, seed=seed)
    env = make_aec_env(GEMJAM, num_players=3)
    game = env.unwrapped.game
    teachers = [make_agent("gemjam", "lookahead", env, seed=seed * 1009 + i) for i in range(3)]
    rule = make_agent("gemjam", "rule", env)
    state, differ = game.new_state(seed), 0
    for o, m, a in zip(data.obs, data.masks, data.actions):
        p = game.to_act(state)[0]
        assert np.array_equal(game.observe(state, p), o)
        assert decide(teachers[p], state, p, game.observe(state, p), game.legal_mask(state, p)) == a
        differ += rule.act(o, m.astype(np.int8)) != a
        game.apply(state, p, int(a))
    assert game.is_over(state) and differ > 0


def test_cloning_makes_the_policy_follow_the_teacher(tmp_path):
    cfg = load_config(CONFIGS / "gemjam" / "selfplay.yaml",
                      ["n_envs=1", "ppo.net_arch=[64]", f"run_root={tmp_path}",
                       "env.features=null", "pretrain.teacher=rule"])
    data = collect(GEMJAM, {"num_players": 3}, "rule", games=12, seed=0, reward="win", gamma=cfg.ppo.gamma)
    env = make_vec_env(cfg)
    try:
        model = make_model(cfg, env)
        before = clone(model.policy, data, epochs=0, seed=0)
        _, mse_before = _agreement_and_mse(model.policy, data)
        after = clone(model.policy, data, epochs=6, batch_size=128, learning_rate=1e-3, seed=0)
        _, mse_after = _agreement_and_mse(model.policy, data)
    finally:
        env.close()
    assert after.train_agreement > max(0.7, before.train_agreement + 0.3), (before, after)
    assert after.heldout_agreement > before.heldout_agreement
    assert mse_after < mse_before, "the critic fits the returns of the games it was trained on"
    assert "agreement with the teacher" in after.line()


def test_pretrain_section_is_checked():
    path = CONFIGS / "gemjam" / "selfplay.yaml"
    with pytest.raises(ConfigError, match="pretrain.teacher: unknown opponent 'rules' for gemjam"):
        load_config(path, ["pretrain.teacher=rules"])
    with pytest.raises(ConfigError, match="pretrain.games must be at least 1; got 0"):
        load_config(path, ["pretrain.games=0"])
    with pytest.raises(ConfigError, match="pretrain.learning_rate must be greater than 0"):
        load_config(path, ["pretrain.learning_rate=0"])
    with pytest.raises(ConfigError, match="pretrain.teacher: .*"):
        load_config(path, ["pretrain.teacher=/nonexistent/policy.npz"])


def test_dagger_rows_are_the_students_states_labelled_by_the_teacher():
    from gemenvs.agents.random_agent import RandomAgent

    env = make_aec_env(GEMJAM, num_players=3)
    student = RandomAgent.for_env(env, seed=0)
    data = collect(GEMJAM, {"num_players": 3}, "rule", games=2, seed=7, gamma=1.0, student=student)
    game, teacher = env.unwrapped.game, make_agent("gemjam", "rule", env)
    for seed in (7, 8):
        rows = np.flatnonzero(data.game == seed)
        learner = seed % 3  # the student's seat
        # replay: the student's seat plays what the random student chose (reseeded as collect does)
        student.reset(seed=seed)
        state, k = game.new_state(seed), 0
        while not game.is_over(state):
            p = game.to_act(state)[0]
            o, m = game.observe(state, p), game.legal_mask(state, p)
            if p == learner:
                row = rows[k]
                assert np.array_equal(o, data.obs[row]) and data.actions[row] == teacher.act(o, m)
                k += 1
                a = student.act(o, m)
            else:
                a = teacher.act(o, m)
            game.apply(state, p, a)
        assert k == len(rows) > 0, "only the student's decisions are kept, all of them"
        sign = 1.0 if learner in game.results(state).winners else -1.0
        assert np.all(data.returns[rows] == sign)
