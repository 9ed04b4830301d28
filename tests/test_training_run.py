"""The run loop and the learner interface: the schedule runs where a learner says, and the rules "option X needs
learner Y" come from the learners' declared capabilities."""
from __future__ import annotations

import json
from typing import ClassVar

import numpy as np
import pytest

pytest.importorskip("yaml")
pytest.importorskip("torch")

from gemenvs.agents.policy import PolicyAgent  # noqa: E402
from gemenvs.training.checkpoint import prepare_run_dir, read_checkpoint  # noqa: E402
from gemenvs.training.config import ConfigError, load_config  # noqa: E402
from gemenvs.training.learner import (  # noqa: E402
    CAPABILITIES,
    Learner,
    check_capabilities,
    supporting,
)
from gemenvs.training.run import Run  # noqa: E402


class CountingLearner(Learner):
    """A learner without a model: each rollout is 10 decisions, its update's step lags by ``lag`` rollouts."""

    name = "sb3"  # (its checkpoints are read as this backend's)
    progress_fields: ClassVar[list[str]] = ["loss"]

    def __init__(self, cfg, lag: int = 0):
        self.cfg, self.lag, self.calls, self.pending = cfg, lag, [], []
        self.num_timesteps = self.n_updates = 0

    def start(self, seed):
        self.calls.append(("start", seed))

    def collect(self, on_step):
        for _ in range(10):
            self.num_timesteps += 1
            if not on_step([("random", 1.0)]):
                return False
        self.calls.append(("collect", self.num_timesteps))
        return True

    def update(self):
        self.pending.append(self.num_timesteps)
        if len(self.pending) <= self.lag:
            return None
        self.n_updates += 1
        return {"loss": 0.5}, self.pending.pop(0)

    def drain(self):
        if not self.pending:
            return None
        self.n_updates += 1
        return {"loss": 0.25}, self.pending.pop(0)

    def export_agent(self, deterministic=True, step=None):
        layers = [(np.zeros((3, 2), np.float32), np.zeros(2, np.float32))]
        return PolicyAgent(layers, "identity", deterministic=deterministic, metadata={"step": step})

    def checkpoint_files(self):
        return [("model.zip", b"not read here")]

    @classmethod
    def read_state(cls, folder):
        return {}

    def restore(self, state, num_timesteps, n_updates, trainer):
        self.num_timesteps, self.n_updates = num_timesteps, n_updates


def _config(tmp_path, *overrides):
    return load_config(None, [f"run_root={tmp_path}", "name=run", "env.id=gemenvs/GEM-v0", "pool.baselines=[random]",
                              "eval.every=0", "eval.opponents=[random]", "pool.snapshot_every=0", "total_timesteps=35",
                              "checkpoint_every=20", "progress_bar=false", *overrides])


@pytest.mark.parametrize("lag", [0, 1])
def test_the_schedule_runs_at_the_step_each_update_reports(tmp_path, lag):
    cfg = _config(tmp_path)
    learner = CountingLearner(cfg, lag)
    run = Run(cfg, prepare_run_dir(cfg), learner, players=3)
    run.learn()
    run.close()
    assert learner.calls[0] == ("start", cfg.seed) and learner.num_timesteps == 40, "whole rollouts to the budget"
    rows = (cfg.run_dir / "progress.csv").read_text().splitlines()
    assert rows[0] == "update,step,seconds,steps_per_s,loss"
    assert [r.split(",")[:2] for r in rows[1:]] == [["1", "10"], ["2", "20"], ["3", "30"], ["4", "40"]]
    checkpoints = sorted(p.name for p in (cfg.run_dir / "checkpoints").iterdir())
    assert checkpoints == ["step_000000020", "step_000000040"]  # (a lagging update's step is the one it trained on)
    ckpt = cfg.run_dir / "checkpoints" / "step_000000020"
    assert sorted(p.name for p in ckpt.iterdir()) == ["config.yaml", "model.zip", "policy.npz", "pool.json",
                                                      "trainer.json"]
    trainer = json.loads((ckpt / "trainer.json").read_text())
    assert (trainer["backend"], trainer["num_timesteps"]) == ("sb3", 20) and trainer["next_checkpoint"] == 40
    assert PolicyAgent.load(ckpt / "policy.npz").metadata["step"] == 20
    assert json.loads((ckpt / "pool.json").read_text())["results"]["random"], "the games' results reach the pool"


def test_a_checkpoint_reads_back_with_its_counters(tmp_path, monkeypatch):
    import gemenvs.training.learner as learner_module

    cfg = _config(tmp_path)
    run = Run(cfg, prepare_run_dir(cfg), CountingLearner(cfg), players=3)
    run.learn()
    monkeypatch.setattr(learner_module, "learner_class", lambda backend: CountingLearner)
    ckpt = read_checkpoint(cfg.run_dir, cfg)
    assert (ckpt.num_timesteps, ckpt.n_updates, ckpt.path.name) == (40, 4, "step_000000040")


def test_the_time_guard_cuts_a_rollout_and_says_so(tmp_path, capsys):
    cfg = _config(tmp_path, "max_train_minutes=0.000001", "total_timesteps=1000")
    learner = CountingLearner(cfg)
    run = Run(cfg, prepare_run_dir(cfg), learner, players=3)
    run.learn()
    assert learner.num_timesteps < 10 and run.limit.hit
    assert "stopped by the time limit" in capsys.readouterr().out


@pytest.mark.parametrize("overrides, message", [
    (["backend=lean", "env.id=gemenvs/GEM-v0"], "backend lean plays on the batched engine, which runs MegaGem only, "
                                                "not gem; use backend sb3 (or rllib) for gem"),
    (["backend=lean", "vec_env=subproc"], "backend lean: vec_env must be 'auto' or 'batched'"),
    (["backend=sb3", "lean.overlap=true"], "lean.overlap runs on backend lean only; set it to false for backend sb3"),
    (["backend=rllib", "env.shaping=1"], "env.shaping runs on backends lean and sb3; set it to 0 for backend rllib"),
    (["backend=rllib", "env.features=megagem_valuation"], "env.features runs on backends lean and sb3"),
    (["backend=sb3", "ppo.n_steps=10", "ppo.batch_size=64"], "ppo.batch_size (64) must divide one rollout"),
])
def test_each_learner_rule_is_one_line_from_its_capabilities(overrides, message):
    with pytest.raises(ConfigError) as e:
        load_config(None, overrides)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_capabilities_are_the_rules():
    assert supporting("ppo.anchor_coef") == ["lean"] and supporting("env.features") == ["sb3", "lean"]
    cfg = load_config(None, ["backend=lean", "lean.rollout=rounds", "ppo.n_steps=10", "ppo.batch_size=64"])
    assert check_capabilities(cfg, "megagem") is None, "rounds rollouts take a last, smaller minibatch"
    assert set(CAPABILITIES) == {"sb3", "lean", "rllib"} and not CAPABILITIES["rllib"].resume
