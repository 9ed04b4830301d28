"""The training package: the single-learner wrapper, configs, PolicyAgent files, and a tiny run.

The wrapper tests pin the bug class of PettingZoo issue #1147 (a learner credited with the
winner's reward): in MegaGem the last action of a game is the last sealed bid of the final
auction, made by the highest seat, so seat 0 sees its game end on an opponent's move and
seat 3 on its own move; both must return the learner's own reward.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

import gymnasium  # noqa: E402

from gemenvs.agents import RandomAgent  # noqa: E402
from gemenvs.arena import play_game  # noqa: E402
from gemenvs.agents.base import BaseAgent  # noqa: E402
from gemenvs.agents.policy import PolicyAgent, PolicyLoadError  # noqa: E402
from gemenvs.megagem_v0 import env as megagem_env  # noqa: E402
from gemenvs.training.config import ConfigError, load_config  # noqa: E402
from gemenvs.arena.single_agent import SingleAgentEnv  # noqa: E402

ENV_ID = "gemenvs/MegaGem-v0"
#: the SB3 path's MegaGem config (make train's default, configs/megagem/selfplay.yaml, runs backend lean)
DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "megagem" / "selfplay_sb3.yaml"


class ZeroBidder(BaseAgent):
    """Always the smallest legal action: bids 0, so it loses nearly every game."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class Spy(RandomAgent):
    """A random opponent that keeps every observation it was shown."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen: list[np.ndarray] = []

    def act(self, observation, action_mask):
        self.seen.append(observation.copy())
        return super().act(observation, action_mask)


def play_episode(env: SingleAgentEnv, policy, seed: int):
    """Play one episode with ``policy(obs, mask)``; return rewards, the final info and the step count."""
    obs, info = env.reset(seed=seed)
    rewards, steps = [], 0
    while True:
        action = policy(obs, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        steps += 1
        assert not truncated
        if terminated:
            return rewards, info, steps


# ----------------------------------------------------------------------------- the wrapper

@pytest.mark.parametrize("seat", [0, 3])
@pytest.mark.parametrize("reward", ["win", "margin"])
def test_learner_gets_its_own_reward_when_it_loses(seat, reward):
    env = SingleAgentEnv(ENV_ID, opponents="random", learner_seat=seat, reward=reward)
    zero = ZeroBidder()
    losses = 0
    for seed in range(6):
        rewards, info, _ = play_episode(env, zero.act, seed)
        assert all(r == 0.0 for r in rewards[:-1]), "MegaGem pays rewards at the end only"
        final = env.raw.infos[env.learner]
        learner_won = env.learner in final["winners"]
        scores = final["scores"]
        if reward == "win":
            assert rewards[-1] == (1.0 if learner_won else -1.0)
        else:
            best_other = max(v for k, v in scores.items() if k != env.learner)
            assert rewards[-1] == pytest.approx((scores[env.learner] - best_other) / 100.0)
        if not learner_won:
            losses += 1
            assert rewards[-1] < 0, "a lost game must return the learner's negative reward"
            winner = final["winners"][0]
            assert env.raw.rewards[winner] > 0 and rewards[-1] != env.raw.rewards[winner]
            assert info["win_share"] == 0.0 and info["margin"] < 0
    assert losses >= 3


def test_check_env_and_gymnasium_make():
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(ENV_ID, num_players=4, opponents="random")
    spec = megagem_env().unwrapped.observation_spec
    assert env.observation_space.shape == (spec.size,) and env.action_space.n == 91
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))
    env.close()


def test_masks_under_subproc_vec_env():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from gemenvs.training.selfplay import MasksFromInfos

    vec = MasksFromInfos(SubprocVecEnv([lambda: SingleAgentEnv(ENV_ID, opponents="random", num_players=4)] * 2))
    try:
        vec.seed(0)
        obs = vec.reset()
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(150):
            masks = get_action_masks(vec)  # what MaskablePPO calls: served from the infos
            assert np.array_equal(masks, np.stack(vec.venv.env_method("action_masks")))  # asked of each worker
            assert masks.shape == (2, 91) and masks.dtype == bool and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, _, dones, infos = vec.step(actions)
            for done, info in zip(dones, infos):
                assert "illegal_action" not in info
                if not done:  # the mask in info is the one action_masks() gives next
                    assert info["action_mask"].any()
                finished += int(done)
        new_masks = get_action_masks(vec)
        assert all(new_masks[i].any() for i in range(2)), "after an auto-reset the mask is the new game's"
        assert finished >= 2
    finally:
        vec.close()


def test_opponents_never_see_the_learners_private_information():
    probe = megagem_env()
    spec = probe.unwrapped.observation_spec
    spies = [Spy(spec=spec, num_actions=91, seed=k) for k in range(3)]
    env = SingleAgentEnv(ENV_ID, opponents=spies, learner_seat=1)
    hand = spec["own_hand"]
    for seed in range(3):
        env.reset(seed=seed)
        for spy in spies:
            spy.seen.clear()
        state, game = env.raw.game_state, env.raw.game
        true_hands = [list(h) for h in state.hands]
        for k, spy in enumerate(spies):  # opponents sit clockwise from the learner
            seat = (1 + 1 + k) % 4
            obs = game.observe(state, seat)
            # the only private block of an opponent's view is its own hand
            assert np.allclose(obs[hand.offset:hand.stop] * hand.scale, true_hands[seat])
            # swapping the learner's hidden cards changes nothing an opponent is shown
            saved = list(state.hands[1])
            state.hands[1] = saved[::-1]
            assert np.array_equal(game.observe(state, seat), obs)
            state.hands[1] = saved
        rng = np.random.default_rng(seed)
        play_episode(env, lambda o, m: int(rng.choice(np.flatnonzero(m))), seed)
        for spy in spies:
            assert spy.seen, "every opponent acted"
            assert all(o.shape == (spec.size,) and o.dtype == np.float32 for o in spy.seen)


def test_episodes_end_cleanly():
    env = SingleAgentEnv(ENV_ID, opponents="random", num_players=4)
    rng = np.random.default_rng(1)
    for seed in range(5):
        rewards, info, steps = play_episode(env, lambda o, m: int(rng.choice(np.flatnonzero(m))), seed)
        assert 0 < steps <= env.raw.game.max_decisions
        assert rewards[-1] in (-1.0, 1.0)
        assert not env.action_masks().any() and not info["action_mask"].any()
        assert {"win_share", "score", "margin", "opponent", "learner_seat"} <= set(info)
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)
    obs, info = env.reset(seed=0)  # the env is reusable after an ended episode
    assert obs in env.observation_space and info["action_mask"].any()


def test_illegal_learner_action_terminates_with_its_penalty():
    env = SingleAgentEnv(ENV_ID, opponents="random", learner_seat=0)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(90)  # far above any opening bid limit
    assert terminated and reward == -1.0 and "illegal_action" in info


def test_single_agent_env_checks_its_arguments_at_construction(tmp_path):
    with pytest.raises(ValueError, match=r"unknown agent 'grandmaster' for megagem: give a baseline \(random, truthful, heuristic"):
        SingleAgentEnv(ENV_ID, opponents="grandmaster")
    with pytest.raises(ValueError, match="unknown agent 'grandmaster'"):
        gymnasium.make(ENV_ID, opponents=["random", "grandmaster", "random"])  # at make, not at reset
    with pytest.raises(ValueError, match="2 opponents given for 3 opponent seats"):
        SingleAgentEnv(ENV_ID, opponents=["random", "heuristic"])
    with pytest.raises(TypeError, match="opponents must be a baseline name, .* got 3"):
        SingleAgentEnv(ENV_ID, opponents=3)
    with pytest.raises(FileNotFoundError, match="no policy file"):
        SingleAgentEnv(ENV_ID, opponents=str(tmp_path / "missing.npz"))
    small = PolicyAgent([(np.zeros((10, 91)), np.zeros(91))]).save(tmp_path / "small.npz")
    with pytest.raises(ValueError, match="reads 10 observation values and plays 91 actions, but this megagem "
                                         "environment has 244 and 91"):
        SingleAgentEnv(ENV_ID, opponents=str(small))
    with pytest.raises(TypeError, match=r"learner_seat must be an int seat in 0\.\.3 or None; got True"):
        SingleAgentEnv(ENV_ID, learner_seat=True)
    with pytest.raises(TypeError, match="learner_seat must be an int seat .* got 1.0"):
        SingleAgentEnv(ENV_ID, learner_seat=1.0)
    for seat in (4, -1):
        with pytest.raises(ValueError, match=rf"learner_seat must be in 0\.\.3 or None; got {seat}"):
            SingleAgentEnv(ENV_ID, learner_seat=seat)
    env = SingleAgentEnv(ENV_ID, learner_seat=np.int64(2))
    assert type(env.learner_seat) is int and env.reset(seed=0)[1]["learner_seat"] == 2


def test_import_gemenvs_loads_neither_training_nor_torch():
    import subprocess
    import sys

    code = (
        "import sys, gemenvs, gymnasium\n"
        "gymnasium.make('gemenvs/MegaGem-v0', opponents='heuristic').reset(seed=0)\n"
        "loaded = [m for m in ('gemenvs.training', 'torch', 'stable_baselines3') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "assert gymnasium.spec('gemenvs/MegaGem-v0').entry_point == 'gemenvs.arena.single_agent:SingleAgentEnv'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pool_sampling_and_snapshots():
    from gemenvs.arena.pool import OpponentPool, PoolOpponents

    pool = OpponentPool(["random", "heuristic"], max_snapshots=2, sampling="prioritized", priority_power=2.0)
    for _ in range(20):
        pool.record("random", 1.0)  # the learner always beats random...
        pool.record("heuristic", 0.0)  # ...and never heuristic
    w = dict(zip([m.name for m in pool.members], pool.weights()))
    assert w["heuristic"] > 0.99 and w["random"] > 0.0
    for step in (10, 20, 30):
        pool.add_snapshot(f"snapshot_{step}", f"/tmp/s{step}.npz")
    assert [m.name for m in pool.snapshots] == ["snapshot_20", "snapshot_30"]
    w = dict(zip([m.name for m in pool.members], pool.weights()))
    assert w["snapshot_20"] == w["snapshot_30"] < w["heuristic"], "unplayed snapshots count at chance level"
    pool.baseline_share = 0.5  # baselines together get half the episodes, whatever their number
    w = dict(zip([m.name for m in pool.members], pool.weights()))
    assert w["heuristic"] + w["random"] == pytest.approx(0.5) and w["snapshot_20"] == pytest.approx(0.25)
    pool.sampling, pool.baseline_share = "uniform", None
    assert np.allclose(pool.weights(), 0.25)
    again = OpponentPool(["random", "heuristic"], max_snapshots=2)
    again.load_dict(pool.to_dict())
    assert again.members == pool.members and again.win_rate("heuristic") == 0.0
    fewer = OpponentPool(["truthful"], max_snapshots=1)  # on resume the baselines come from the config
    fewer.load_dict(pool.to_dict())
    assert [m.name for m in fewer.members] == ["truthful", "snapshot_30"] and fewer.win_rate("random") is None

    sampler = PoolOpponents([("random", "random"), ("truthful", "truthful")], [0.0, 1.0])
    env = megagem_env()
    label, agents = sampler.sample(env, np.random.default_rng(0), 3)
    assert label == "truthful" and len(agents) == 3 and len({id(a) for a in agents}) == 3


# ----------------------------------------------------------------------------- configs

@pytest.mark.parametrize("override, message", [
    ("ppo.learnig_rate=0.1", "unknown config key 'ppo.learnig_rate' (did you mean 'learning_rate'?)"),
    ("n_envs=two", "n_envs must be an integer; got 'two'"),
    ("ppo.net_arch=64", "ppo.net_arch must be a list of int"),
    ("pool.sampling=greedy", "pool.sampling must be one of 'uniform', 'prioritized'"),
    ("pool.baseline_share=1.5", "pool.baseline_share must be in [0, 1] or null; got 1.5"),
    ("pool.baselines=[random, randm]", "unknown opponent 'randm' for megagem"),
    ("eval.opponents=[grandmaster]", "eval.opponents: unknown opponent 'grandmaster'"),
    ("env.options.num_players=7", "num_players must be an integer in 3..5"),
])
def test_config_errors_name_the_key(override, message):
    with pytest.raises(ConfigError) as e:
        load_config(None, [override])
    assert message in str(e.value)


def test_config_file_errors_and_cli(tmp_path, capsys):
    from gemenvs.training.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  clip_rnage: 0.1\n")
    with pytest.raises(ConfigError, match="bad.yaml: unknown config key 'ppo.clip_rnage'"):
        load_config(bad)
    assert main([str(bad)]) == 2
    assert "clip_rnage" in capsys.readouterr().err
    cfg = load_config(DEFAULT_CONFIG, ["ppo.learning_rate=1e-4", "env.options.num_players=3"])
    assert cfg.ppo.learning_rate == 1e-4 and cfg.env.options["num_players"] == 3


# ----------------------------------------------------------------------------- policy files

def test_policy_agent_files(tmp_path):
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(240, 16)), rng.normal(size=16)), (rng.normal(size=(16, 91)), rng.normal(size=91))]
    agent = PolicyAgent(layers, "tanh")
    path = agent.save(tmp_path / "p.npz")
    again = PolicyAgent.load(path)
    obs, mask = rng.random(240).astype(np.float32), np.zeros(91, np.int8)
    mask[:20] = 1
    assert again.act(obs, mask) == agent.act(obs, mask) < 20
    sampled = PolicyAgent.load(path, deterministic=False, seed=1)
    assert all(mask[sampled.act(obs, mask)] for _ in range(50))
    assert sampled.action_probabilities(obs, mask)[20:].sum() == 0.0
    with pytest.raises(FileNotFoundError, match="no policy file"):
        PolicyAgent.load(tmp_path / "missing.zip")
    (tmp_path / "junk.zip").write_bytes(b"not a zip at all")
    with pytest.raises(PolicyLoadError, match="junk.zip"):
        PolicyAgent.load(tmp_path / "junk.zip")
    (tmp_path / "junk.npz").write_bytes(b"\x00" * 64)
    with pytest.raises(PolicyLoadError, match="junk.npz"):
        PolicyAgent.load(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="shape"):
        again.act(np.zeros(223, np.float32), mask)


@pytest.mark.parametrize("activation, net_arch", [("relu", "[16, 8]"), ("tanh", "[]")])
def test_zip_policies_load_from_their_weights(tmp_path, activation, net_arch):
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gemenvs.training.selfplay import _EnvFactory, make_model

    cfg = load_config(DEFAULT_CONFIG, ["n_envs=1", "ppo.n_steps=32", "ppo.batch_size=32",
                                       f"ppo.activation={activation}", f"ppo.net_arch={net_arch}"])
    model = make_model(cfg, DummyVecEnv([_EnvFactory(cfg)]))
    model.save(tmp_path / "m.zip")
    loaded, reference = PolicyAgent.load(tmp_path / "m.zip"), PolicyAgent.from_sb3(model)
    assert loaded.activation == reference.activation and len(loaded.layers) == len(reference.layers)
    obs = np.random.default_rng(0).random((5, 244)).astype(np.float32)
    for o in obs:
        assert np.allclose(loaded.logits(o), reference.logits(o), atol=1e-5)


# ----------------------------------------------------------------------------- end to end

def test_tiny_run_checkpoints_resumes_and_plays(tmp_path):
    from gemenvs.training.config import apply_overrides
    from gemenvs.training.checkpoint import find_checkpoint, load_checkpoint_config
    from gemenvs.training.run import train

    overrides = [
        f"run_root={tmp_path}", "name=tiny", "seed=1", "total_timesteps=1024", "n_envs=2", "checkpoint_every=512",
        "progress_bar=false", "ppo.n_steps=128", "ppo.batch_size=128", "ppo.n_epochs=1", "ppo.net_arch=[32]",
        "pool.baselines=[random]", "pool.snapshot_every=256", "eval.every=1024", "eval.games=8",
        "eval.opponents=[random]", "eval.final_games=8", "eval.workers=1",
    ]
    run = train(load_config(DEFAULT_CONFIG, overrides))
    first = find_checkpoint(run)
    assert first.name == "step_000001024" and (run / "checkpoints" / "step_000000512" / "model.zip").exists()

    run = run.rename(tmp_path / "moved")  # a run folder can move: the pool's snapshot paths are relative
    cfg, ckpt = load_checkpoint_config(run)
    assert ckpt == run / "checkpoints" / first.name and cfg.total_timesteps == 1024
    apply_overrides(cfg, ["total_timesteps=1536"])
    assert train(cfg, resume=run) == run
    assert find_checkpoint(run).name == "step_000001536"
    pool = (find_checkpoint(run) / "pool.json").read_text()
    assert "snapshot_1280" in pool and "snapshot_512" in pool
    for name in ("results.md", "results.json", "eval.csv", "learning_curve.png", "best_model.zip", "final_model.zip"):
        assert (run / name).exists(), name

    for path, deterministic in ((run / "final_model.zip", True), (run / "best_model.zip", False)):
        agent = PolicyAgent.load(path, deterministic=deterministic, seed=0)
        env = megagem_env()  # illegal_action="raise": an illegal move would fail the test
        others = [RandomAgent.for_env(env, seed=k) for k in range(3)]
        final = play_game(env, [agent] + others, seed=5)
        assert set(final) == set(env.possible_agents) and "winners" in final["player_0"]


def test_max_train_minutes_stops_a_run_early(tmp_path):
    from gemenvs.training.checkpoint import find_checkpoint
    from gemenvs.training.run import train

    with pytest.raises(ConfigError, match="max_train_minutes must be greater than 0 or null; got 0.0"):
        load_config(DEFAULT_CONFIG, ["max_train_minutes=0"])
    overrides = [
        f"run_root={tmp_path}", "name=timed", "total_timesteps=1000000", "max_train_minutes=0.0001", "n_envs=1",
        "checkpoint_every=0", "progress_bar=false", "ppo.n_steps=64", "ppo.batch_size=64", "ppo.net_arch=[8]",
        "pool.baselines=[random]", "pool.snapshot_every=0", "eval.every=0", "eval.opponents=[random]",
        "eval.final_games=4", "eval.workers=1",
    ]
    run = train(load_config(DEFAULT_CONFIG, overrides))
    steps = int(find_checkpoint(run).name.removeprefix("step_"))
    assert 1 <= steps < 64, "stopped within the first rollout"
    assert (run / "results.json").exists() and (run / "final_model.zip").exists()


def test_periodic_tasks_fall_due_once_and_move_past_the_step():
    from gemenvs.training.checkpoint import due

    assert due(None, 10**6, 5) == (False, None)          # never scheduled
    assert due(100, 99, 50) == (False, 100)              # not yet
    assert due(100, 100, 50) == (True, 150)              # on the step
    assert due(100, 260, 50) == (True, 300)              # a long rollout skipped two: due once, next past it
