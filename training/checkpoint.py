"""Run folders and checkpoints, read without trusting them.

A run folder (``run_root/name``) is made by :func:`prepare_run_dir`, which writes the marker file
:data:`RUN_MARKER` into it. ``overwrite: true`` deletes an earlier run only when its folder holds
that marker, so a mistyped ``name`` or ``run_root`` can never delete a folder that is not a run;
``--resume`` also accepts only a marked run folder (or a checkpoint inside one).

A checkpoint (``checkpoints/step_N/``) holds ``model.zip`` (an ordinary SB3 file; backend lean:
``model.pt``, a dict of tensors), ``config.yaml``, ``pool.json`` and ``trainer.json``.
:func:`read_checkpoint` reads them all before anything is written: the model's weights and
optimizer state with ``torch.load(weights_only=True)`` and its step counters from the plain JSON
of ``data`` (:func:`gemenvs.agents.policy.read_sb3_zip`: no pickled object in the file is ever
decoded; backend lean: from ``trainer.json``), the config with ``yaml.safe_load`` and the full
config checks, and the pool's snapshot paths only when they stay inside the run folder. The
model itself is then rebuilt from the config and given the saved state (``restore_model``).
Every problem is a one-line :class:`CheckpointError`.

Importing this module is light (no torch).
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from gemenvs.training.config import ConfigError, TrainConfig, check_run_name, config_from_dict

#: the file that marks a folder as a gemenvs-train run folder (written when the run folder is made)
RUN_MARKER = ".gemenvs-run"
_MARKER_TEXT = "This folder is a gemenvs-train run; `overwrite: true` may delete it with everything in it.\n"
_STEP_DIR = re.compile(r"step_(\d+)")
#: the model file of a checkpoint, by backend
MODEL_FILES = {"sb3": "model.zip", "lean": "model.pt"}


def _model_file(folder: Path) -> Path | None:
    """The model file a checkpoint folder holds (``model.zip`` or ``model.pt``), or None."""
    return next((folder / f for f in MODEL_FILES.values() if (folder / f).is_file()), None)


class CheckpointError(ValueError):
    """A run folder or checkpoint that cannot be used: the message names the file and the problem."""


@dataclass
class Checkpoint:
    """Everything read from one checkpoint folder (nothing in it ran any code)."""

    path: Path
    """the checkpoint folder (``RUN/checkpoints/step_N``)"""
    run_dir: Path
    """the run folder that holds it"""
    config: TrainConfig
    """the saved config, checked like a YAML file"""
    num_timesteps: int
    """environment steps trained so far"""
    n_updates: int
    """gradient updates so far (for the logs)"""
    params: dict[str, dict] = field(repr=False, default_factory=dict)
    """state dicts: ``policy`` and ``policy.optimizer`` (backend lean: ``model``, ``optimizer``, maybe ``anchor``)"""
    pool: dict = field(default_factory=dict)
    """``pool.json``, with snapshot paths checked"""
    trainer: dict = field(default_factory=dict)
    """``trainer.json`` (schedule and best score)"""


# ----------------------------------------------------------------------------- run folders

def is_run_dir(path: Path) -> bool:
    """Whether ``path`` is a real folder (not a link) marked as a gemenvs-train run."""
    return path.is_dir() and not path.is_symlink() and (path / RUN_MARKER).is_file()


def due(next_at: int | None, step: int, every: int) -> tuple[bool, int | None]:
    """Whether a periodic task (snapshot, evaluation, checkpoint) scheduled at step ``next_at`` (None:
    never) is due at ``step``, and the step it is due next (``next_at`` moved past ``step`` by ``every``)."""
    if next_at is None or step < next_at:
        return False, next_at
    while next_at <= step:
        next_at += every
    return True, next_at


def prepare_run_dir(cfg: TrainConfig) -> Path:
    """The run folder ``run_root/name``, made and marked; an earlier run there is replaced only when
    ``cfg.overwrite`` allows it and the folder holds :data:`RUN_MARKER` (raises ``FileExistsError``)."""
    check_run_name(cfg.name)
    run_dir = cfg.run_dir
    if run_dir.is_symlink():
        raise FileExistsError(f"{run_dir} is a symbolic link; a run folder must be a real folder: pick another name")
    if run_dir.exists() and not run_dir.is_dir():
        raise FileExistsError(f"{run_dir} exists and is a file, not a run folder: pick another name or run_root")
    if run_dir.exists() and any(run_dir.iterdir()):
        if not cfg.overwrite:
            raise FileExistsError(f"{run_dir} already holds a run: pass --resume {run_dir} to continue it, "
                                  f"name=OTHER for a new one, or overwrite=true to replace it")
        if not is_run_dir(run_dir):
            raise FileExistsError(f"refusing to delete {run_dir}: it is not empty and has no {RUN_MARKER} file, so "
                                  f"it is not a gemenvs-train run folder; pick another name, or delete it yourself")
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / RUN_MARKER).write_text(_MARKER_TEXT)
    return run_dir


# ----------------------------------------------------------------------------- finding checkpoints

def _step_of(folder: Path) -> int | None:
    m = _STEP_DIR.fullmatch(folder.name)
    return int(m.group(1)) if m else None


def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint folder, or the latest checkpoint of a run folder (both inside a marked run folder)."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"no run or checkpoint folder at {path}")
    given_checkpoint = _model_file(path) is not None
    if given_checkpoint and (path.parent.name != "checkpoints" or _step_of(path) is None):
        raise CheckpointError(f"{path} is not a checkpoint of a run (expected RUN/checkpoints/step_N)")
    run_dir = path.parent.parent if given_checkpoint else path
    if not is_run_dir(run_dir):
        raise CheckpointError(f"{run_dir} is not a gemenvs-train run folder (it has no {RUN_MARKER} file; a run made "
                              f"by an older version can be marked with: touch {run_dir / RUN_MARKER})")
    if not given_checkpoint:
        found = [(step, d) for d in (path / "checkpoints").glob("step_*")
                 if (step := _step_of(d)) is not None and _model_file(d) is not None]
        if not found:
            raise CheckpointError(f"no checkpoint in {path} (a run folder holds checkpoints/step_N/model.zip, "
                                  f"or model.pt for backend lean)")
        path = max(found)[1]
    return path


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise CheckpointError(f"{path} is missing")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path} cannot be read as UTF-8 text ({type(e).__name__})") from None


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return data


def load_checkpoint_config(path: str | Path) -> tuple[TrainConfig, Path]:
    """The config saved in a checkpoint (checked like a YAML file), and the checkpoint folder."""
    import yaml

    ckpt = find_checkpoint(path)
    file = ckpt / "config.yaml"
    try:
        data = yaml.safe_load(_read_text(file))
    except yaml.YAMLError as e:
        raise CheckpointError(f"{file} is not valid YAML: {' '.join(str(e).split())}") from None
    try:
        return config_from_dict(data if data is not None else {}), ckpt
    except ConfigError as e:
        raise CheckpointError(f"{file}: {e}") from None


# ----------------------------------------------------------------------------- reading checkpoints

def snapshot_file(run_dir: Path, source: Any, where: str) -> Path:
    """The file of a pool snapshot, given relative to ``run_dir``; it must stay inside it and exist."""
    if not isinstance(source, str) or not source:
        raise CheckpointError(f"{where}: a snapshot source must be a relative path; got {source!r}")
    rel = PurePosixPath(source.replace("\\", "/"))
    if rel.is_absolute() or PureWindowsPath(source).drive or ".." in rel.parts:
        raise CheckpointError(f"{where}: snapshot path {source!r} leaves the run folder (absolute or '..'); refused")
    if rel.suffix not in (".npz", ".zip"):
        raise CheckpointError(f"{where}: snapshot path {source!r} is not a .npz or .zip policy")
    file = run_dir / rel
    root = run_dir.resolve()
    if not file.resolve().is_relative_to(root):
        raise CheckpointError(f"{where}: snapshot path {source!r} points outside the run folder (a link?); refused")
    if not file.is_file():
        raise CheckpointError(f"{where}: snapshot file {source!r} is missing from {run_dir}")
    return file


def check_pool_dict(data: dict, run_dir: Path, where: str) -> dict:
    """``pool.json`` checked: members with names and kinds, snapshots as readable policy files inside ``run_dir``."""
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    members, results = data.get("members"), data.get("results", {})
    if not isinstance(members, list) or not isinstance(results, dict):
        raise CheckpointError(f"{where}: expected 'members' (a list) and 'results' (a mapping)")
    for m in members:
        if (not isinstance(m, dict) or set(m) != {"name", "source", "kind"} or not isinstance(m["name"], str)
                or m["kind"] not in ("baseline", "snapshot")):
            raise CheckpointError(f"{where}: a member must be {{name, source, kind: baseline|snapshot}}; got {m!r}")
        if m["kind"] == "snapshot":
            file = snapshot_file(run_dir, m["source"], where)
            try:
                PolicyAgent.load(file)  # weights only (never code): a bad file fails here, not in a worker
            except (PolicyLoadError, OSError) as e:
                raise CheckpointError(f"{where}: snapshot {m['source']!r}: {e}") from None
    for name, games in results.items():
        if not isinstance(games, list) or not all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in games):
            raise CheckpointError(f"{where}: results[{name!r}] must be a list of numbers")
    return data


def check_trainer_dict(data: dict, where: str) -> dict:
    """``trainer.json`` checked: the schedule (steps or null) and the best score so far."""
    for key in ("next_snapshot", "next_eval", "next_checkpoint"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise CheckpointError(f"{where}: {key} must be a step or null; got {value!r}")
    if not isinstance(data.get("best_score"), (int, float)) or isinstance(data.get("best_step"), bool) \
            or not isinstance(data.get("best_step"), int):
        raise CheckpointError(f"{where}: best_score must be a number and best_step an integer")
    return data


def read_checkpoint(path: str | Path, cfg: TrainConfig | None = None) -> Checkpoint:
    """Read and check every file of a checkpoint (``cfg``: the config to resume with, default the saved one)."""
    from gemenvs.agents.policy import PolicyLoadError, read_sb3_zip

    saved, ckpt = load_checkpoint_config(path)
    run_dir = ckpt.parent.parent
    model = _model_file(ckpt)
    backend = next(b for b, f in MODEL_FILES.items() if f == model.name)
    wanted = (cfg if cfg is not None else saved).backend
    if backend != wanted:
        raise CheckpointError(f"{model} was written by backend {backend}; resume it with backend={backend} "
                              f"(got {wanted})")
    if backend == "lean":
        return _read_lean_checkpoint(ckpt, run_dir, cfg if cfg is not None else saved)
    try:
        data, params = read_sb3_zip(model)
    except (PolicyLoadError, FileNotFoundError) as e:
        raise CheckpointError(str(e)) from None
    if "policy" not in params or "policy.optimizer" not in params:
        raise CheckpointError(f"{model} lacks policy.pth or policy.optimizer.pth, so it cannot be resumed")
    counters = {}
    for key in ("num_timesteps", "_n_updates"):
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckpointError(f"{model}: {key} must be a non-negative integer; got {value!r}")
        counters[key] = value
    return Checkpoint(path=ckpt, run_dir=run_dir, config=cfg if cfg is not None else saved,
                      num_timesteps=counters["num_timesteps"], n_updates=counters["_n_updates"], params=params,
                      pool=check_pool_dict(_read_json(ckpt / "pool.json"), run_dir, str(ckpt / "pool.json")),
                      trainer=check_trainer_dict(_read_json(ckpt / "trainer.json"), str(ckpt / "trainer.json")))


def _read_lean_checkpoint(ckpt: Path, run_dir: Path, cfg: TrainConfig) -> Checkpoint:
    """:func:`read_checkpoint` for backend lean: ``model.pt`` read with ``weights_only=True``, the step
    counters from ``trainer.json``."""
    from gemenvs.training.lean_ppo import load_model_state

    trainer = check_trainer_dict(_read_json(ckpt / "trainer.json"), str(ckpt / "trainer.json"))
    counters = {}
    for key in ("num_timesteps", "n_updates"):
        value = trainer.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckpointError(f"{ckpt / 'trainer.json'}: {key} must be a non-negative integer; got {value!r}")
        counters[key] = value
    try:
        params = load_model_state(ckpt / "model.pt")
    except Exception as e:  # torch's unpickler refuses anything but tensors and plain data, with many error types
        raise CheckpointError(f"{ckpt / 'model.pt'} cannot be read as a lean checkpoint "
                              f"({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None
    return Checkpoint(path=ckpt, run_dir=run_dir, config=cfg, num_timesteps=counters["num_timesteps"],
                      n_updates=counters["n_updates"], params=params,
                      pool=check_pool_dict(_read_json(ckpt / "pool.json"), run_dir, str(ckpt / "pool.json")),
                      trainer=trainer)


class RunSchedule:
    """What a run keeps beside its model (both backends): when the next snapshot, evaluation and
    checkpoint are due, and the best score so far (``trainer.json``)."""

    def init_schedule(self, cfg: TrainConfig) -> None:
        """The schedule of a new run."""
        self.next_snapshot = cfg.pool.snapshot_every or None
        self.next_eval = cfg.eval.every or None
        self.next_checkpoint = cfg.checkpoint_every or None
        self.best_score, self.best_step = float("-inf"), -1

    def state_dict(self) -> dict:
        """Schedule and best score (saved in trainer.json)."""
        return {"next_snapshot": self.next_snapshot, "next_eval": self.next_eval,
                "next_checkpoint": self.next_checkpoint, "best_score": float(self.best_score),
                "best_step": self.best_step}

    def load_state_dict(self, d: dict) -> None:
        """Restore what :meth:`state_dict` wrote, keeping the current config's intervals (``self.cfg``)."""
        self.next_snapshot = d["next_snapshot"] if self.cfg.pool.snapshot_every else None
        self.next_eval = d["next_eval"] if self.cfg.eval.every else None
        self.next_checkpoint = d["next_checkpoint"] if self.cfg.checkpoint_every else None
        self.best_score, self.best_step = d["best_score"], d["best_step"]


def restore_model(model, ckpt: Checkpoint) -> None:
    """Give a model built from the config the checkpoint's weights, optimizer state and step counters."""
    try:
        model.policy.load_state_dict(ckpt.params["policy"])
        model.policy.optimizer.load_state_dict(ckpt.params["policy.optimizer"])
    except (RuntimeError, ValueError, KeyError) as e:
        first = " ".join(str(e).split())[:300]
        raise CheckpointError(f"{ckpt.path / 'model.zip'} does not fit the network of the config "
                              f"(ppo.net_arch / ppo.activation / the game's sizes): {first}") from None
    model.num_timesteps = ckpt.num_timesteps
    model._n_updates = ckpt.n_updates
