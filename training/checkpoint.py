"""Run folders and checkpoints, read without trusting them.

A run folder (``run_root/name``) is made by :func:`prepare_run_dir`, which writes the marker file
:data:`RUN_MARKER` into it. ``overwrite: true`` deletes an earlier run only when its folder holds
that marker, so a mistyped ``name`` or ``run_root`` can never delete a folder that is not a run;
``--resume`` also accepts only a marked run folder (or a checkpoint inside one).

A checkpoint (``checkpoints/step_N/``) has one layout for every learner: ``policy.npz`` (the actor), the
learner's own model file (``Capabilities.model_file`` of :mod:`gemenvs.training.learner`: ``model.zip``, an
ordinary SB3 file; ``model.pt`` (lean) or ``modules.pt`` (rllib), dicts of tensors), ``config.yaml``,
``pool.json`` and ``trainer.json`` (the learner, its step counters, the run's schedule and best score).
:func:`read_checkpoint` reads them all before anything is written: the model's state with
``torch.load(weights_only=True)`` (the learner's ``read_state``; no pickled object is ever decoded), the config
with ``yaml.safe_load`` and the full config checks, and the pool's snapshot paths only when they stay inside the
run folder. The learner is then built from the config and given the saved state (``Learner.restore``). Every
problem is a one-line :class:`CheckpointError`.

Writing (:func:`write_checkpoint`): every file of a checkpoint goes into a temporary folder
``checkpoints/.step_N.tmp-XXXXXXXX``, renamed to ``step_N`` only once all are written, so a kill at
any moment leaves the earlier checkpoints and at most one temporary folder, which
:func:`find_checkpoint` skips and names. Nothing in a run folder is written through a symbolic link
(:mod:`gemenvs.files`).

Importing this module is light (no torch).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from gemenvs.training.config import (
    ConfigError,
    TrainConfig,
    check_run_name,
    config_from_dict,
    config_to_dict,
)

from gemenvs.agents.policy import is_policy_file
from gemenvs.files import (
    MAX_JSON_DEPTH,
    FileProblem,
    atomic_folder,
    is_temp_name,
    json_depth,
    make_folder,
    read_text,
    write_file,
)

#: the file that marks a folder as a gemenvs-train run folder (written when the run folder is made)
RUN_MARKER = ".gemenvs-run"
_MARKER_TEXT = "This folder is a gemenvs-train run; `overwrite: true` may delete it with everything in it.\n"
_STEP_DIR = re.compile(r"step_(\d+)")
#: the files besides the learner's model file that a checkpoint needs to be resumed
CHECKPOINT_FILES = ("config.yaml", "pool.json", "trainer.json")
#: the largest JSON file of a checkpoint read (pool.json, trainer.json)
MAX_CHECKPOINT_JSON = 16 * 1024 * 1024
#: the largest schedule step a trainer.json may hold
MAX_STEP = 2 ** 62
#: kill tests: ``N:K`` makes the N-th checkpoint a process writes kill that process (SIGKILL) once K of its
#: files are written (0: none yet; the number of its files: all, before the folder is renamed into place)
KILL_ENV = "GEMENVS_TEST_KILL_CHECKPOINT"


def _regular(path: Path) -> bool:
    """Whether ``path`` itself (not a link to one) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _model_files() -> dict[str, str]:
    """Each learner's model file in a checkpoint, by backend (:data:`gemenvs.training.learner.CAPABILITIES`)."""
    from gemenvs.training.learner import CAPABILITIES

    return {backend: caps.model_file for backend, caps in CAPABILITIES.items()}


def _model_file(folder: Path) -> Path | None:
    """The learner's model file a checkpoint folder holds (``model.zip``, ``model.pt``, ...), or None."""
    return next((folder / f for f in _model_files().values() if _regular(folder / f)), None)


def _missing(folder: Path) -> str | None:
    """The first file a checkpoint folder lacks to be resumed (None: complete)."""
    if _model_file(folder) is None:
        return "its learner's model file (" + ", ".join(_model_files().values()) + ")"
    return next((name for name in CHECKPOINT_FILES if not _regular(folder / name)), None)


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
    """the learner's state, as its ``read_state`` read it (state dicts of tensors)"""
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
    make_folder(run_dir)
    write_file(run_dir, RUN_MARKER, _MARKER_TEXT)
    return run_dir


def run_folder(run_dir: Path, *parts: str) -> Path:
    """The folder ``run_dir/parts...`` (``pool``, ``tb``, ``games/...``), made when missing; a symbolic link or a
    file anywhere below ``run_dir`` is refused (:class:`gemenvs.files.WriteRefused`), never followed."""
    return make_folder(Path(run_dir).joinpath(*parts), root=run_dir)


def config_text(cfg: TrainConfig) -> str:
    """The config as the YAML file ``config.yaml`` holds (what :func:`gemenvs.training.config.save_config` writes)."""
    import yaml

    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False)


def write_config(folder: Path, cfg: TrainConfig, name: str = "config.yaml") -> Path:
    """Write ``folder/name`` with the config (see :func:`config_text`), never through a link."""
    return write_file(folder, name, config_text(cfg))


def write_json(folder: Path, name: str, data: Any) -> Path:
    """Write ``folder/name`` with ``data`` as indented JSON (the layout of ``pool.json`` and ``trainer.json``)."""
    return write_file(folder, name, json.dumps(data, indent=1))


_checkpoints_written = 0


def _kill_point() -> int | None:
    """After how many files this checkpoint kills the process, from :data:`KILL_ENV` (None: it does not)."""
    global _checkpoints_written
    _checkpoints_written += 1
    value = os.environ.get(KILL_ENV)
    if not value:
        return None
    nth, _, after = value.partition(":")
    return int(after) if int(nth) == _checkpoints_written else None


def write_checkpoint(run_dir: Path, step: int, files: Sequence[tuple[str, bytes | str | Callable[[Path], Any]]]
                     ) -> Path:
    """Write ``run_dir/checkpoints/step_N`` (N: ``step``) from ``files``, (name, content or a function writing
    the file at the path it is given) in order, all or nothing: into a temporary folder beside it, renamed to
    ``step_N`` once every file is written (an earlier ``step_N`` is replaced in one step). Returns the folder."""
    kill = _kill_point()
    parent = run_folder(run_dir, "checkpoints")
    name = f"step_{step:09d}"
    with atomic_folder(parent, name) as tmp:
        for k, (file, content) in enumerate(files):
            if kill == k:
                os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
            if callable(content):
                content(tmp / file)
            else:
                write_file(tmp, file, content)
        if kill == len(files):
            os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
    return parent / name


# ----------------------------------------------------------------------------- finding checkpoints

def _step_of(folder: Path) -> int | None:
    m = _STEP_DIR.fullmatch(folder.name)
    return int(m.group(1)) if m else None


_noted: set[str] = set()


def _note(text: str) -> None:
    """Print a note about the checkpoints once per process (both the command line and the trainer look)."""
    if text not in _noted:
        _noted.add(text)
        print(f"note: {text}", flush=True)


def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint folder, or the newest complete checkpoint of a run folder (both inside a marked run
    folder). Temporary folders of a checkpoint a kill cut short, and checkpoints that lack a file, are
    skipped with a note; a run with no complete checkpoint gives its newest one with a model file, so that
    reading it names what is missing."""
    path = Path(path)
    if path.is_symlink():
        raise CheckpointError(f"{path} is a symbolic link; give the run or checkpoint folder itself")
    if not path.is_dir():
        raise CheckpointError(f"no run or checkpoint folder at {path}")
    given_checkpoint = _model_file(path) is not None or is_temp_name(path.name)
    if given_checkpoint and (path.parent.name != "checkpoints" or _step_of(path) is None):
        hint = "; it is a checkpoint a kill cut short" if is_temp_name(path.name) else ""
        raise CheckpointError(f"{path} is not a checkpoint of a run (expected RUN/checkpoints/step_N){hint}")
    run_dir = path.parent.parent if given_checkpoint else path
    if not is_run_dir(run_dir):
        raise CheckpointError(f"{run_dir} is not a gemenvs-train run folder (it has no {RUN_MARKER} file; a run made "
                              f"by an older version can be marked with: touch {run_dir / RUN_MARKER})")
    folder = run_dir / "checkpoints"
    if folder.is_symlink():
        raise CheckpointError(f"{folder} is a symbolic link; a run's checkpoints must be inside its folder")
    if not given_checkpoint:
        found, partial = [], []
        for d in sorted(folder.iterdir()) if folder.is_dir() else []:
            if is_temp_name(d.name):
                _note(f"ignoring {d}: a checkpoint whose writing was cut short (it can be deleted)")
            elif (step := _step_of(d)) is not None and d.is_dir() and not d.is_symlink() \
                    and _model_file(d) is not None:
                (partial if _missing(d) else found).append((step, d))
        if not found and not partial:
            raise CheckpointError(f"no checkpoint in {path} (a run folder holds checkpoints/step_N/ with its "
                                  f"learner's model file: {', '.join(_model_files().values())})")
        newest = max(found)[1] if found else max(partial)[1]
        for step, d in sorted(partial):
            if d != newest and step > (max(found)[0] if found else -1):
                _note(f"ignoring {d}: an incomplete checkpoint ({_missing(d)} is missing)")
        path = newest
    return path


def _read_text(path: Path, max_bytes: int = MAX_CHECKPOINT_JSON) -> str:
    """A checkpoint's text file: a regular file inside the checkpoint (not a link), UTF-8, of bounded size."""
    if path.is_symlink():
        raise CheckpointError(f"{path} is a symbolic link; a checkpoint's files must be inside it")
    if not path.is_file():
        raise CheckpointError(f"{path} is missing")
    try:
        return read_text(path, max_bytes, "checkpoint file")
    except FileProblem as e:
        raise CheckpointError(str(e)) from None
    except OSError as e:
        raise CheckpointError(f"{path} cannot be read ({e.strerror or type(e).__name__})") from None


def _read_json(path: Path) -> dict:
    """A checkpoint's JSON object (``pool.json``, ``trainer.json``), nested at most
    :data:`gemenvs.files.MAX_JSON_DEPTH` deep; ``-Infinity`` is the one constant taken (the best score of a run
    not yet evaluated)."""
    def constant(name: str):
        if name == "-Infinity":
            return float("-inf")
        raise CheckpointError(f"{path}: {name} is not a number JSON allows")

    text = _read_text(path)
    try:
        data = json.loads(text, parse_constant=constant)
    except RecursionError:
        raise CheckpointError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise CheckpointError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
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
    except RecursionError:
        raise CheckpointError(f"{file}: YAML nested too deeply to be a config") from None
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
    if not is_policy_file(source):
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
    """``trainer.json`` checked: the schedule (steps from 1 on, or null), the best score so far (a number, or
    -Infinity before any evaluation) and the step it was reached at (-1: none)."""
    for key in ("next_snapshot", "next_eval", "next_checkpoint"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_STEP):
            raise CheckpointError(f"{where}: {key} must be a step from 1 to {MAX_STEP} or null; got {_shown(value)}")
    score, best = data.get("best_score"), data.get("best_step")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score) or score == math.inf:
        raise CheckpointError(f"{where}: best_score must be a number (or -Infinity before any evaluation); "
                              f"got {_shown(score)}")
    if isinstance(best, bool) or not isinstance(best, int) or not -1 <= best <= MAX_STEP:
        raise CheckpointError(f"{where}: best_step must be a step, or -1 before any evaluation; got {_shown(best)}")
    return data


def _shown(value: Any) -> str:
    """A value as an error message shows it (at most 60 characters)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_checkpoint(path: str | Path, cfg: TrainConfig | None = None) -> Checkpoint:
    """Read and check every file of a checkpoint (``cfg``: the config to resume with, default the saved one)."""
    from gemenvs.training.learner import learner_class

    saved, ckpt = load_checkpoint_config(path)
    run_dir = ckpt.parent.parent
    cfg = cfg if cfg is not None else saved
    model = _model_file(ckpt)
    backend = next(b for b, f in _model_files().items() if f == model.name)
    if backend != cfg.backend:
        raise CheckpointError(f"{model} was written by backend {backend}; resume it with backend={backend} "
                              f"(got {cfg.backend})")
    params = learner_class(backend).read_state(ckpt)
    pool = check_pool_dict(_read_json(ckpt / "pool.json"), run_dir, str(ckpt / "pool.json"))
    where = ckpt / "trainer.json"
    trainer = check_trainer_dict(_read_json(where), str(where))
    if trainer.get("backend") != backend:
        raise CheckpointError(f"{where}: backend must be {backend!r}, the learner of {model.name}; "
                              f"got {_shown(trainer.get('backend'))}")
    counters = {}
    for key in ("num_timesteps", "n_updates"):
        value = trainer.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckpointError(f"{where}: {key} must be a non-negative integer; got {_shown(value)}")
        counters[key] = value
    if trainer["best_step"] > counters["num_timesteps"]:
        raise CheckpointError(f"{where}: best_step {trainer['best_step']} is past the checkpoint's "
                              f"step {counters['num_timesteps']}")
    return Checkpoint(path=ckpt, run_dir=run_dir, config=cfg, num_timesteps=counters["num_timesteps"],
                      n_updates=counters["n_updates"], params=params, pool=pool, trainer=trainer)
