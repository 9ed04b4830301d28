"""A checkpoint survives a kill at any moment: a run killed (SIGKILL) while it writes a checkpoint, after any
number of that checkpoint's files, resumes with ``--resume RUN`` from its newest complete checkpoint and says
which unfinished folder it skips.

The kill comes from the checkpoint writer itself (``GEMENVS_TEST_KILL_CHECKPOINT=N:K``: the N-th checkpoint of
the process kills it once K of its files are written), in a training subprocess, so every point between two
files is reached exactly.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("yaml")

from gemenvs.training.checkpoint import CHECKPOINT_FILES, KILL_ENV, find_checkpoint  # noqa: E402
from gemenvs.training.cli import main  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "megagem" / "selfplay_sb3.yaml"
#: a lean run of three 256-decision rollouts, with a snapshot, an evaluation and a checkpoint after each
LEAN = ["backend=lean", "seed=1", "n_envs=16", "ppo.n_steps=16", "ppo.batch_size=128", "ppo.n_epochs=1",
        "ppo.net_arch=[16]", "env.options={num_players: 3, value_chart: A}", "pool.baselines=[random]",
        "pool.family.members=0", "pool.snapshot_every=256", "eval.every=256", "eval.games=3", "eval.final_games=3",
        "eval.opponents=[random]", "eval.charts=null", "eval.workers=1", "checkpoint_every=256",
        "progress_bar=false", "torch_threads=1", "total_timesteps=768"]
#: the same on backend sb3 (rollouts of 8 games x 32 steps)
SB3 = ["backend=sb3", "seed=1", "n_envs=8", "ppo.n_steps=32", "ppo.batch_size=128", "ppo.n_epochs=1",
       "ppo.net_arch=[16]", "env.options={num_players: 3, value_chart: A}", "pool.baselines=[random]",
       "pool.family.members=0", "pool.snapshot_every=256", "eval.every=256", "eval.games=3", "eval.final_games=3",
       "eval.opponents=[random]", "eval.charts=null", "eval.workers=1", "checkpoint_every=256",
       "progress_bar=false", "torch_threads=1", "total_timesteps=768"]
#: the files of a checkpoint, in the order they are written
LEAN_FILES = ["policy.npz", "model.pt", "config.yaml", "pool.json", "trainer.json"]
SB3_FILES = ["policy.npz", "model.zip", "config.yaml", "pool.json", "trainer.json"]


def killed_run(tmp_path: Path, overrides: list[str], point: str) -> Path:
    """A run started in a subprocess that kills itself at ``point`` (``N:K``); its folder."""
    env = {**os.environ, KILL_ENV: point}
    proc = subprocess.run([sys.executable, "-m", "gemenvs.training", str(CONFIG), f"run_root={tmp_path}", "name=run",
                           *overrides], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, f"the run was not killed at {point}: {proc.stderr[-2000:]}"
    return tmp_path / "run"


def assert_complete(run: Path, files: list[str]) -> list[Path]:
    """Every ``step_N`` folder of the run holds every file; the ``step_N`` folders, oldest first."""
    steps = sorted(d for d in (run / "checkpoints").iterdir() if d.name.startswith("step_"))
    for d in steps:
        assert sorted(p.name for p in d.iterdir()) == sorted(files), d
    return steps


@pytest.mark.parametrize("written", range(len(LEAN_FILES) + 1))
def test_a_lean_run_killed_while_writing_a_checkpoint_resumes_from_the_last_complete_one(tmp_path, capsys, written):
    run = killed_run(tmp_path, LEAN, f"2:{written}")  # the checkpoint of step 512, after `written` files
    steps = assert_complete(run, LEAN_FILES)
    assert [d.name for d in steps] == ["step_000000256"], "the killed checkpoint is not in place"
    partial = [d for d in (run / "checkpoints").iterdir() if d.name.startswith(".step_000000512.tmp-")]
    assert len(partial) == 1 and sorted(p.name for p in partial[0].iterdir()) == sorted(LEAN_FILES[:written])
    assert find_checkpoint(run) == steps[0]
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"note: ignoring {partial[0]}: a checkpoint whose writing was cut short" in out
    assert f"resuming {run} from step_000000256 at step 256" in out
    steps = assert_complete(run, LEAN_FILES)
    assert [d.name for d in steps] == ["step_000000256", "step_000000512", "step_000000768"]
    assert (run / "results.json").is_file() and (run / "final_model.npz").is_file()


def test_a_kill_while_the_final_checkpoint_replaces_one_of_the_same_step_keeps_the_earlier(tmp_path, capsys):
    run = killed_run(tmp_path, LEAN, f"4:{len(LEAN_FILES)}")  # all files of the final checkpoint, not yet in place
    steps = assert_complete(run, LEAN_FILES)
    assert [d.name for d in steps] == ["step_000000256", "step_000000512", "step_000000768"]
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert "note: ignoring" in out and f"resuming {run} from step_000000768 at step 768" in out
    assert [d.name for d in assert_complete(run, LEAN_FILES)][-1] == "step_000000768"


@pytest.mark.parametrize("written", [2, 4])
def test_an_sb3_run_killed_between_model_zip_and_config_yaml_resumes(tmp_path, capsys, written):
    run = killed_run(tmp_path, SB3, f"2:{written}")
    assert [d.name for d in assert_complete(run, SB3_FILES)] == ["step_000000256"]
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert "note: ignoring" in out and f"resuming {run} from step_000000256 at step 256" in out
    assert [d.name for d in assert_complete(run, SB3_FILES)][-1] == "step_000000768"


def test_an_incomplete_checkpoint_of_an_older_version_is_skipped_with_a_note(tmp_path, capsys):
    """A step_N folder that lacks a file (as a kill could leave one before checkpoints were written whole):
    --resume takes the newest complete checkpoint and says which one it skips."""
    run = killed_run(tmp_path, LEAN, "3:0")
    (run / "checkpoints" / "step_000000512" / "config.yaml").unlink()
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert (f"note: ignoring {run / 'checkpoints' / 'step_000000512'}: an incomplete checkpoint (config.yaml is "
            f"missing)") in out
    assert f"resuming {run} from step_000000256 at step 256" in out
    assert set(CHECKPOINT_FILES) <= {p.name for p in (run / "checkpoints" / "step_000000768").iterdir()}
