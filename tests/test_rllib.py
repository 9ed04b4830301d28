"""backend rllib (gemenvs.training.rllib_backend): config checks, the env adapter, the masked module and
its export, and a tiny end-to-end local run. The tests that need Ray skip cleanly without the rllib extra."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gemenvs.training.cli import main
from gemenvs.training.config import ConfigError, load_config

GAMES = ["gemenvs/MegaGem-v0", "gemenvs/GEM-v0", "gemenvs/GemJam-v0"]


# ----------------------------------------------------------------------------- config (no Ray needed)

def test_backend_defaults_to_sb3_and_rllib_section_loads():
    cfg = load_config(None)
    assert cfg.backend == "sb3" and cfg.rllib.num_env_runners == 0 and cfg.rllib.address is None
    cfg = load_config(None, ["backend=rllib", "rllib.num_env_runners=4", "rllib.address=auto",
                             "rllib.train_batch_size=1000"])
    assert (cfg.backend, cfg.rllib.num_env_runners, cfg.rllib.address, cfg.rllib.train_batch_size) == \
        ("rllib", 4, "auto", 1000)


@pytest.mark.parametrize("overrides, message", [
    (["backend=ray"], "backend must be one of 'sb3', 'rllib'"),
    (["rllib.num_env_runners=-1"], "rllib.num_env_runners must be at least 0"),
    (["rllib.num_envs_per_env_runner=0"], "rllib.num_envs_per_env_runner must be at least 1"),
    (["rllib.num_cpus_per_env_runner=0"], "rllib.num_cpus_per_env_runner must be greater than 0"),
    (["rllib.self_play_share=1.5"], "rllib.self_play_share must be in [0, 1]"),
    (["rllib.num_runners=2"], "did you mean 'num_env_runners'"),
    (["backend=rllib", "rllib.address=''"], "rllib.address must be null, 'auto' or HOST:PORT"),
    (["backend=rllib", "rllib.address=head-node"], "rllib.address must be null, 'auto' or HOST:PORT"),
    (["backend=rllib", "ppo.target_kl=0.02"], "ppo.target_kl runs on backends lean and sb3; set it to null for "
                                               "backend rllib"),
    (["backend=rllib", "pretrain.teacher=heuristic"], "pretrain.teacher runs on backends lean and sb3; set it to "
                                                      "null for backend rllib"),
    (["backend=rllib", "env.shaping=1.0"], "env.shaping runs on backends lean and sb3"),
    (["backend=rllib", "rllib.train_batch_size=100", "ppo.batch_size=128"],
     "ppo.batch_size (128) must be at most the training batch"),
])
def test_config_errors(overrides, message):
    with pytest.raises(ConfigError) as e:
        load_config(None, overrides)
    assert message in str(e.value)


def test_sb3_only_options_pass_on_backend_sb3():
    assert load_config(None, ["ppo.target_kl=0.02", "rllib.train_batch_size=100"]).ppo.target_kl == 0.02


def test_cli_reports_a_config_error_in_one_line(tmp_path, capsys):
    (tmp_path / "c.yaml").write_text("backend: rllib\n")
    assert main([str(tmp_path / "c.yaml"), "ppo.target_kl=0.02"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gemenvs-train: error: ppo.target_kl runs on backends") and "\n" not in err


# ----------------------------------------------------------------------------- with Ray

def test_a_cluster_address_that_does_not_answer_is_one_line_and_no_run_folder(tmp_path, capsys):
    pytest.importorskip("ray.rllib")
    (tmp_path / "c.yaml").write_text("backend: rllib\nenv: {id: gemenvs/GEM-v0}\n")
    assert main([str(tmp_path / "c.yaml"), "rllib.address=127.0.0.1:1", f"run_root={tmp_path}", "name=x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gemenvs-train: error: rllib.address: nothing answers at 127.0.0.1:1") and "\n" not in err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("env_id", GAMES)
def test_env_adapter_plays_whole_games(env_id):
    pytest.importorskip("ray.rllib")
    from gemenvs.training.rllib_env import FOCAL, GemenvsMultiAgentEnv

    env = GemenvsMultiAgentEnv({"env_id": env_id, "baselines": ["random"], "baseline_share": 0.5})
    rng = np.random.default_rng(0)
    labels = set()
    for episode in range(4):
        obs, _ = env.reset(seed=episode)
        played, done = set(), False
        while not done:
            (agent, o), = obs.items()  # one seat to act at a time
            legal = np.flatnonzero(o["action_mask"])
            assert legal.size and o["observations"].dtype == np.float32
            played.add(agent)
            obs, rewards, term, trunc, infos = env.step({agent: int(rng.choice(legal))})
            assert set(rewards) == set(obs)  # each reward comes with its agent's next observation
            done = term["__all__"] or trunc["__all__"]
        assert set(obs) == played and FOCAL in played  # every role that played gets its final observation
        assert all(not o["action_mask"].any() for o in obs.values())
        labels.add(infos[FOCAL]["opponent"])
        assert 0.0 <= infos[FOCAL]["win_share"] <= 1.0
        if infos[FOCAL]["opponent"] == "random":
            assert played == {FOCAL}  # baselines play inside the env
    assert labels == {"random", "league"}


def _env_runner_plays_one_game(config: dict) -> int:
    """What an env runner does first, in a fresh process: build the env from its env_config, then play."""
    from gemenvs.training.rllib_env import GemenvsMultiAgentEnv

    env = GemenvsMultiAgentEnv(config)
    obs, _ = env.reset(seed=0)
    steps, done = 0, False
    while not done:
        (agent, o), = obs.items()
        obs, _, term, trunc, _ = env.step({agent: int(np.flatnonzero(o["action_mask"])[0])})
        steps, done = steps + 1, term["__all__"] or trunc["__all__"]
    return steps


def test_env_runners_know_the_games_registered_in_the_driver():
    """An env runner is a fresh process: the env_config carries the driver's registry, the toy game among it."""
    pytest.importorskip("ray.rllib")
    import multiprocessing

    from gemenvs.training.rllib_backend import env_config

    cfg = load_config(None, ["backend=rllib", "env.id=toy/SealedLots-v0", "env.options={num_players: 3}",
                             "pool.baselines=[random]", "pretrain.teacher=null"])
    config = env_config(cfg)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        without = {k: v for k, v in config.items() if k != "registry"}
        with pytest.raises(Exception, match="toy"):
            pool.apply(_env_runner_plays_one_game, (without,))
        assert pool.apply(_env_runner_plays_one_game, (config,)) > 0


def test_map_agent_is_a_pure_function_of_the_episode():
    pytest.importorskip("ray.rllib")
    from gemenvs.training.rllib_backend import map_agent

    class Episode:
        def __init__(self, id_):
            self.id_ = id_

    same = dict(frozen=3, self_play_share=0.5, seat_mix="same")
    seen = set()
    for k in range(200):
        ep = Episode(f"episode-{k}")
        assert map_agent("focal", ep, **same) == "main"
        picks = {map_agent(f"opponent_{j}", ep, **same) for j in (1, 2, 3)}
        assert len(picks) == 1  # seat_mix same: one member for every opponent seat
        assert picks == {map_agent("opponent_1", Episode(f"episode-{k}"), **same)}
        seen |= picks
    assert seen == {"main", "past_0", "past_1", "past_2"}
    assert {map_agent("opponent_1", Episode(str(k)), frozen=0, self_play_share=0.0, seat_mix="same")
            for k in range(20)} == {"main"}


def test_masked_module_and_its_policy_agent_agree():
    pytest.importorskip("ray.rllib")
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from gemenvs.agents.policy import PolicyAgent
    from gemenvs.training.rllib_env import FOCAL, GemenvsMultiAgentEnv
    from gemenvs.training.rllib_module import MaskedActorCritic, actor_layers

    env = GemenvsMultiAgentEnv({"env_id": "gemenvs/GEM-v0"})
    module = RLModuleSpec(module_class=MaskedActorCritic, observation_space=env.observation_spaces[FOCAL],
                          action_space=env.action_spaces[FOCAL],
                          model_config={"net_arch": [32, 16], "activation": "relu"}).build()
    for p in module.parameters():  # away from the tiny initial policy head, so the argmax means something
        torch.nn.init.normal_(p, std=0.5)
    agent = PolicyAgent(actor_layers({k: v.detach().numpy() for k, v in module.state_dict().items()}), "relu")
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=3)
    rows = []
    for _ in range(30):
        (name, o), = obs.items()
        rows.append(o)
        obs, _, term, _, _ = env.step({name: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if term["__all__"]:
            obs, _ = env.reset()
    batch = {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in ("observations", "action_mask")}
    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS].numpy()
        values = module.compute_values({Columns.OBS: batch})
    assert values.shape == (len(rows),)
    for r, logits in zip(rows, out):
        legal = r["action_mask"] > 0
        assert (logits[~legal] < -1e30).all()  # the mask: illegal actions get FLOAT_MIN
        np.testing.assert_allclose(logits[legal], agent.logits(r["observations"])[legal], rtol=1e-5, atol=1e-5)
        assert agent.act(r["observations"], r["action_mask"].astype(np.int8)) == int(np.argmax(logits))


def test_tiny_local_run_writes_a_checkpoint_that_plays_as_an_agent(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ray.rllib")
    import torch

    from gemenvs.agents.policy import PolicyAgent
    from gemenvs.agents.random_agent import RandomAgent
    from gemenvs.training import rllib_backend
    from gemenvs.arena.single_agent import make_aec_env

    snapshot, frozen = rllib_backend.RLlibLearner.snapshot, []

    def checked_snapshot(league, step, run):  # the env runner that plays the games gets the frozen weights too
        slot = league.slots[league.next_slot]["module"]
        snapshot(league, step, run)
        main = rllib_backend.module_weights(league.algo, ["main"])["main"]
        for state in league.algo.env_runner_group.foreach_env_runner(
                lambda runner: {k: v.detach().numpy().copy() for k, v in runner.module[slot].state_dict().items()}):
            frozen.append(all(np.array_equal(state[k], main[k]) for k in main))

    monkeypatch.setattr(rllib_backend.RLlibLearner, "snapshot", checked_snapshot)

    (tmp_path / "tiny.yaml").write_text("backend: rllib\nenv: {id: gemenvs/GEM-v0}\n")
    args = [str(tmp_path / "tiny.yaml"), f"run_root={tmp_path}", "name=tiny",
            "total_timesteps=400", "rllib.train_batch_size=200", "ppo.batch_size=100", "ppo.n_epochs=2",
            "ppo.net_arch=[32]", "pool.baselines=[random]", "pool.snapshot_every=200", "pool.max_snapshots=2",
            "checkpoint_every=200", "eval.every=400", "eval.games=6", "eval.final_games=6", "eval.workers=1",
            "eval.opponents=[random]", "torch_threads=1"]
    assert main(args) == 0
    assert frozen == [True, True]  # snapshots at steps 200 and 400
    out = capsys.readouterr().out
    run = tmp_path / "tiny"
    assert "iteration 2: 400 steps" in out and "| random |" in (run / "results.md").read_text()
    assert json.loads((run / "results.json").read_text())["results"]["random"]["games"] == 6
    ckpt = run / "checkpoints" / "step_000000200"
    modules = torch.load(ckpt / "modules.pt", weights_only=True)  # tensors only: no code runs
    assert set(modules) == {"main", "past_0", "past_1"}
    # the snapshot at step 200 froze main into the oldest slot; the other still holds the initial main
    for key in modules["main"]:
        assert torch.equal(modules["past_0"][key], modules["main"][key])
    assert not all(torch.equal(modules["past_1"][k], modules["main"][k]) for k in modules["main"])
    trainer = json.loads((ckpt / "trainer.json").read_text())
    assert trainer["slots"] == [{"module": "past_0", "step": 200}, {"module": "past_1", "step": 0}]

    for path in (ckpt / "policy.npz", run / "final_model.npz", run / "best_model.npz"):
        agent = PolicyAgent.load(path)
        assert agent.metadata["backend"] == "rllib"
        env = make_aec_env("gemenvs/GEM-v0")
        agent.check_fits(env)
        players = {name: (agent if k == 1 else RandomAgent.for_env(env, seed=k))
                   for k, name in enumerate(env.possible_agents)}
        env.reset(seed=5)
        decisions = 0
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = players[name].act(obs["observation"], obs["action_mask"])
            assert obs["action_mask"][action] == 1
            decisions += players[name] is agent
            env.step(action)
        assert decisions > 0 and env.unwrapped.game.is_over(env.unwrapped.game_state)
