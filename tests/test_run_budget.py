"""A run's budget is work: the same command gives the same files on a quiet or a busy machine, the opt-in
time guard says what it cut, and every long phase shows its progress."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("torch")

from gemenvs.agents.policy import PolicyAgent  # noqa: E402
from gemenvs.training.budget import TimeLimit  # noqa: E402
from gemenvs.training.cli import main  # noqa: E402
from gemenvs.training.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MAKE_TRAIN_CONFIG = ROOT / "configs" / "megagem" / "selfplay.yaml"

#: the make-train recipe (warm start, advice features, pool, periodic evaluations over the charts), made small
SMALL_MAKE_TRAIN = ["n_envs=64", "total_timesteps=2500", "ppo.batch_size=256", "ppo.net_arch=[32]",
                    "pretrain.games=30", "pretrain.epochs=1", "pretrain.dagger_games=8", "pretrain.dagger_epochs=1",
                    "eval.every=1000", "eval.games=8", "eval.final_games=10", "pool.family.members=2",
                    "pool.snapshot_every=1000", "checkpoint_every=1000", "progress_bar=false"]
#: the files whose bytes a seeded run determines
DETERMINED = ["results.json", "eval.csv", "best_model.npz", "final_model.npz"]


def _busy(processes: int):
    """Processes that keep ``processes`` cores busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]


def test_a_seeded_run_writes_the_same_files_on_a_quiet_and_on_a_busy_machine(tmp_path):
    base = [str(MAKE_TRAIN_CONFIG), f"run_root={tmp_path}", *SMALL_MAKE_TRAIN]
    assert main([*base, "name=quiet"]) == 0
    burners = _busy(os.cpu_count() or 2)
    try:
        time.sleep(0.2)
        assert all(p.poll() is None for p in burners), "the load is running"
        assert main([*base, "name=busy"]) == 0
    finally:
        for p in burners:
            p.kill()
            p.wait()
    quiet, busy = tmp_path / "quiet", tmp_path / "busy"
    for name in DETERMINED:
        assert (quiet / name).read_bytes() == (busy / name).read_bytes(), name
    assert (quiet / "results.md").read_text().replace("## quiet", "## busy") == (busy / "results.md").read_text()
    for ckpt in sorted((quiet / "checkpoints").glob("step_*")):
        assert (ckpt / "policy.npz").read_bytes() == (busy / "checkpoints" / ckpt.name / "policy.npz").read_bytes()
    summary = json.loads((quiet / "results.json").read_text())
    assert summary["stopped_by_time_limit"] is False and not any("time limit" in n for n in summary["notes"])
    updates = len((quiet / "progress.csv").read_text().splitlines()) - 1  # (a row per update)
    assert summary["steps"] >= 2500 and summary["ppo_updates"] == updates >= 5 and summary["total_timesteps"] == 2500
    assert "seconds" not in json.dumps(summary), "wall times are not results"
    assert set(json.loads((quiet / "timing.json").read_text())) == {"train_seconds", "eval_seconds"}


@pytest.mark.parametrize("backend", ["lean", "sb3"])
def test_a_run_the_time_limit_cuts_in_the_warm_start_says_so(tmp_path, capsys, backend):
    overrides = [f"run_root={tmp_path}", "name=cut", f"backend={backend}", *SMALL_MAKE_TRAIN,
                 "pretrain.games=200", "pretrain.workers=1", "max_train_minutes=0.00001", "eval.every=0",
                 "eval.opponents=[random]", "eval.best_by=random", "eval.charts=null", "eval.final_games=4",
                 "env.features=null"]
    if backend == "sb3":
        overrides += ["n_envs=8", "ppo.n_steps=64"]
    assert main([str(MAKE_TRAIN_CONFIG), *overrides]) == 0
    out = capsys.readouterr().out
    run = tmp_path / "cut"
    summary = json.loads((run / "results.json").read_text())
    assert summary["stopped_by_time_limit"] is True and summary["ppo_updates"] == 0 and summary["steps"] == 0
    cut, none = summary["notes"]
    assert cut.startswith("Stopped by the time limit (max_train_minutes: 1e-05) in the warm start after 25 of "
                          "200 teacher games; the result is not the documented one (0 of 2,500 learner decisions)")
    assert none == "No PPO update was made: the model is the warm start's clone."
    header = (run / "results.md").read_text().split("| opponents")[0]
    assert cut in header and none in header
    assert out.rstrip().splitlines()[-2:] == [cut, none], "the run's last lines say it"
    pretrain = json.loads((run / "pretrain.json").read_text())
    assert pretrain["cut_by_time_limit"] is True and [r["games"] for r in pretrain["rounds"]] == [25]


def test_a_run_the_time_limit_cuts_in_ppo_says_how_far_it_got(tmp_path, capsys):
    overrides = [f"run_root={tmp_path}", "name=cut", *SMALL_MAKE_TRAIN, "pretrain.teacher=null",
                 "max_train_minutes=0.00001", "eval.every=0", "eval.opponents=[random]", "eval.best_by=random",
                 "eval.charts=null", "eval.final_games=4", "total_timesteps=100000"]
    assert main([str(MAKE_TRAIN_CONFIG), *overrides]) == 0
    summary = json.loads((tmp_path / "cut" / "results.json").read_text())
    assert summary["stopped_by_time_limit"] and summary["ppo_updates"] == 0 and 0 < summary["steps"] < 1000
    assert re.fullmatch(r"Stopped by the time limit \(max_train_minutes: 1e-05\) in PPO after [\d,]+ of 100,000 "
                        r"decisions; the result is not the documented one \([\d,]+ of 100,000 learner decisions\)\.",
                        summary["notes"][0]), summary["notes"]
    assert summary["notes"][1] == "No PPO update was made: the model is the initial policy."
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == summary["notes"][1]


def test_the_time_limit_records_the_first_cut_only():
    limit = TimeLimit(None)
    assert limit.allows("anything") and not limit.hit and limit.message() is None
    limit = TimeLimit(1e-9)
    time.sleep(0.001)
    assert not limit.allows("the warm start") and not limit.allows("PPO")
    assert limit.cut == "the warm start" and "in the warm start;" in limit.message()


def test_every_long_phase_shows_its_progress(tmp_path, capsys):
    overrides = [f"run_root={tmp_path}", "name=bars", *SMALL_MAKE_TRAIN, "progress_bar=true", "pretrain.workers=1",
                 "eval.workers=1"]
    assert main([str(MAKE_TRAIN_CONFIG), *overrides]) == 0
    captured = capsys.readouterr()
    for bar in ("teacher games: 100%", "cloning: 100%", "DAgger round 1 games: 100%", "DAgger round 1 cloning: 100%",
                "evaluation at step 0:", "PPO:", "final evaluation:"):
        assert bar in captured.err, bar
    for line in ("warm start: 30 games of 'tuned' against itself, then 1 epoch of cloning",
                 "teacher games: 30 of 30", "PPO: 2,500 learner decisions to go"):
        assert line in captured.out, line


def test_lean_logs_to_tensorboard_under_the_sb3_paths_tags(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    common = [f"run_root={tmp_path}", "n_envs=64", "total_timesteps=2048", "ppo.net_arch=[16]", "ppo.batch_size=256",
              "pretrain.teacher=null", "env.features=null", "pool.baselines=[random]", "pool.family.members=0",
              "pool.snapshot_every=0", "eval.every=1024", "eval.games=4", "eval.opponents=[random]", "eval.best_by=random",
              "eval.charts=null", "eval.final_games=4", "eval.workers=1", "checkpoint_every=0", "progress_bar=false"]
    assert main([str(MAKE_TRAIN_CONFIG), *common, "name=lean"]) == 0
    assert main([str(MAKE_TRAIN_CONFIG), *common, "name=sb3", "backend=sb3", "ppo.n_steps=16"]) == 0

    def tags(run: str) -> dict[str, list[int]]:
        """Every scalar tag of the run's TensorBoard files, with its steps."""
        files = sorted((tmp_path / run / "tb").rglob("events.*"))
        assert files, run
        out = {}
        for f in files:
            acc = EventAccumulator(str(f))
            acc.Reload()
            for tag in acc.Tags()["scalars"]:
                out[tag] = [e.step for e in acc.Scalars(tag)]
        return out

    lean, sb3 = tags("lean"), tags("sb3")
    wanted = {"train/policy_gradient_loss", "train/value_loss", "train/entropy_loss", "train/approx_kl",
              "train/clip_fraction", "train/learning_rate", "time/fps", "pool/win_rate_all",
              "pool/win_rate_random", "pool/snapshots", "eval/win_rate_random", "eval/mean_margin_random"}
    assert wanted <= set(lean), wanted - set(lean)
    assert set(lean) <= set(sb3), set(lean) - set(sb3)
    assert lean["eval/win_rate_random"][0] >= 1024, "the x-axis is learner decisions"


def test_policy_files_depend_on_the_weights_alone(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(6, 4)).astype(np.float32), np.zeros(4, np.float32)),
              (rng.normal(size=(4, 3)).astype(np.float32), np.zeros(3, np.float32))]
    agent = PolicyAgent(layers, "tanh", metadata={"step": 7})
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    agent.save(tmp_path / "a.npz")
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)  # (a zip member is stamped with the time it is written)
    agent.save(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    again = PolicyAgent.load(tmp_path / "b.npz")
    assert again.metadata == {"step": 7} and all(np.array_equal(w, v) for (w, _), (v, _) in zip(layers, again.layers))


def test_the_learning_curve_labels_the_warm_start_and_a_single_evaluation(tmp_path):
    from gemenvs.arena.evaluate import EVAL_FIELDS
    from gemenvs.training.plotting import learning_curve_figure

    path = tmp_path / "eval.csv"
    path.write_text(",".join(EVAL_FIELDS) + "\n0,heuristic,100,0.5,0.4,0.6,1.0\n0,tuned,100,0.25,0.2,0.3,-1.0\n")
    fig = learning_curve_figure(path, 4, "MegaGem", warm_start="warm start (clone of tuned)")
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "warm start (clone of tuned)" in texts and "one evaluation, at 0 decisions: no curve" in texts
    assert all(ax.get_xlabel() == "learner decisions trained on" for ax in fig.axes)
    path.write_text(path.read_text() + "200000,heuristic,100,0.55,0.45,0.65,2.0\n200000,tuned,100,0.3,0.2,0.4,0.0\n")
    texts = [t.get_text() for ax in learning_curve_figure(path, 4).axes for t in ax.texts]
    assert not any("one evaluation" in t for t in texts) and not any("warm start" in t for t in texts)
    texts = [t.get_text() for ax in learning_curve_figure(path, 4, kept=200000).axes for t in ax.texts]
    assert texts.count("kept model") == 2


def test_every_shipped_config_states_its_budget_as_work():
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        if path.parent.name == "benchmark":  # (the benchmark's own format: its budget is total_timesteps too)
            assert raw["total_timesteps"] > 0 and "max_train_minutes" not in raw
            continue
        cfg = load_config(path)
        assert cfg.max_train_minutes is None, f"{path.name}: the budget is decisions, not minutes"
        assert raw.get("total_timesteps", 0) > 0, f"{path.name} names its budget"
    cfg = load_config(MAKE_TRAIN_CONFIG)
    budget = f"{cfg.total_timesteps:,} learner decisions"
    assert budget in MAKE_TRAIN_CONFIG.read_text().splitlines()[0]
    assert budget in (ROOT / "README.md").read_text()
    assert cfg.eval.final_games == 1000 and cfg.eval.charts == ["A", "B", "C", "D", "E"]
