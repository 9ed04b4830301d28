"""backend lean (gemenvs.training.lean_ppo): config checks, masking, the export to PolicyAgent, a tiny
run end to end, and learning beside the SB3 path on the same small config."""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gemenvs.agents import RandomAgent  # noqa: E402
from gemenvs.arena import play_game  # noqa: E402
from gemenvs.agents.policy import PolicyAgent  # noqa: E402
from gemenvs.megagem_v0 import env as megagem_env  # noqa: E402
from gemenvs.training.cli import main  # noqa: E402
from gemenvs.training.config import ConfigError, load_config  # noqa: E402
from gemenvs.training.lean_ppo import (  # noqa: E402
    MASKED_LOGIT,
    ActorCritic,
    LeanPPO,
    load_model_state,
    log_probs_and_entropy,
    make_env,
    masked_kl,
    sample,
)
from gemenvs.training.run import train  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "megagem"
LEAN_CONFIG = CONFIGS / "selfplay_lean.yaml"
DEFAULT_CONFIG = CONFIGS / "selfplay_sb3.yaml"  # the SB3 config (64 games x 32 steps)
MAKE_TRAIN_CONFIG = CONFIGS / "selfplay.yaml"

#: a small run against three RandomAgents on chart A, for both backends
SMALL = ["n_envs=64", "ppo.n_steps=16", "ppo.batch_size=256", "ppo.n_epochs=4", "ppo.learning_rate=0.001",
         "ppo.net_arch=[64]", "env.options={num_players: 4, value_chart: A}", "pool.baselines=[random]",
         "pool.family.members=0", "pool.snapshot_every=0", "eval.every=0", "eval.opponents=[random]",
         "eval.charts=null", "eval.workers=1", "checkpoint_every=0", "progress_bar=false", "torch_threads=1"]


# ----------------------------------------------------------------------------- config

def test_the_lean_configs_load_beside_the_sb3_one():
    cfg = load_config(LEAN_CONFIG)
    assert (cfg.backend, cfg.n_envs, cfg.ppo.n_steps * cfg.n_envs % cfg.ppo.batch_size) == ("lean", 2048, 0)
    sb3 = load_config(DEFAULT_CONFIG)
    assert sb3.backend == "sb3"
    assert (cfg.env, cfg.pool.baselines, cfg.pool.family, cfg.eval.opponents, cfg.eval.charts) == \
        (sb3.env, sb3.pool.baselines, sb3.pool.family, sb3.eval.opponents, sb3.eval.charts)
    make_train = load_config(MAKE_TRAIN_CONFIG)  # make train: backend lean with the tuned bidder's warm start
    assert (make_train.backend, make_train.pretrain.teacher, make_train.max_train_minutes) == ("lean", "tuned", None)
    assert make_train.env.features == "megagem_tuned_advice" and sb3.env.features is None  # (a lean-only option)
    make_train.env.features = None
    assert (make_train.env, make_train.pool.baselines, make_train.pool.family, make_train.eval.opponents) == \
        (sb3.env, sb3.pool.baselines, sb3.pool.family, sb3.eval.opponents)


@pytest.mark.parametrize("overrides, message", [
    (["backend=torch"], "backend must be one of 'sb3', 'rllib', 'lean'"),
    (["env.id=gemenvs/GEM-v0", "env.options={}", "pool.family.members=0", "pool.baselines=[random]",
      "eval.opponents=[random]", "eval.charts=null"],
     "backend lean plays on the batched engine, which runs MegaGem only, not gem; use backend sb3"),
    (["vec_env=subproc"], "backend lean: vec_env must be 'auto' or 'batched'"),
    (["lean.rollout=lockstep", "ppo.batch_size=3000"], "ppo.batch_size (3000) must divide one rollout"),
    (["ppo.anchor_coef=0.5", "pretrain.teacher=null"], "ppo.anchor_coef (0.5) pulls the policy towards its "
                                                        "pretrained clone: it needs pretrain.teacher"),
    (["backend=sb3", "ppo.anchor_coef=0.5", "pretrain.teacher=tuned", "ppo.batch_size=256"],
     "ppo.anchor_coef runs on backend lean only"),
    (["ppo.anchor_coef=-1", "pretrain.teacher=tuned"], "ppo.anchor_coef must be at least 0"),
    (["backend=sb3", "lean.overlap=true", "ppo.batch_size=256"], "lean.overlap runs on backend lean only"),
    (["lean.overlap=yes please"], "lean.overlap"),
])
def test_config_errors(overrides, message):
    with pytest.raises(ConfigError) as e:
        load_config(LEAN_CONFIG, overrides)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_cli_reports_lean_errors_in_one_line(tmp_path, capsys):
    assert main([str(LEAN_CONFIG), "vec_env=subproc", f"run_root={tmp_path}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gemenvs-train: error: backend lean: vec_env") and "\n" not in err
    assert not list(tmp_path.iterdir()), "no run folder for a refused run"


# ----------------------------------------------------------------------------- masking

def random_masks(rng, rows: int, actions: int) -> torch.Tensor:
    masks = rng.random((rows, actions)) < rng.uniform(0.02, 0.6, size=(rows, 1))
    masks[np.arange(rows), rng.integers(0, actions, rows)] = True  # at least one legal action a row
    return torch.from_numpy(masks)


def test_never_samples_an_illegal_action():
    rng = np.random.default_rng(0)
    generator = torch.Generator().manual_seed(0)
    model = ActorCritic(10, 91, [16])
    with torch.no_grad():
        model.actor[-1].bias.copy_(torch.linspace(-50, 50, 91))  # illegal actions with huge raw logits
    for _ in range(50):
        masks = random_masks(rng, 256, 91)
        logits = model.masked_logits(torch.randn(256, 10), masks)
        actions = sample(logits, generator)
        assert masks[torch.arange(256), actions].all()
        assert masks[torch.arange(256), logits.argmax(dim=1)].all()
    # a single legal action is always the one sampled; a uniform row samples every legal action
    masks = torch.zeros(4000, 5, dtype=torch.bool)
    masks[:, [1, 3]] = True
    actions = sample(torch.zeros(4000, 5).masked_fill(~masks, MASKED_LOGIT), generator)
    assert set(actions.tolist()) == {1, 3} and abs(float((actions == 1).float().mean()) - 0.5) < 0.05


def test_illegal_logits_do_not_count():
    rng = np.random.default_rng(1)
    masks = random_masks(rng, 64, 30)
    raw = torch.randn(64, 30)
    actions = torch.from_numpy(np.array([rng.choice(np.flatnonzero(m)) for m in masks.numpy()]))
    other = raw.clone()
    other[~masks] = torch.randn(int((~masks).sum())) * 1000  # any raw logit on an illegal action
    raw.requires_grad_(True)
    logp, entropy = log_probs_and_entropy(raw.masked_fill(~masks, MASKED_LOGIT), masks, actions)
    logp2, entropy2 = log_probs_and_entropy(other.masked_fill(~masks, MASKED_LOGIT), masks, actions)
    assert torch.equal(logp, logp2) and torch.equal(entropy, entropy2)
    # the distribution over the legal actions only
    expected = torch.log_softmax(raw.detach().masked_fill(~masks, -float("inf")), dim=1)
    assert torch.allclose(logp, expected.gather(1, actions[:, None]).squeeze(1), atol=1e-5)
    legal_p = expected.exp()
    assert torch.allclose(entropy, -(legal_p * expected.nan_to_num(neginf=0.0)).sum(1), atol=1e-5)
    (logp.sum() + entropy.sum()).backward()
    assert raw.grad[~masks].abs().max() == 0 and raw.grad[masks].abs().max() > 0


# ----------------------------------------------------------------------------- export

@pytest.mark.parametrize("net_arch, activation", [([64, 32], "tanh"), ([48], "relu"), ([], "tanh")])
def test_export_matches_the_torch_actor(net_arch, activation):
    torch.manual_seed(3)
    model = ActorCritic(244, 91, net_arch, activation)
    agent = model.to_agent()
    linear = [m for m in model.actor if isinstance(m, torch.nn.Linear)]
    assert len(agent.layers) == len(linear)
    for (w, b), m in zip(agent.layers, linear):  # the weights themselves, bit for bit
        assert np.array_equal(w, m.weight.detach().numpy().T) and np.array_equal(b, m.bias.detach().numpy())
    obs = torch.randn(512, 244)
    with torch.no_grad():
        expected = model.actor(obs).numpy()
    got = agent.logits_batch(obs.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    masks = random_masks(np.random.default_rng(0), 512, 91)
    torch_choice = model.masked_logits(obs, masks).argmax(dim=1).numpy()
    assert np.array_equal(agent.act_batch(obs.numpy(), masks.numpy().astype(np.int8)), torch_choice)


# ----------------------------------------------------------------------------- a run

def reference_gae(rewards, dones, values, acted, last_value, gamma, lam):
    """GAE written per game over its list of learner decisions (the reward and the end that follow each);
    the last row of ``rewards`` and ``dones`` is what came after the last round (rounds: ``settle``)."""
    T, B = values.shape
    adv = np.zeros((T, B))
    for b in range(B):
        decisions = []  # [round, reward after it, game ended after it]
        for t in range(T + 1):
            if t < T and acted[t, b]:
                decisions.append([t, 0.0, False])
            if decisions and not decisions[-1][2]:
                decisions[-1][1] += rewards[t, b]
                decisions[-1][2] = bool(dones[t, b])
        next_value, next_adv = last_value[b], 0.0
        for t, reward, ended in reversed(decisions):
            live = 0.0 if ended else 1.0
            delta = reward + gamma * next_value * live - values[t, b]
            adv[t, b] = delta + gamma * lam * live * next_adv
            next_value, next_adv = values[t, b], adv[t, b]
    return adv


@pytest.mark.parametrize("rollout", ["lockstep", "rounds"])
def test_rollouts_play_legal_decisions_and_gae_follows_each_game(rollout):
    cfg = load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL, "n_envs=8", "ppo.n_steps=40", "ppo.batch_size=64",
                                       f"lean.rollout={rollout}", "ppo.gamma=0.97"])
    env = make_env(cfg)
    env.update_opponents([("random", "random"), ("heuristic", "heuristic")])
    learner = LeanPPO(cfg, env)
    learner.start()
    assert learner.collect() and learner.collect()  # (the second one starts in the middle of games)
    acted = learner.acted
    t, b = torch.nonzero(acted, as_tuple=True)
    assert learner.masks[t, b, learner.actions[t, b]].all(), "every decision the learner took was legal"
    if rollout == "lockstep":
        assert acted.all() and learner.num_timesteps == 2 * 320
    else:
        share = float(acted.float().mean())
        assert 0.3 < share < 0.9, share  # the learner decides in some games each round, not all
        assert env.games.to_act()[np.arange(8), env.seat].all(), "after settle() every game waits on the learner"
    assert learner.dones.sum() > 0
    adv, returns = learner.advantages()
    assert torch.allclose(returns - adv, learner.values)
    rewards = torch.cat([learner.rewards, learner.settle_rewards[None]]).numpy()
    dones = torch.cat([learner.dones, learner.settle_dones[None]]).numpy()
    expected = reference_gae(rewards, dones, learner.values.numpy(), acted.numpy(), learner.last_value.numpy(),
                             cfg.ppo.gamma, cfg.ppo.gae_lambda)
    np.testing.assert_allclose(adv.numpy(), expected, rtol=1e-5, atol=1e-5)
    stats = learner.update()
    assert stats["epochs"] == cfg.ppo.n_epochs and np.isfinite(stats["policy_loss"])
    env.close()


def test_masked_kl_counts_only_the_legal_actions():
    gen = torch.Generator().manual_seed(0)
    logits, ref = torch.randn(6, 9, generator=gen), torch.randn(6, 9, generator=gen)
    masks = torch.rand(6, 9, generator=gen) > 0.4
    masks[:, 2] = True
    kl = masked_kl(logits.masked_fill(~masks, MASKED_LOGIT), ref.masked_fill(~masks, MASKED_LOGIT), masks)
    for row in range(6):
        legal = masks[row]
        p, q = torch.softmax(logits[row, legal], 0), torch.softmax(ref[row, legal], 0)
        assert torch.isclose(kl[row], (p * (p / q).log()).sum(), atol=1e-5)
    assert (kl > 0).all()
    same = logits.masked_fill(~masks, MASKED_LOGIT)
    assert torch.allclose(masked_kl(same, same, masks), torch.zeros(6), atol=1e-6)


def test_the_anchor_holds_the_policy_near_its_start():
    """ppo.anchor_coef: the same rollout and updates, with a large anchor the actor stays far closer to the one
    frozen by set_anchor() than without it (KL measured over the rollout's decisions)."""
    drift = {}
    for coef in (0.0, 50.0):
        cfg = load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL, "n_envs=16", "ppo.n_steps=32",
                                           "ppo.batch_size=128", "ppo.n_epochs=8", "ppo.learning_rate=0.01",
                                           "ppo.ent_coef=0.0", "pretrain.teacher=heuristic",
                                           f"ppo.anchor_coef={coef}"])
        env = make_env(cfg)
        env.update_opponents([("random", "random")])
        learner = LeanPPO(cfg, env)
        learner.set_anchor()
        learner.start()
        assert learner.collect()
        stats = learner.update()
        assert np.isnan(stats["anchor_kl"]) if coef == 0 else stats["anchor_kl"] >= 0
        obs, masks = learner.obs.view(-1, learner.obs.shape[-1]), learner.masks.view(-1, learner.masks.shape[-1])
        with torch.no_grad():
            ref = learner.anchor(obs).masked_fill(~masks, MASKED_LOGIT)
            drift[coef] = float(masked_kl(learner.model.masked_logits(obs, masks), ref, masks).mean())
        env.close()
    assert drift[50.0] < 0.25 * drift[0.0], drift


def test_one_bidder_table_plays_every_member_as_its_own_table_would():
    """BatchedSelfPlay (here through RoundSelfPlay's rounds) plays the pool's bidders (heuristic, tuned, family
    members) through one BidderGames table with a member index per row: the same games, decision for decision,
    as each member's own table (the path before, itself tested against the scalar ``act`` in
    tests/test_act_batch.py)."""
    from gemenvs.agents.megagem import BidderGames
    from gemenvs.arena.batched_selfplay import _Member
    from gemenvs.training.lean_ppo import RoundSelfPlay

    class OwnTables(RoundSelfPlay):
        def _table(self, i):  # every member its own batch_games table: no shared one
            if i not in self._memory:
                self._memory[i] = self._own_table(i)
            return self._memory[i]

    members = [(m, m) for m in ("heuristic", "tuned", "tuned_family:0", "tuned_family:1:2.5", "random")]
    # (256 games: the shared table's calls hold hundreds of bidding rows, so BidderGames._bid splits them by
    # top bid, which the members' own tables, a few dozen rows a call, do not)
    envs = [cls(256, None, seed=3, num_players=4, value_chart="random", batch_memory=True)
            for cls in (RoundSelfPlay, OwnTables)]
    for e in envs:
        e.update_opponents(members)
        e.reset(5)
    rng = np.random.default_rng(0)
    for t in range(60):
        masks = envs[0].action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        out = [e.step_round(actions) if t % 9 else e.settle() for e in envs]
        for a, b in zip(out[0][:3], out[1][:3]):
            assert np.array_equal(a, b), t
        assert np.array_equal(envs[0].games.observations(), envs[1].games.observations()), t
    assert envs[0].episodes.sum() > 100
    shared = envs[0]._bidders
    assert isinstance(shared, BidderGames) and len(shared.members) == 4  # (random plays without a table)
    assert envs[1]._bidders is None and not any(isinstance(t, _Member) for t in envs[1]._memory.values())
    with pytest.raises(ValueError, match="members must be 1 member indices in 0..3"):
        shared.act(envs[0].games.observations()[:1, 1], envs[0].games.action_masks()[:1, 1], [0], [4])
    from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
    from gemenvs.megagem.game import MegaGem

    game = MegaGem(num_players=3)
    with pytest.raises(ValueError, match="TruthfulAgent plays through its own batch_games table"):
        shared.add_member(TruthfulAgent(spec=game.spec, action_spec=game.action_spec))
    with pytest.raises(ValueError, match="sees other observations or actions"):
        shared.add_member(HeuristicBidder(spec=game.spec, action_spec=game.action_spec))  # 3 seats, not 4


def test_tiny_run_writes_checkpoints_that_play(tmp_path):
    overrides = [f"run_root={tmp_path}", "name=tiny", "seed=1", "total_timesteps=2048", "checkpoint_every=1024",
                 "pool.snapshot_every=512", "pool.baselines=[random, heuristic]", "eval.every=1024", "eval.games=8",
                 "eval.final_games=8"]
    assert main([str(DEFAULT_CONFIG), "backend=lean", *SMALL, *overrides]) == 0
    run = tmp_path / "tiny"
    for name in ("config.yaml", "progress.csv", "eval.csv", "best_model.npz", "final_model.npz", "results.md",
                 "results.json", "learning_curve.png", ".gemenvs-run"):
        assert (run / name).exists(), name
    ckpt = run / "checkpoints" / "step_000002048"
    assert (run / "checkpoints" / "step_000001024" / "policy.npz").exists()
    pool = json.loads((ckpt / "pool.json").read_text())
    assert [m["name"] for m in pool["members"] if m["kind"] == "snapshot"] == \
        ["snapshot_1024", "snapshot_2048"]  # every rollout is 1024 steps, so snapshots come per rollout
    trainer = json.loads((ckpt / "trainer.json").read_text())
    assert trainer["backend"] == "lean" and trainer["num_timesteps"] == 2048 and trainer["n_updates"] == 2
    state = load_model_state(ckpt / "model.pt")  # weights_only=True
    assert set(state["model"]) >= {"actor.0.weight", "critic.0.weight"}
    assert not list(run.rglob("*.zip")) and not list(run.rglob("*.pkl"))
    with np.load(ckpt / "policy.npz", allow_pickle=False) as data:
        assert "header" in data
    for path in (ckpt / "policy.npz", run / "best_model.npz", run / "final_model.npz"):
        agent = PolicyAgent.load(path, deterministic=False, seed=0)
        assert agent.metadata.get("backend") == "lean"
        env = megagem_env(value_chart="A")  # illegal_action="raise": an illegal move would fail the test
        final = play_game(env, [agent] + [RandomAgent.for_env(env, seed=k) for k in range(3)], seed=5)
        assert set(final) == set(env.possible_agents) and "winners" in final["player_0"]
    rows = (run / "progress.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("update,step,seconds,steps_per_s")


def test_a_lean_run_resumes_from_its_checkpoint(tmp_path, capsys):
    """--resume on backend lean: the run goes on from the checkpoint's weights, optimizer, anchor, steps, pool and
    schedule (in the same folder, progress.csv appended); a checkpoint of the other backend, or a model.pt that
    is not tensors, is refused in one line before anything is written."""
    from gemenvs.training.checkpoint import CheckpointError, find_checkpoint, load_checkpoint_config, read_checkpoint
    from gemenvs.training.config import apply_overrides

    overrides = [f"run_root={tmp_path}", "name=res", "seed=3", "total_timesteps=2048", "checkpoint_every=1024",
                 "pool.snapshot_every=1024", "pool.baselines=[random]", "eval.every=1024", "eval.games=4",
                 "eval.final_games=4", "pretrain.teacher=random", "pretrain.games=4", "pretrain.epochs=1",
                 "pretrain.dagger_rounds=0", "pretrain.workers=1", "ppo.anchor_coef=0.5"]
    assert main([str(DEFAULT_CONFIG), "backend=lean", *SMALL, *overrides]) == 0
    run = tmp_path / "res"
    first = find_checkpoint(run)
    assert first.name == "step_000002048" and (first / "model.pt").is_file()
    saved = read_checkpoint(run)
    assert (saved.num_timesteps, saved.n_updates) == (2048, 2) and set(saved.params) == {"model", "optimizer", "anchor"}

    cfg, _ = load_checkpoint_config(run)
    apply_overrides(cfg, ["total_timesteps=3072"])
    env = make_env(cfg)
    learner = LeanPPO(cfg, env)
    ckpt = read_checkpoint(run, cfg)
    learner.restore(ckpt.params, ckpt.num_timesteps, ckpt.n_updates)
    for name, tensor in learner.model.state_dict().items():
        assert torch.equal(tensor, saved.params["model"][name]), name
    assert learner.anchor is not None and learner.num_timesteps == 2048
    env.close()

    assert train(cfg, resume=run) == run
    assert "resuming" in capsys.readouterr().out
    last = find_checkpoint(run)
    assert last.name == "step_000003072"
    trainer = json.loads((last / "trainer.json").read_text())
    assert (trainer["num_timesteps"], trainer["n_updates"]) == (3072, 3)
    assert "snapshot_1024" in (last / "pool.json").read_text() and "snapshot_3072" in (last / "pool.json").read_text()
    rows = (run / "progress.csv").read_text().splitlines()
    assert rows[0].startswith("update,step") and [r.split(",")[:2] for r in rows[1:]] == \
        [["1", "1024"], ["2", "2048"], ["3", "3072"]]
    agent = PolicyAgent.load(run / "final_model.npz")
    assert agent.metadata["step"] == 3072

    with pytest.raises(CheckpointError, match="was written by backend lean; resume it with backend=lean"):
        read_checkpoint(run, load_config(DEFAULT_CONFIG, [f"run_root={tmp_path}"]))
    (last / "model.pt").write_bytes(b"not a torch file")
    assert main(["--resume", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gemenvs-train: error: ") and "model.pt cannot be read as a lean checkpoint" in err
    assert "\n" not in err


def test_pretrain_clones_the_teacher_before_ppo(tmp_path):
    """Behaviour cloning of the heuristic bidder (then one DAgger round) on backend lean: pretrain.json as on
    backend sb3, held-out agreement with the teacher far above a uniform choice among the legal actions, a
    step-0 evaluation, and checkpoints that play legal games."""
    overrides = [f"run_root={tmp_path}", "name=cloned", "seed=2", "total_timesteps=1024", "ppo.n_steps=8",
                 "pretrain.teacher=heuristic", "pretrain.games=80", "pretrain.epochs=25", "pretrain.workers=1",
                 "pretrain.batch_size=256", "pretrain.learning_rate=0.003",
                 "pretrain.dagger_rounds=1", "pretrain.dagger_games=12", "pretrain.dagger_epochs=2",
                 "eval.every=100000", "eval.games=4", "eval.final_games=4"]
    assert main([str(DEFAULT_CONFIG), "backend=lean", *SMALL, *overrides]) == 0
    run = tmp_path / "cloned"
    report = json.loads((run / "pretrain.json").read_text())
    assert report["teacher"] == "heuristic" and [r["games"] for r in report["rounds"]] == [80, 12]
    first, dagger = report["rounds"]
    assert first["decisions"] > 1000 and dagger["decisions"] > first["decisions"]
    assert 0 <= dagger["student_agreement_on_own_states"] <= 1
    # a uniform choice among the legal actions agrees with the teacher about this often
    from gemenvs.training.pretrain import collect

    heldout = collect("gemenvs/MegaGem-v0", {"num_players": 4, "value_chart": "A"}, "heuristic", games=6, seed=99)
    chance = float(np.mean(1.0 / heldout.masks.sum(axis=1)))
    for r in (first, dagger):
        assert r["heldout_agreement"] > max(0.3, 3 * chance), (r, chance)  # (chance: about 10%)
    eval_rows = (run / "eval.csv").read_text().splitlines()
    assert eval_rows[1].startswith("0,"), "the cloned policy is evaluated as step 0"
    # the cloned networks went on into PPO: the checkpoint plays, as a PolicyAgent, agreeing with the teacher
    agent = PolicyAgent.load(next((run / "checkpoints").glob("step_*/policy.npz")))
    assert agent.metadata.get("backend") == "lean"
    agreement = np.mean(agent.act_batch(heldout.obs, heldout.masks.astype(np.int8)) == heldout.actions)
    assert agreement > 2 * chance, (agreement, chance)
    env = megagem_env(value_chart="A")  # illegal_action="raise"
    final = play_game(env, [RandomAgent.for_env(env, seed=k) for k in range(3)] + [agent], seed=4)
    assert "winners" in final["player_3"]


def test_the_lean_config_runs_by_rounds_end_to_end(tmp_path):
    overrides = [f"run_root={tmp_path}", "name=rounds", "total_timesteps=3000", "n_envs=64", "ppo.n_steps=8",
                 "ppo.batch_size=256", "ppo.net_arch=[32]", "pool.family.members=1", "pool.snapshot_every=1000",
                 "eval.every=1500", "eval.games=10", "eval.final_games=10", "eval.opponents=[random]",
                 "eval.charts=[A, B]", "eval.workers=1", "checkpoint_every=0", "progress_bar=false"]
    assert main([str(LEAN_CONFIG), *overrides]) == 0
    run = tmp_path / "rounds"
    trainer = json.loads(next((run / "checkpoints").glob("step_*/trainer.json")).read_text())
    assert trainer["num_timesteps"] >= 3000 and trainer["n_updates"] >= 5  # about 300 decisions per rollout
    pool = json.loads(next((run / "checkpoints").glob("step_*/pool.json")).read_text())
    names = [m["name"] for m in pool["members"]]
    assert names[:3] == ["heuristic", "tuned", "tuned_family:0"] and any(n.startswith("snapshot_") for n in names)
    assert set(pool["results"]["heuristic"]) and "chart" in (run / "results.md").read_text()
    agent = PolicyAgent.load(run / "final_model.npz")
    env = megagem_env()
    final = play_game(env, [RandomAgent.for_env(env, seed=k) for k in range(3)] + [agent], seed=2)
    assert "winners" in final["player_3"]


@pytest.mark.parametrize("overlap", ["false", "true"])
def test_max_train_minutes_stops_a_run_early(tmp_path, overlap):
    cfg = load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL, f"run_root={tmp_path}", "name=timed",
                                       "total_timesteps=1000000", "max_train_minutes=0.0001", "eval.final_games=4",
                                       f"lean.overlap={overlap}"])
    run = train(cfg)
    steps = json.loads((run / "results.json").read_text())["steps"]
    assert 64 <= steps < 1024, "stopped within the first rollout"
    assert (run / "final_model.npz").exists()


# ----------------------------------------------------------------------------- lean.overlap

def test_overlap_collects_with_the_policy_before_the_update_into_the_other_buffer():
    """lean.overlap: while update k runs in the background, rollout k+1 is played by the acting copy holding the
    weights from before update k (its recorded log-probabilities are that policy's), into the other buffer; the
    update never touches the acting copy, which takes the new weights when the update joins."""
    cfg = load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL, "n_envs=16", "ppo.n_steps=8", "ppo.batch_size=32",
                                       "ppo.learning_rate=0.01", "lean.overlap=true"])
    env = make_env(cfg)
    env.update_opponents([("random", "random")])
    learner = LeanPPO(cfg, env)
    assert learner.acting is not learner.model and len(learner.rollouts) == 2
    assert learner.update_generator is not learner.generator
    learner.start()
    assert learner.collect()
    first = learner.rollout
    before = {k: v.clone() for k, v in learner.model.state_dict().items()}
    learner.update_async()
    assert learner.collect()  # beside the update
    second = learner.rollout
    assert second is not first
    stats = learner.join()
    assert stats["epochs"] == cfg.ppo.n_epochs and learner.n_updates == 1 and learner.join() is None
    after = learner.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before), "the update changed the learning model"
    for k, v in learner.acting.state_dict().items():
        assert torch.equal(v, after[k]), "the acting copy took the new weights at the join"
    old = ActorCritic(int(env.observation_space.shape[0]), int(env.action_space.n), cfg.ppo.net_arch)
    old.load_state_dict(before)
    obs, masks = second.obs.view(-1, second.obs.shape[-1]), second.masks.view(-1, second.masks.shape[-1])
    with torch.no_grad():
        logp = torch.log_softmax(old.masked_logits(obs, masks), 1).gather(1, second.actions.view(-1, 1)).squeeze(1)
        new = torch.log_softmax(learner.model.masked_logits(obs, masks), 1).gather(1, second.actions.view(-1, 1))
    assert torch.allclose(second.logp.view(-1), logp, atol=1e-5), "rollout k+1 was played by the policy before update k"
    assert not torch.allclose(second.logp.view(-1), new.squeeze(1), atol=1e-5)
    assert learner.seconds["wait"] >= 0 and learner.seconds["update"] > 0
    with pytest.raises(RuntimeError, match="needs lean.overlap"):
        LeanPPO(load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL]), env).update_async()
    env.close()


def test_overlap_runs_are_deterministic_and_resume(tmp_path, monkeypatch):
    """Two runs with lean.overlap (pretraining, anchor, snapshots, evaluations and checkpoints on), one of them with
    the update or the collection slowed down in turn: the same weights, progress rows and checkpoints, whatever
    the threads' timing. Checkpoints are taken after the join, at the steps trained on; --resume goes on."""
    from gemenvs.training.checkpoint import find_checkpoint, load_checkpoint_config
    from gemenvs.training.config import apply_overrides

    overrides = [f"run_root={tmp_path}", "seed=3", "total_timesteps=3072", "checkpoint_every=1024",
                 "pool.snapshot_every=1024", "pool.baselines=[random, heuristic]", "eval.every=1024", "eval.games=4",
                 "eval.final_games=4", "pretrain.teacher=random", "pretrain.games=4", "pretrain.epochs=1",
                 "pretrain.dagger_rounds=0", "pretrain.workers=1", "ppo.anchor_coef=0.5", "lean.overlap=true"]
    assert main([str(DEFAULT_CONFIG), "backend=lean", *SMALL, *overrides, "name=a"]) == 0
    calls = {"collect": 0, "update": 0}
    collect, update = LeanPPO.collect, LeanPPO._update

    def slow_collect(self, *args, **kwargs):
        calls["collect"] += 1
        if calls["collect"] % 2:
            time.sleep(0.2)  # the update finishes first
        return collect(self, *args, **kwargs)

    def slow_update(self, *args, **kwargs):
        calls["update"] += 1
        if calls["update"] % 2 == 0:
            time.sleep(0.2)  # the collection finishes first
        return update(self, *args, **kwargs)

    monkeypatch.setattr(LeanPPO, "collect", slow_collect)
    monkeypatch.setattr(LeanPPO, "_update", slow_update)
    assert main([str(DEFAULT_CONFIG), "backend=lean", *SMALL, *overrides, "name=b"]) == 0
    monkeypatch.undo()
    assert calls["update"] == 3
    a, b = tmp_path / "a", tmp_path / "b"
    for step in (1024, 2048, 3072):
        ckpt_a, ckpt_b = (run / "checkpoints" / f"step_{step:09d}" for run in (a, b))
        trainer = json.loads((ckpt_a / "trainer.json").read_text())
        assert (trainer["num_timesteps"], trainer["n_updates"]) == (step, step // 1024)
        assert PolicyAgent.load(ckpt_a / "policy.npz").metadata["step"] == step
        sa, sb = load_model_state(ckpt_a / "model.pt"), load_model_state(ckpt_b / "model.pt")
        assert set(sa) == {"model", "optimizer", "anchor"}
        for k in sa["model"]:
            assert torch.equal(sa["model"][k], sb["model"][k]), (step, k)
    same = ["update", "step", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "anchor_kl",
            "epochs", "win_rate_all"]
    rows = [list(csv.DictReader((run / "progress.csv").read_text().splitlines())) for run in (a, b)]
    assert [[r[k] for k in same] for r in rows[0]] == [[r[k] for k in same] for r in rows[1]]
    assert [r["step"] for r in rows[0]] == ["1024", "2048", "3072"] and all(r["wait_share"] for r in rows[0])
    assert (a / "eval.csv").read_text() == (b / "eval.csv").read_text()
    assert "snapshot_2048" in (a / "checkpoints" / "step_000003072" / "pool.json").read_text()

    cfg, _ = load_checkpoint_config(a)
    apply_overrides(cfg, ["total_timesteps=4096"])
    assert train(cfg, resume=a) == a
    last = find_checkpoint(a)
    assert last.name == "step_000004096"
    assert json.loads((last / "trainer.json").read_text())["n_updates"] == 4
    assert [r["step"] for r in csv.DictReader((a / "progress.csv").read_text().splitlines())] == \
        ["1024", "2048", "3072", "4096"]


# ----------------------------------------------------------------------------- learning, beside SB3

def test_lean_and_sb3_both_learn_on_the_same_config(tmp_path):
    """40,960 learner decisions each on the same config (same seed, games, PPO settings; the lean backend in
    both rollout modes), then 200 held-out games against three RandomAgents (chance 25%): each wins clearly
    more than chance, and the lean backend is not far behind MaskablePPO."""
    from gemenvs.training.run import train as train_sb3

    rates = {}
    for name, backend, run_fn in (("lean", "backend=lean", train), ("rounds", "lean.rollout=rounds", train),
                                  ("sb3", "backend=sb3", train_sb3)):
        cfg = load_config(DEFAULT_CONFIG, ["backend=lean", backend, *SMALL, f"run_root={tmp_path}", f"name={name}",
                                           "seed=1", "total_timesteps=40960", "eval.final_games=200"])
        result = json.loads((run_fn(cfg) / "results.json").read_text())["results"]["random"]
        assert result["games"] == 200
        rates[name] = result["win_rate"]
        assert result["win_ci"][0] > 0.4, (name, result)  # chance is 0.25
    assert min(rates["lean"], rates["rounds"]) >= rates["sb3"] - 0.15, rates


@pytest.mark.parametrize("anchor", [0.0, 1.0])
def test_the_critic_thread_changes_the_speed_only(anchor):
    """lean.critic_thread: the critic's pass in its own thread gives the same weights, optimizer state and
    statistics, bit for bit, as the whole minibatch in one thread (with and without the anchor term)."""
    out = {}
    for threaded in (False, True):
        cfg = load_config(DEFAULT_CONFIG, ["backend=lean", *SMALL, "n_envs=16", "ppo.n_steps=16",
                                           "ppo.batch_size=64", f"ppo.anchor_coef={anchor}",
                                           "pretrain.teacher=heuristic", f"lean.critic_thread={str(threaded).lower()}"])
        env = make_env(cfg)
        env.update_opponents([("random", "random")])
        learner = LeanPPO(cfg, env)
        if anchor:
            learner.set_anchor()
        learner.start()
        stats = []
        for _ in range(2):
            assert learner.collect()
            stats.append(learner.update())
        weights = [v.clone() for v in learner.model.state_dict().values()]
        moments = [v.clone() for s in learner.optimizer.state.values() for v in s.values()]
        out[threaded] = weights, moments, json.dumps(stats)
        assert (learner._critic_thread is not None) == threaded
        learner.close()
        env.close()
    (w0, m0, s0), (w1, m1, s1) = out[False], out[True]
    assert s0 == s1
    assert all(torch.equal(a, b) for a, b in zip(w0 + m0, w1 + m1))
    assert not torch.equal(w1[0], ActorCritic(w1[0].shape[1], 91, [64]).state_dict()["actor.0.weight"])
