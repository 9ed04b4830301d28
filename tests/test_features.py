"""Observation features (gemenvs.agents.features): MegaGem's valuation features against the scalar bidder,
policies that read them (saved, loaded, played), the training environment that appends them, the config checks
and a tiny lean run with a warm start on them."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gemenvs.agents import PolicyAgent, PolicyLoadError, RandomAgent
from gemenvs.arena import play_game
from gemenvs.arena.match import play_engine_game
from gemenvs.agents.features import FEATURES, MegaGemValuation, features_from_dict, make_features
from gemenvs.agents.megagem.tuned import ParametricBidder, TunedBidder
from gemenvs.megagem_v0 import env as megagem_env
from recorder import Recorder


def _decisions(num_players: int, games: int, seed: int = 0, bidder=ParametricBidder):
    """(observation, mask, action, last_valuation) of every decision of ``games`` games of ``bidder``s (by default
    ParametricBidders with the neutral weights: HeuristicBidder); ``last_valuation`` None on reveals."""
    env = megagem_env(num_players=num_players, value_chart="random")
    seats = [Recorder(bidder.for_env(env)) for _ in range(num_players)]
    for g in range(games):
        play_engine_game(env.unwrapped.game, seats, seed=seed + g)
    return [r for s in seats for r in s.rows]


@pytest.mark.parametrize("name", ["megagem_valuation", "megagem_tuned_valuation"])
@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_valuation_features_are_the_bidders_own_numbers(num_players, name):
    """megagem_valuation: HeuristicBidder's (the neutral ParametricBidder's) numbers; megagem_tuned_valuation: the
    tuned bidder's, whose weights differ (so the two features differ on the same rows)."""
    rows = _decisions(num_players, games=4, seed=10 * num_players,
                      bidder=TunedBidder if name == "megagem_tuned_valuation" else ParametricBidder)
    feats = make_features(name, {"num_players": num_players})
    if name == "megagem_tuned_valuation":
        obs, masks = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
        assert not np.allclose(feats(obs, masks), make_features("megagem_valuation", {"num_players": num_players})(
            obs, masks))
    obs = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows])
    got = feats(obs, masks)
    assert got.shape == (len(rows), 3) and got.dtype == np.float32
    want = np.array([r[3] if r[3] is not None else (0.0, 0.0, 0) for r in rows], np.float64) / MegaGemValuation.SCALE
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-6)
    bids = np.array([r[3] is not None for r in rows])
    assert bids.any() and (~bids).any(), "both bids and reveals are checked"
    assert (got[bids, 1] >= 1.0 - 1e-6).any(), "a coin costs at least its face value on Treasure and Loan lots"
    # rows with no legal action (another seat's turn, a finished game) get zeros; rows are independent
    masks0 = masks.copy()
    masks0[::2] = 0
    np.testing.assert_array_equal(feats(obs, masks0)[1::2], got[1::2])
    assert not feats(obs, masks0)[::2].any()
    np.testing.assert_array_equal(feats(obs[::-1], masks[::-1]), got[::-1])
    aug = feats.augment(obs, masks)
    assert aug.shape == (len(rows), obs.shape[1] + 3)
    np.testing.assert_array_equal(aug[:, :obs.shape[1]], obs)
    np.testing.assert_array_equal(feats.augment(obs[0], masks[0]), aug[0])


@pytest.mark.parametrize("name", ["megagem_advice", "megagem_tuned_advice"])
@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_advice_features_are_the_valuation_and_a_fresh_bidders_bid(num_players, name):
    """megagem_advice / megagem_tuned_advice: the valuation's three numbers, then the bid the scalar bidder makes
    when it remembers nothing of the game (a fresh instance deciding the row), its win chance and expected gain."""
    tuned = name == "megagem_tuned_advice"
    bidder = TunedBidder if tuned else ParametricBidder
    rows = _decisions(num_players, games=3, seed=7 * num_players, bidder=bidder)
    obs, masks = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
    feats = make_features(name, {"num_players": num_players})
    got = feats(obs, masks)
    assert got.shape == (len(rows), 6) and got.dtype == np.float32 and feats.size == 6
    valuation = make_features("megagem_tuned_valuation" if tuned else "megagem_valuation", feats.options)
    assert ("weights" in feats.options) == tuned
    np.testing.assert_array_equal(got[:, :3], valuation(obs, masks))
    env = megagem_env(num_players=num_players)
    bids = env.unwrapped.game.action_spec["bid"]
    fresh_bids = []
    for o, m in zip(obs, masks):
        a = bidder.for_env(env).act(o, m)  # a fresh bidder: no memory of this game
        fresh_bids.append(a - bids.start if a in bids else 0)
    np.testing.assert_allclose(got[:, 3], np.array(fresh_bids, np.float32) / 20, atol=1e-6)
    # the scalar bidder's own first bid (its memory still empty) is the advised bid
    first = next(i for i, r in enumerate(rows) if r[3] is not None)
    assert abs(got[first, 3] * 20 - (rows[first][2] - bids.start)) < 1e-4
    placed = got[:, 3] > 0
    assert placed.sum() > 20 and ((got[:, 4] >= 0) & (got[:, 4] <= 1)).all()
    np.testing.assert_allclose(got[placed, 5] * 20, got[placed, 4] * (got[placed, 0] * 20 - got[placed, 1] *
                                                                       got[placed, 3] * 20), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["megagem_tuned_valuation", "megagem_tuned_advice"])
def test_tuned_features_carry_their_weights(name):
    """The tuned features write the weights they use into their options (so a policy file keeps them whatever
    weights file is installed later); given other weights, they compute those weights' numbers."""
    from gemenvs.agents.megagem.tuned import random_weights

    rows = _decisions(4, games=2, seed=3)
    obs, masks = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
    shipped = make_features(name, {"num_players": 4})
    assert shipped.options["weights"] == TunedBidder.for_env(megagem_env(num_players=4)).weights
    again = features_from_dict(json.loads(json.dumps(shipped.to_dict())))
    np.testing.assert_array_equal(again(obs, masks), shipped(obs, masks))
    other = random_weights(np.random.default_rng(5), spread=1.5)
    mine = make_features(name, {"num_players": 4, "weights": other})
    assert mine.options["weights"] == other and not np.allclose(mine(obs, masks), shipped(obs, masks))
    table = ParametricBidder.for_env(megagem_env(num_players=4), weights=other).batch_games(1)
    np.testing.assert_allclose(mine(obs, masks)[:, :3], (table.valuation(obs, masks) / MegaGemValuation.SCALE)
                               .astype(np.float32), rtol=1e-6)
    with pytest.raises(ValueError, match="bad 'weights' option"):
        make_features(name, {"num_players": 4, "weights": {"psi": 1.0}})
    with pytest.raises(ValueError, match="takes no 'weights' option"):
        make_features("megagem_valuation", {"num_players": 4, "weights": other})


def test_make_features_names_what_is_wrong():
    assert set(FEATURES) == {"megagem_valuation", "megagem_tuned_valuation", "megagem_advice", "megagem_tuned_advice",
                             "gemjam_lookahead_advice"}
    with pytest.raises(ValueError, match="unknown observation features 'nope'; known: gemjam_lookahead_advice, "
                                         "megagem_advice, megagem_tuned_advice, megagem_tuned_valuation, "
                                         "megagem_valuation"):
        make_features("nope")
    with pytest.raises(ValueError, match="read megagem observations, not gem"):
        make_features("megagem_valuation", {}, game="gem")
    with pytest.raises(ValueError, match="num_players"):
        make_features("megagem_valuation", {"num_players": 7})
    with pytest.raises(ValueError, match="bad MegaGem options"):
        make_features("megagem_valuation", {"colour": "red"})
    feats = make_features("megagem_valuation", {"num_players": 4})
    with pytest.raises(ValueError, match=r"reads observations \(N, \d+\) and masks"):
        feats(np.zeros((2, 5), np.float32), np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="must be"):
        features_from_dict(["megagem_valuation"])
    assert features_from_dict(json.loads(json.dumps(feats.to_dict()))).options == {"num_players": 4}


def _policy_with_features(num_players: int = 4, seed: int = 0) -> PolicyAgent:
    env = megagem_env(num_players=num_players)
    first = env.possible_agents[0]
    obs_dim = env.observation_space(first)["observation"].shape[0]
    actions = env.action_space(first).n
    feats = make_features("megagem_valuation", {"num_players": num_players})
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(0, 0.3, (obs_dim + 3, 16)), rng.normal(0, 0.1, 16)),
              (rng.normal(0, 0.3, (16, actions)), rng.normal(0, 0.1, actions))]
    layers[0][0][-3:] *= 20  # the features weigh visibly in the logits
    return PolicyAgent(layers, "tanh", features=feats, metadata={"backend": "test"})


def test_a_policy_with_features_computes_them_saves_them_and_plays(tmp_path):
    agent = _policy_with_features()
    assert agent.observation_size + 3 == agent.input_size and "features megagem_valuation" in repr(agent)
    rows = _decisions(4, games=2, seed=3)
    obs = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows])
    feats = agent.features
    plain = PolicyAgent(agent.layers, "tanh")  # the same network fed the augmented rows by hand
    np.testing.assert_allclose(agent.logits_batch(obs, masks), plain.logits_batch(feats.augment(obs, masks)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(agent.logits(obs[0], masks[0]), plain.logits(feats.augment(obs[0], masks[0])),
                               rtol=1e-5, atol=1e-5)
    # the features matter: zeroing them changes some choice
    zeroed = np.concatenate([obs, np.zeros((len(obs), 3), np.float32)], axis=1)
    assert (np.argmax(np.where(masks, plain.logits_batch(zeroed), -np.inf), 1)
            != agent.act_batch(obs, masks)).any()
    assert [agent.act(o, m) for o, m in zip(obs, masks)] == agent.act_batch(obs, masks).tolist()
    with pytest.raises(ValueError, match="pass the mask"):
        agent.logits(obs[0])
    path = agent.save(tmp_path / "p.npz")
    loaded = PolicyAgent.load(path)
    assert loaded.features is not None and loaded.features.to_dict() == feats.to_dict()
    assert loaded.metadata["backend"] == "test"
    np.testing.assert_array_equal(loaded.act_batch(obs, masks), agent.act_batch(obs, masks))
    env = megagem_env(value_chart="B")  # illegal_action="raise"
    loaded.check_fits(env)
    final = play_game(env, [loaded] + [RandomAgent.for_env(env, seed=k) for k in range(3)], seed=2)
    assert "winners" in final["player_0"]
    from gemenvs.gem_v0 import env as gem_env

    with pytest.raises(ValueError):
        loaded.check_fits(gem_env(num_players=4))


def test_a_policy_file_naming_unknown_features_is_refused(tmp_path):
    agent = _policy_with_features()
    path = agent.save(tmp_path / "p.npz")
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))
    header["metadata"]["features"] = {"name": "os.system", "options": {}}
    arrays["header"] = np.array(json.dumps(header))
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    with pytest.raises(PolicyLoadError, match="unknown observation features 'os.system'"):
        PolicyAgent.load(bad)
    with pytest.raises(ValueError, match="names observation features but none were given"):
        PolicyAgent(agent.layers, metadata={"features": feats_dict()})


def feats_dict() -> dict:
    return {"name": "megagem_valuation", "options": {}}


def test_the_batched_environment_appends_the_learners_features():
    pytest.importorskip("stable_baselines3")
    from gemenvs.arena.batched_selfplay import BatchedSelfPlay

    plain = BatchedSelfPlay(16, "heuristic", seed=3, value_chart="random")
    env = BatchedSelfPlay(16, "heuristic", seed=3, features="megagem_valuation", value_chart="random")
    D = plain.observation_space.shape[0]
    assert env.observation_space.shape == (D + 3,)
    o0, o1 = plain.reset(3), env.reset(3)
    feats = make_features("megagem_valuation", {"value_chart": "random"})
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(60):
        m0, m1 = plain.action_masks(), env.action_masks()
        np.testing.assert_array_equal(o1[:, :D], o0)
        np.testing.assert_array_equal(m1, m0)
        np.testing.assert_array_equal(o1[:, D:], feats(o0, m0))
        seen += int(o1[:, D:].any(axis=1).sum())
        a = np.array([rng.choice(np.flatnonzero(m)) for m in m0])
        o0, _, d0, f0 = plain.step(a)
        o1, _, d1, f1 = env.step(a)
        np.testing.assert_array_equal(d0, d1)
        if f1 is not None:
            assert f1.terminal_observation.shape == (len(f1.slots), D + 3)
            np.testing.assert_array_equal(f1.terminal_observation[:, :D], f0.terminal_observation)
    assert seen > 100
    for e in (plain, env):
        e.close()


def test_config_checks_the_features():
    pytest.importorskip("torch")
    from pathlib import Path

    from gemenvs.training.config import ConfigError, load_config

    configs = Path(__file__).resolve().parents[1] / "configs"
    cfg = load_config(configs / "megagem" / "selfplay.yaml", ["env.features=megagem_valuation"])
    assert cfg.env.features == "megagem_valuation"
    with pytest.raises(ConfigError, match="env.features: unknown observation features 'x'"):
        load_config(configs / "megagem" / "selfplay.yaml", ["env.features=x"])
    sb3 = load_config(configs / "megagem" / "selfplay_sb3.yaml", ["env.features=megagem_valuation"])
    assert sb3.backend == "sb3" and sb3.env.features == "megagem_valuation"
    with pytest.raises(ConfigError, match="env.features runs on backends lean and sb3"):
        load_config(configs / "megagem" / "selfplay_sb3.yaml", ["env.features=megagem_valuation", "backend=rllib"])


def test_a_lean_run_on_features_clones_and_saves_policies_that_read_them(tmp_path):
    pytest.importorskip("torch")
    from pathlib import Path

    from gemenvs.training.cli import main

    config = Path(__file__).resolve().parents[1] / "configs" / "megagem" / "selfplay_sb3.yaml"
    overrides = ["backend=lean", "n_envs=32", "ppo.n_steps=8", "ppo.batch_size=128", "ppo.net_arch=[64]",
                 "env.options={num_players: 4, value_chart: random}", "env.features=megagem_valuation",
                 "pool.baselines=[random, heuristic]", "pool.family.members=0", "pool.snapshot_every=128",
                 "eval.every=0", "eval.opponents=[heuristic]", "eval.charts=null", "eval.workers=1",
                 "eval.final_games=4", "checkpoint_every=256", "progress_bar=false", "torch_threads=1",
                 f"run_root={tmp_path}", "name=feat", "seed=1", "total_timesteps=512",
                 "pretrain.teacher=heuristic", "pretrain.games=80", "pretrain.epochs=20", "pretrain.workers=1",
                 "pretrain.batch_size=256", "pretrain.learning_rate=0.003", "pretrain.dagger_rounds=1",
                 "pretrain.dagger_games=6", "pretrain.dagger_epochs=1"]
    assert main([str(config), *overrides]) == 0
    run = tmp_path / "feat"
    report = json.loads((run / "pretrain.json").read_text())
    assert report["rounds"][0]["heldout_agreement"] > 0.2  # (a uniform choice among the legal bids: about 0.1)
    snapshots = sorted((run / "pool").glob("snapshot_*.npz"))
    assert snapshots, "the pool played snapshots that read the features"
    for path in [run / "final_model.npz", *snapshots]:
        agent = PolicyAgent.load(path, deterministic=False, seed=0)
        assert agent.features is not None and agent.features.name == "megagem_valuation"
        env = megagem_env(value_chart="C")  # illegal_action="raise"
        final = play_game(env, [RandomAgent.for_env(env, seed=k) for k in range(3)] + [agent], seed=1)
        assert "winners" in final["player_3"]
    # the run resumes from its checkpoint with the network that reads the features
    from gemenvs.training.checkpoint import find_checkpoint, load_checkpoint_config
    from gemenvs.training.config import apply_overrides
    from gemenvs.training.run import train

    cfg, _ = load_checkpoint_config(run)
    assert cfg.env.features == "megagem_valuation"
    apply_overrides(cfg, ["total_timesteps=768"])
    assert train(cfg, resume=run) == run
    assert find_checkpoint(run).name == "step_000000768"
    assert PolicyAgent.load(run / "final_model.npz").features.name == "megagem_valuation"


def test_an_sb3_run_on_features_saves_policies_that_read_them(tmp_path):
    """The SB3 path (on the batched engine's VecEnv here) takes observation features too: the pretraining, the
    network, the snapshots and the final model read them."""
    pytest.importorskip("sb3_contrib")
    from pathlib import Path

    from gemenvs.training.cli import main

    config = Path(__file__).resolve().parents[1] / "configs" / "megagem" / "selfplay_sb3.yaml"
    overrides = ["backend=sb3", "vec_env=batched", "n_envs=16", "ppo.n_steps=16", "ppo.batch_size=128",
                 "ppo.n_epochs=1", "ppo.net_arch=[32]", "env.features=megagem_valuation",
                 "pool.baselines=[random, heuristic]", "pool.snapshot_every=128", "eval.every=0",
                 "eval.opponents=[heuristic]", "eval.charts=null", "eval.workers=1", "eval.final_games=2",
                 "checkpoint_every=0", "progress_bar=false", f"run_root={tmp_path}", "name=sb3feat", "seed=1",
                 "total_timesteps=512", "pretrain.teacher=heuristic", "pretrain.games=6", "pretrain.epochs=1",
                 "pretrain.workers=1", "pretrain.dagger_rounds=1", "pretrain.dagger_games=2"]
    assert main([str(config), *overrides]) == 0
    run = tmp_path / "sb3feat"
    snapshots = sorted((run / "pool").glob("snapshot_*.npz"))
    assert snapshots, "the pool played snapshots that read the features"
    for path in [run / "final_model.npz", snapshots[-1]]:
        agent = PolicyAgent.load(path, deterministic=False, seed=0)
        assert agent.features.name == "megagem_valuation" and agent.observation_size == 244
        env = megagem_env()  # illegal_action="raise"
        final = play_game(env, [agent] + [RandomAgent.for_env(env, seed=k) for k in range(3)], seed=2)
        assert "winners" in final["player_0"]


def test_the_docs_table_names_every_feature_slot():
    from pathlib import Path

    from gemenvs.megagem.game import MegaGem

    page = (Path(__file__).resolve().parents[1] / "docs" / "megagem.md").read_text()
    for k, label in enumerate(make_features("megagem_advice", {}).labels):  # (the valuation's three come first)
        assert f"| obs_dim + {k} | `{label}` |" in page, label
    assert MegaGemValuation({}).labels == make_features("megagem_advice", {}).labels[:3]
    sizes = " / ".join(str(MegaGem(num_players=n).spec.size) for n in (3, 4, 5))
    assert f"i.e. {sizes} at 3 / 4 / 5 players" in page
