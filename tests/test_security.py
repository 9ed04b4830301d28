"""Untrusted files never run code, and ``overwrite`` deletes nothing but its own run folder.

Every malicious file here carries a pickle whose ``__reduce__`` writes a marker file when it is
unpickled. Each entry point that reads a model (``PolicyAgent.load`` of a ``.zip`` and of an
``.npz``, ``gemenvs-train --resume``, ``.zip`` paths in ``pool.baselines`` and ``eval.opponents``,
snapshot paths in a checkpoint's ``pool.json``) must either read the weights without touching
the payload or refuse the file with a clear one-line error; the marker must never appear. Control
tests show that the same payloads do run under the loaders we replaced (SB3's ``load``, numpy
with ``allow_pickle=True``), so these tests can fail.
"""
from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

import torch  # noqa: E402

from gemenvs.agents.policy import PolicyAgent, PolicyLoadError  # noqa: E402
from gemenvs.training.checkpoint import RUN_MARKER, CheckpointError, prepare_run_dir  # noqa: E402
from gemenvs.training.cli import main  # noqa: E402
from gemenvs.training.config import ConfigError, load_config, save_config  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "megagem" / "selfplay_sb3.yaml"
#: a run small enough to train and evaluate in a few seconds, in-process
TINY = ["seed=1", "total_timesteps=64", "n_envs=1", "progress_bar=false", "ppo.n_steps=32", "ppo.batch_size=32", "ppo.n_epochs=1",
        "ppo.net_arch=[16]", "pool.baselines=[random]", "pool.snapshot_every=0", "eval.every=0",
        "eval.opponents=[random]", "eval.final_games=4", "eval.workers=1", "checkpoint_every=0"]


class Payload:
    """Unpickling this writes ``marker``: what an attacker's file would do with ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('pwned')",)


def payload_b64(marker: Path) -> str:
    """The payload as SB3 stores a pickled entry of ``data`` (base64 of a cloudpickle)."""
    return base64.b64encode(pickle.dumps(Payload(marker))).decode()


def make_model(tmp_path: Path, overrides=()):
    """A real (untrained) MaskablePPO model and its config, for building files."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gemenvs.training.selfplay import _EnvFactory
    from gemenvs.training.selfplay import make_model as build

    cfg = load_config(CONFIG, [f"run_root={tmp_path / 'runs'}", *TINY, *overrides])
    env = DummyVecEnv([_EnvFactory(cfg)])
    return build(cfg, env), cfg


def rewrite_zip(src: Path, dst: Path, data=None, members: dict[str, bytes] | None = None) -> Path:
    """Copy an SB3 zip, replacing its ``data`` JSON and/or some members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            blob = zin.read(name)
            if name == "data" and data is not None:
                blob = json.dumps(data).encode()
            if members and name in members:
                blob = members[name]
            zout.writestr(name, blob)
    return dst


def poison_data(src: Path, marker: Path) -> dict:
    """The zip's ``data`` with every pickled entry (policy class, spaces, schedules...) replaced by the payload."""
    with zipfile.ZipFile(src) as z:
        data = json.loads(z.read("data"))
    poisoned = 0
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = payload_b64(marker)
            poisoned += 1
    assert poisoned >= 5  # policy_class, observation/action spaces, schedules, buffer class
    return data


def poisoned_pth(marker: Path) -> bytes:
    """A torch-saved "state dict" that holds the payload beside a tensor."""
    buffer = io.BytesIO()
    torch.save({"action_net.weight": torch.zeros(2, 2), "evil": Payload(marker)}, buffer)
    return buffer.getvalue()


def evil_npz(path: Path, marker: Path) -> Path:
    """A PolicyAgent .npz with a valid header whose weights are a pickled object array."""
    header = json.dumps({"format": "gemenvs-policy", "version": 1, "activation": "tanh", "layers": 1, "metadata": {}})
    np.savez(path, header=np.array(header), weight_0=np.array([Payload(marker)], dtype=object), bias_0=np.zeros(3))
    return path


@pytest.fixture
def model_zip(tmp_path):
    model, _ = make_model(tmp_path)
    path = tmp_path / "clean.zip"
    model.save(path)
    return model, path


# ----------------------------------------------------------------------------- the payloads are real

def test_control_the_payloads_run_under_the_unsafe_loaders(tmp_path, model_zip):
    from sb3_contrib import MaskablePPO

    _, clean = model_zip
    marker = tmp_path / "marker_sb3"
    evil = rewrite_zip(clean, tmp_path / "evil.zip", data=poison_data(clean, marker))
    try:
        MaskablePPO.load(evil, device="cpu")
    except Exception:
        pass  # the payload returns None where SB3 wanted a class: it fails, after running
    assert marker.exists(), "SB3's own loader runs the pickled entries of data"

    marker2 = tmp_path / "marker_npz"
    np.load(evil_npz(tmp_path / "evil.npz", marker2), allow_pickle=True)["weight_0"]
    assert marker2.exists(), "numpy runs pickled object arrays when allowed to"


# ----------------------------------------------------------------------------- PolicyAgent.load

def test_zip_with_pickled_data_entries_loads_weights_only(tmp_path, model_zip):
    model, clean = model_zip
    marker = tmp_path / "marker"
    evil = rewrite_zip(clean, tmp_path / "evil.zip", data=poison_data(clean, marker))
    agent = PolicyAgent.load(evil)
    assert not marker.exists()
    reference = PolicyAgent.from_sb3(model)
    obs = np.random.default_rng(0).random(reference.observation_size).astype(np.float32)
    assert np.allclose(agent.logits(obs), reference.logits(obs), atol=1e-6)


def test_zip_with_pickled_weights_is_refused(tmp_path, model_zip):
    _, clean = model_zip
    marker = tmp_path / "marker"
    evil = rewrite_zip(clean, tmp_path / "evil.zip", members={"policy.pth": poisoned_pth(marker)})
    with pytest.raises(PolicyLoadError, match=r"evil\.zip: policy\.pth is not a plain state dict of tensors "
                                              r"\(it calls (builtins\.)?exec\)"):
        PolicyAgent.load(evil)
    assert not marker.exists()


def test_npz_with_pickled_object_arrays_is_refused(tmp_path):
    marker = tmp_path / "marker"
    path = evil_npz(tmp_path / "evil.npz", marker)
    with pytest.raises(PolicyLoadError, match=r"evil\.npz is not a readable PolicyAgent \.npz file .*Object arrays"):
        PolicyAgent.load(path)
    assert not marker.exists()


# ----------------------------------------------------------------------------- config opponents

@pytest.mark.parametrize("key", ["pool.baselines", "eval.opponents"])
@pytest.mark.parametrize("poison", ["data", "weights"])
def test_policy_paths_in_the_config_never_run_code(tmp_path, model_zip, capsys, key, poison):
    model, clean = model_zip
    marker = tmp_path / "marker"
    if poison == "data":  # readable weights: accepted, the payload untouched
        evil = rewrite_zip(clean, tmp_path / "evil.zip", data=poison_data(clean, marker))
        cfg = load_config(CONFIG, [f"run_root={tmp_path / 'runs'}", *TINY, f"{key}=[random, {evil}]"])
        assert str(evil) in getattr(cfg.pool if key == "pool.baselines" else cfg.eval, key.split(".")[1])
    else:  # a payload in the weights: a clear error before any run folder exists
        evil = rewrite_zip(clean, tmp_path / "evil.zip", members={"policy.pth": poisoned_pth(marker)})
        assert main([str(CONFIG), f"run_root={tmp_path / 'runs'}", *TINY, f"{key}=[random, {evil}]"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"gemenvs-train: error: {key}: '{evil}'") and err.count("\n") == 1
        assert "pickled object there could run code" in err
        assert not (tmp_path / "runs").exists()
    assert not marker.exists()


def test_policy_path_of_another_game_is_a_config_error(tmp_path, model_zip):
    _, clean = model_zip  # a 4-player MegaGem policy
    with pytest.raises(ConfigError, match=r"eval\.opponents: .* reads 244 observation values .* another game or "
                                          r"player count"):
        load_config(CONFIG, [*TINY, "env.options.num_players=3", f"eval.opponents=[{clean}]"])


# ----------------------------------------------------------------------------- --resume and pool.json

def make_checkpoint(tmp_path: Path, model, cfg, pool: dict | None = None) -> Path:
    """A run folder with one checkpoint, written as the trainer writes them."""
    run = prepare_run_dir(cfg)
    ckpt = run / "checkpoints" / "step_000000032"
    ckpt.mkdir(parents=True)
    model.num_timesteps = 32
    model.save(ckpt / "model.zip")
    save_config(cfg, ckpt / "config.yaml")
    save_config(cfg, run / "config.yaml")
    (ckpt / "pool.json").write_text(json.dumps(pool or {"members": [], "results": {}}))
    (ckpt / "trainer.json").write_text(json.dumps({"backend": "sb3", "num_timesteps": 32, "n_updates": 0,
                                                  "next_snapshot": None, "next_eval": None, "next_checkpoint": None,
                                                  "best_score": float("-inf"), "best_step": -1}))
    return run


def listing(folder: Path) -> dict[str, float]:
    """Every file under ``folder`` with its modification time."""
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_resume_of_a_checkpoint_with_pickled_weights_is_refused(tmp_path, capsys):
    model, cfg = make_model(tmp_path, ["name=victim"])
    run = make_checkpoint(tmp_path, model, cfg)
    marker = tmp_path / "marker"
    ckpt = run / "checkpoints" / "step_000000032"
    clean = ckpt / "model.zip"
    rewrite_zip(clean, tmp_path / "evil.zip", members={"policy.optimizer.pth": poisoned_pth(marker)})
    (tmp_path / "evil.zip").replace(clean)
    before = listing(run)
    assert main(["--resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert err == (f"gemenvs-train: error: {clean}: policy.optimizer.pth is not a plain state dict of tensors (it calls "
                   f"exec); a pickled object there could run code, so the file is refused\n")
    assert not marker.exists() and listing(run) == before, "nothing ran and nothing was written"


def test_resume_of_a_checkpoint_with_pickled_data_trains_from_the_weights(tmp_path, capsys):
    model, cfg = make_model(tmp_path, ["name=run"])
    run = make_checkpoint(tmp_path, model, cfg)
    marker = tmp_path / "marker"
    model_zip = run / "checkpoints" / "step_000000032" / "model.zip"
    rewrite_zip(model_zip, tmp_path / "evil.zip", data=poison_data(model_zip, marker))
    (tmp_path / "evil.zip").replace(model_zip)
    assert main(["--resume", str(run)]) == 0
    assert "resuming" in capsys.readouterr().out
    assert not marker.exists()
    assert (run / "checkpoints" / "step_000000064" / "model.zip").exists()


@pytest.mark.parametrize("source, message", [
    ("../outside.npz", "leaves the run folder"),
    ("pool/../../outside.npz", "leaves the run folder"),
    ("ABSOLUTE", "leaves the run folder"),
    ("pool/link.npz", "points outside the run folder"),
    ("pool/evil.npz", "Object arrays cannot be loaded"),
    ("pool/missing.npz", "is missing"),
])
def test_pool_json_snapshot_paths_stay_inside_the_run_folder(tmp_path, capsys, source, message):
    model, cfg = make_model(tmp_path, ["name=run"])
    marker = tmp_path / "marker"
    outside = tmp_path / "outside.npz"  # a valid policy, but outside the run: still refused
    PolicyAgent.from_sb3(model).save(outside)
    if source == "ABSOLUTE":
        source = str(outside)
    run = make_checkpoint(tmp_path, model, cfg, {"members": [{"name": "s", "source": source, "kind": "snapshot"}],
                                                 "results": {}})
    (run / "pool").mkdir()
    (run / "pool" / "link.npz").symlink_to(outside)
    evil_npz(run / "pool" / "evil.npz", marker)
    before = listing(run)
    assert main(["--resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gemenvs-train: error: {run / 'checkpoints' / 'step_000000032' / 'pool.json'}: ")
    assert message in err and err.count("\n") == 1
    assert not marker.exists() and listing(run) == before


def test_resume_needs_a_marked_run_folder(tmp_path, capsys):
    model, cfg = make_model(tmp_path, ["name=run"])
    run = make_checkpoint(tmp_path, model, cfg)
    (run / RUN_MARKER).unlink()
    assert main(["--resume", str(run)]) == 2
    assert f"{run} is not a gemenvs-train run folder (it has no {RUN_MARKER} file" in capsys.readouterr().err
    loose = tmp_path / "loose"  # a checkpoint-like folder outside any run
    (run / "checkpoints" / "step_000000032").rename(loose)
    with pytest.raises(CheckpointError, match="is not a checkpoint of a run"):
        from gemenvs.training.checkpoint import find_checkpoint

        find_checkpoint(loose)


# ----------------------------------------------------------------------------- overwrite

@pytest.fixture
def victim(tmp_path):
    """A folder beside the run root with a file in it, that no run may delete."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    return folder


@pytest.mark.parametrize("name", ["../victim", "VICTIM_ABSOLUTE", "", ".", "..", "a/b", "a\\b", "' padded '"])
def test_run_names_are_one_plain_folder_name(tmp_path, victim, capsys, name):
    root = tmp_path / "runs"
    root.mkdir()
    (root / "keep.txt").write_text("the run root itself must survive too")
    name = str(victim) if name == "VICTIM_ABSOLUTE" else name
    assert main([str(CONFIG), f"run_root={root}", f"name={name}", "overwrite=true", *TINY]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemenvs-train: error: name must be ") and err.count("\n") == 1
    assert (victim / "precious.txt").read_text() == "keep me" and (root / "keep.txt").exists()
    assert sorted(p.name for p in root.iterdir()) == ["keep.txt"]


def test_overwrite_refuses_a_folder_without_the_run_marker(tmp_path, capsys):
    root = tmp_path / "runs"
    (root / "mine").mkdir(parents=True)
    (root / "mine" / "thesis.tex").write_text("not a run")
    assert main([str(CONFIG), f"run_root={root}", "name=mine", "overwrite=true", *TINY]) == 2
    err = capsys.readouterr().err
    assert err == (f"gemenvs-train: error: refusing to delete {root / 'mine'}: it is not empty and has no {RUN_MARKER} "
                   f"file, so it is not a gemenvs-train run folder; pick another name, or delete it yourself\n")
    assert (root / "mine" / "thesis.tex").exists()


def test_overwrite_replaces_only_a_marked_run_folder(tmp_path):
    cfg = load_config(CONFIG, [f"run_root={tmp_path}", "name=run", "overwrite=false", *TINY])
    run = prepare_run_dir(cfg)
    assert (run / RUN_MARKER).is_file()
    (run / "old.txt").write_text("an earlier run's file")
    with pytest.raises(FileExistsError, match="already holds a run"):
        prepare_run_dir(cfg)
    cfg.overwrite = True
    assert prepare_run_dir(cfg) == run and not (run / "old.txt").exists() and (run / RUN_MARKER).is_file()
    link = tmp_path / "link"
    link.symlink_to(run)
    cfg.name = "link"
    with pytest.raises(FileExistsError, match="symbolic link"):
        prepare_run_dir(cfg)
    assert run.is_dir()


def test_run_name_that_is_a_file(tmp_path, capsys):
    (tmp_path / "taken").write_text("a file")
    assert main([str(CONFIG), f"run_root={tmp_path}", "name=taken", "overwrite=true", *TINY]) == 2
    assert capsys.readouterr().err == (f"gemenvs-train: error: {tmp_path / 'taken'} exists and is a file, not a run "
                                       f"folder: pick another name or run_root\n")
    assert (tmp_path / "taken").read_text() == "a file"


# ----------------------------------------------------------------------------- nothing outside the run folder

#: a lean run of three 256-decision rollouts, with a snapshot, an evaluation and a checkpoint after each
LEAN_TINY = ["backend=lean", "seed=1", "n_envs=16", "ppo.n_steps=16", "ppo.batch_size=128", "ppo.n_epochs=1",
             "ppo.net_arch=[16]", "env.options={num_players: 3, value_chart: A}", "pool.baselines=[random]",
             "pool.family.members=0", "pool.snapshot_every=256", "eval.every=256", "eval.games=3",
             "eval.final_games=3", "eval.opponents=[random]", "eval.charts=null", "eval.workers=1",
             "checkpoint_every=256", "progress_bar=false", "torch_threads=1", "total_timesteps=768"]


@pytest.fixture(scope="module")
def lean_run(tmp_path_factory):
    """A finished tiny lean run (copied by each test that plants something in it)."""
    root = tmp_path_factory.mktemp("lean")
    assert main([str(CONFIG), f"run_root={root}", "name=base", *LEAN_TINY]) == 0
    return root / "base"


@pytest.mark.parametrize("name", ["config.yaml", "progress.csv", "eval.csv", "learning_curve.png", "best_model.npz",
                                  "final_model.npz", "results.md", "results.json", "timing.json", "pool", "tb",
                                  "checkpoints", "checkpoints/step_000001024"])
def test_a_resumed_run_writes_nothing_through_a_link_planted_in_its_folder(tmp_path, lean_run, capsys, name):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(lean_run, run, symlinks=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    target = run / name
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    target.symlink_to(victim if "." not in Path(name).name or name.startswith("checkpoints/") else
                      victim / "precious.txt")
    capsys.readouterr()
    assert main(["--resume", str(run), "total_timesteps=1280"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs-train: error: "), err
    assert f"{target} is a symbolic link" in err or "points outside the run folder (a link?)" in err, err
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert (victim / "precious.txt").read_text() == "keep me" and target.is_symlink()


@pytest.mark.parametrize("key, value, words", [
    ("next_checkpoint", -5, "next_checkpoint must be a step from 1 to"),
    ("next_eval", 0, "next_eval must be a step from 1 to"),
    ("next_snapshot", 2.5, "next_snapshot must be a step"),
    ("next_checkpoint", 2 ** 70, "next_checkpoint must be a step"),
    ("next_eval", True, "next_eval must be a step"),
    ("best_step", -7, "best_step must be a step, or -1"),
    ("best_score", "high", "best_score must be a number"),
])
def test_odd_schedule_values_in_trainer_json_are_refused(tmp_path, capsys, key, value, words):
    model, cfg = make_model(tmp_path, ["name=run", "checkpoint_every=32", "eval.every=32", "pool.snapshot_every=32"])
    run = make_checkpoint(tmp_path, model, cfg)
    trainer = run / "checkpoints" / "step_000000032" / "trainer.json"
    data = json.loads(trainer.read_text())
    data[key] = value
    trainer.write_text(json.dumps(data))
    before = listing(run)
    assert main(["--resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gemenvs-train: error: {trainer}: {words}") and err.count("\n") == 1, err
    assert listing(run) == before


@pytest.mark.parametrize("file", ["trainer.json", "pool.json"])
def test_checkpoint_json_nested_a_million_levels_deep_is_one_line(tmp_path, capsys, file):
    model, cfg = make_model(tmp_path, ["name=run"])
    run = make_checkpoint(tmp_path, model, cfg)
    path = run / "checkpoints" / "step_000000032" / file
    path.write_text("[" * 1_000_000 + "]" * 1_000_000)
    assert main(["--resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert err == f"gemenvs-train: error: {path}: JSON nested deeper than 64 levels\n"
    path.write_text('{"a": ' * 100 + "1" + "}" * 100)
    assert main(["--resume", str(run)]) == 2
    assert capsys.readouterr().err == f"gemenvs-train: error: {path}: JSON nested deeper than 64 levels\n"
