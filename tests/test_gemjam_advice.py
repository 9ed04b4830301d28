"""Observation features computed from the engine state (Gem Jam's ``gemjam_lookahead_advice``): the numbers are
the lookahead's own, hold nothing the seat cannot see, reach the learner, the pretraining games and a saved
policy alike, and the config checks what cannot run."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from gemenvs.arena import play_game
from gemenvs.agents.features import GemJamLookaheadAdvice, features_from_dict, make_features
from gemenvs.agents.gemjam import GemJamLookaheadAgent, GemJamRuleAgent
from gemenvs.agents.policy import PolicyAgent
from gemenvs.gemjam_v0 import env as gemjam_env

ENV_ID = "gemenvs/GemJam-v0"
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "gemjam" / "selfplay.yaml"
A = 233  # Gem Jam's actions at 3 players


def rule_states(seed: int, every: int = 5, limit: int = 10):
    """(game, state, seat) at multi-choice decisions of a game of rule agents (every ``every``-th decision)."""
    env = gemjam_env(num_players=3)
    game = env.unwrapped.game
    rule = GemJamRuleAgent.for_env(env)
    state, k, out = game.new_state(seed), 0, []
    while not game.is_over(state) and len(out) < limit:
        p = game.to_act(state)[0]
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        if np.count_nonzero(mask) > 1:
            k += 1
            if k % every == 0:
                out.append((game, state.copy(), p))
        game.apply(state, p, rule.act(obs, mask))
    return out


def test_the_numbers_are_the_lookaheads_scores_and_choices():
    feats = make_features("gemjam_lookahead_advice", {"num_players": 3}, game="gemjam")
    assert feats.size == 3 * A + 1 and feats.labels[0] == "value_0" and feats.labels[-1] == "searched"
    assert feats.options == {"num_players": 3, "samples": 2}, "the sample count is written into the options"
    searched = 0
    for game, state, p in rule_states(seed=4):
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        feats.reset(seed=11)
        row = feats.from_state(state, p)
        look = GemJamLookaheadAgent(game, samples=2, seed=11)
        choice, value = look.action_values(state, p)
        look.reset(seed=11)
        assert feats.advised(row) == look.act_with_state(state, p, obs, mask), "advice_<a>: the lookahead's choice"
        assert row[2 * A:3 * A].argmax() == GemJamRuleAgent.for_env(gemjam_env(num_players=3)).act(obs, mask)
        assert row[A:2 * A].sum() == row[2 * A:3 * A].sum() == 1
        assert not row[:A][mask == 0].any(), "no score for an illegal action"
        if value is None:
            assert row[-1] == 0 and not row[:A].any()
        else:
            searched += 1
            assert row[-1] == 1 and row[choice] == 0
            for a, v in value.items():
                assert row[a] == pytest.approx((v - value[choice]) * 10, abs=1e-5)
        full = feats.augment_state(obs, state, p)
        assert full.shape == (3187 + feats.size,) and np.array_equal(full[:3187], obs)
    assert searched >= 3


def test_the_numbers_never_read_what_the_seat_cannot_see():
    """Re-dealing the hidden part of the state (resample_hidden from the seat) leaves the numbers unchanged."""
    feats = GemJamLookaheadAdvice({"num_players": 3, "samples": 1})
    redeal = np.random.default_rng(5)
    checked = 0
    for game, state, p in rule_states(seed=9, every=4, limit=8):
        other = game.resample_hidden(state, p, redeal)
        assert other.to_dict() != state.to_dict()
        feats.reset(seed=3)
        row = feats.from_state(state, p)
        feats.reset(seed=3)
        assert np.array_equal(feats.from_state(other, p), row)
        checked += 1
    assert checked >= 6


def test_state_features_are_checked_and_travel_as_their_description():
    feats = make_features("gemjam_lookahead_advice", {"num_players": 4, "samples": 1})
    assert feats.needs_state and feats.size == 3 * feats.num_actions + 1
    again = pickle.loads(pickle.dumps(feats))  # (to worker processes: rebuilt from the plain description)
    assert isinstance(again, GemJamLookaheadAdvice) and again.to_dict() == feats.to_dict()
    assert features_from_dict(feats.to_dict()).options == {"num_players": 4, "samples": 1}
    with pytest.raises(ValueError, match="computed from the engine state, not from observations"):
        feats(np.zeros((1, feats.obs_dim), np.float32), np.ones((1, feats.num_actions), np.int8))
    with pytest.raises(ValueError, match="'samples' must be an integer from 1 to 64; got 0"):
        make_features("gemjam_lookahead_advice", {"num_players": 3, "samples": 0})
    with pytest.raises(ValueError, match="bad Gem Jam options"):
        make_features("gemjam_lookahead_advice", {"num_players": 3, "colours": 9})
    with pytest.raises(ValueError, match="read gemjam observations, not megagem"):
        make_features("gemjam_lookahead_advice", {}, game="megagem")


def small_policy(feats, seed: int = 0) -> PolicyAgent:
    """A random [16] network over the observation and ``feats``."""
    rng = np.random.default_rng(seed)
    n_in = feats.obs_dim + feats.size
    layers = [(rng.normal(0, 0.1, (n_in, 16)), np.zeros(16)), (rng.normal(0, 0.1, (16, feats.num_actions)),
                                                                np.zeros(feats.num_actions))]
    return PolicyAgent(layers, "tanh", features=feats)


def test_a_policy_reading_state_features_plays_like_a_search_agent(tmp_path):
    feats = make_features("gemjam_lookahead_advice", {"num_players": 3, "samples": 1})
    policy = small_policy(feats)
    assert policy.needs_state and policy.observation_size == 3187
    game, state, p = rule_states(seed=2, limit=1)[0]
    obs, mask = game.observe(state, p), game.legal_mask(state, p)
    with pytest.raises(ValueError, match="computed from the engine state: play it through gemenvs.arena.match"):
        policy.act(obs, mask)
    policy.reset(seed=4)
    a = policy.act_with_state(state, p, obs, mask)
    feats.reset(seed=4)
    row = feats.augment_state(obs, state, p)
    legal = np.flatnonzero(mask)
    assert a == legal[np.argmax(policy.logits_inputs(row)[legal])] == policy.act_inputs(row, mask)
    # the file names the features; loaded, the policy decides alike and plays a legal game through the match runner
    loaded = PolicyAgent.load(policy.save(tmp_path / "p.npz"))
    assert loaded.needs_state and loaded.features.to_dict() == feats.to_dict()
    loaded.reset(seed=4)
    assert loaded.act_with_state(state, p, obs, mask) == a
    env = gemjam_env(num_players=3)  # illegal_action="raise"
    final = play_game(env, [loaded] + [GemJamRuleAgent.for_env(env, seed=k) for k in range(2)], seed=1)
    assert "winners" in final["player_0"]
    # the same network loaded from a file that does not name the features: a clear error, not a wrong game
    bare = PolicyAgent([(w, b) for w, b in policy.layers], "tanh")
    with pytest.raises(ValueError, match="trained with observation features .*700 numbers"):
        bare.check_fits(env)


def test_the_learner_reads_the_features_of_its_own_decisions():
    from gemenvs.arena.single_agent import SingleAgentEnv

    env = SingleAgentEnv(ENV_ID, opponents="rule", learner_seat=1, num_players=3,
                         features="gemjam_lookahead_advice", features_options={"num_players": 3, "samples": 1})
    feats = env.features
    assert env.observation_space.shape == (3187 + feats.size,)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(25):
        state, mask = env.raw.game_state, info["action_mask"]
        assert env.observation_space.contains(obs)
        assert np.array_equal(obs[:3187], env.raw.game.observe(state, 1))
        assert obs[3187 + A:3187 + 2 * A].sum() == 1 and mask[np.argmax(obs[3187 + A:3187 + 2 * A])]
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done:
            break
    with pytest.raises(ValueError, match="read gemjam, not megagem"):
        SingleAgentEnv("gemenvs/MegaGem-v0", features=feats)


def test_the_advice_teacher_labels_rows_that_hold_the_features():
    pytest.importorskip("sb3_contrib")
    from gemenvs.training.pretrain import collect

    desc = {"name": "gemjam_lookahead_advice", "options": {"num_players": 3, "samples": 1}}
    data = collect(ENV_ID, {"num_players": 3}, "advice", games=1, seed=6, features=desc)
    feats = features_from_dict(desc)
    assert data.obs.shape == (len(data), 3187 + feats.size)
    assert all(feats.advised(row) == a for row, a in zip(data.obs, data.actions))
    assert data.masks[np.arange(len(data)), data.actions].all()
    with pytest.raises(ValueError, match="plays what observation features that need the state advise; none"):
        collect(ENV_ID, {"num_players": 3}, "advice", games=1, seed=6)


def test_the_config_checks_state_features():
    pytest.importorskip("yaml")
    from gemenvs.training.config import ConfigError, load_config

    cfg = load_config(CONFIG)
    assert cfg.env.features == "gemjam_lookahead_advice" and cfg.pretrain.teacher == "advice"
    with pytest.raises(ConfigError, match="pretrain.teacher 'advice' plays what env.features advise"):
        load_config(CONFIG, ["env.features=null"])
    with pytest.raises(ConfigError, match="env.features runs on backends lean and sb3"):
        load_config(CONFIG, ["backend=rllib"])
    with pytest.raises(ConfigError, match="env.features: unknown observation features 'lookahead'"):
        load_config(CONFIG, ["env.features=lookahead"])


def test_no_lookahead_around_a_policy_that_reads_state_features():
    feats = make_features("gemjam_lookahead_advice", {"num_players": 3, "samples": 1})
    with pytest.raises(ValueError, match="computed from the engine state .* observation only"):
        GemJamLookaheadAgent(feats.engine, policy=small_policy(feats))


def test_the_learners_features_are_seeded_with_the_episode():
    """Two environments reset with the same seed give the learner the same observations, features included
    (the features' redraws are reseeded every episode from the environment's generator)."""
    from gemenvs.arena.single_agent import SingleAgentEnv

    runs = []
    for before in (None, 5):
        env = SingleAgentEnv(ENV_ID, opponents="rule", num_players=3, features="gemjam_lookahead_advice",
                             features_options={"num_players": 3, "samples": 1})
        if before is not None:  # another episode first: its redraws must not carry over
            _, info = env.reset(seed=before)
            for _ in range(10):
                env.step(int(np.flatnonzero(info["action_mask"])[-1]))
                info = {"action_mask": env.action_masks()}
        obs, info = env.reset(seed=8)
        seen = [obs]
        for _ in range(12):
            obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            seen.append(obs)
            if done:
                break
        runs.append(np.array(seen))
    assert runs[0].shape == runs[1].shape and np.array_equal(runs[0], runs[1])
    assert runs[0][:, 3187 + 3 * A].any(), "some decision was searched"
