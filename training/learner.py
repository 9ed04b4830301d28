"""The learner plug-in of a run: what :class:`gemenvs.training.run.Run` asks of SB3, lean and RLlib, and what each supports.

A run (:mod:`gemenvs.training.run`) owns the schedule: the budget, the time guard, the opponent pool,
evaluations, checkpoints and the final report. A learner owns a model and the games it learns from, and
answers a handful of calls, in the manner of SB3's ``OnPolicyAlgorithm`` (``collect_rollouts``, then
``train``): :meth:`Learner.collect` plays one rollout, :meth:`Learner.update` learns from it,
:meth:`Learner.export_agent` hands the actor over as a :class:`~gemenvs.agents.policy.PolicyAgent`, and
:meth:`Learner.checkpoint_files` / :meth:`Learner.read_state` / :meth:`Learner.restore` save and resume its
own state. The learners: ``sb3`` (:mod:`gemenvs.training.selfplay`, MaskablePPO), ``lean``
(:mod:`gemenvs.training.lean_ppo`) and ``rllib`` (:mod:`gemenvs.training.rllib_backend`).

:data:`CAPABILITIES` declares, without importing any learner, which games and options each one runs; the
config checks (:func:`check_capabilities`) read them, so a rule "option X needs learner Y" lives here once.
"""
from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

#: what a learner reports after each step of a rollout: (opponent label, the learner's win share) per finished game
GameResults = Sequence[tuple[str, float]]
#: a file of a checkpoint: its name, and its bytes, text or a function that writes it at the path it is given
CheckpointFile = tuple[str, "bytes | str | Callable[[Path], Any]"]


class Learner(ABC):
    """One learning algorithm with its model and games, driven by a :class:`~gemenvs.training.run.Run`.

    Order of the calls in a run: :meth:`set_opponents` (the pool), :meth:`start`, then per rollout
    :meth:`collect`, :meth:`update` (the run's schedule runs at the step it returns), :meth:`after_schedule`;
    :meth:`drain` once at the end. ``num_timesteps`` counts the budget's unit (:attr:`steps_name`),
    ``n_updates`` the PPO updates made.
    """

    #: the backend name of the config (``backend: sb3``)
    name: ClassVar[str]
    #: what num_timesteps counts, in the final table's words
    steps_name: ClassVar[str] = "learner decisions"
    #: the unit of the time guard's note ("PPO after 1,200 of 2,500 decisions")
    unit: ClassVar[str] = "decisions"

    #: progress.csv's columns of the learner's update statistics, after update, step, seconds, steps_per_s
    progress_fields: ClassVar[list[str]] = []

    num_timesteps: int = 0
    n_updates: int = 0

    def seed_pool(self, run) -> None:
        """Give pure self-play (a pool without baselines) its first opponent: the initial (or cloned) actor."""
        if not run.pool.members:
            self.snapshot(self.num_timesteps, run)

    def set_opponents(self, members: list, weights: list[float]) -> None:
        """Hand the games the opponent pool's members and sampling weights (new games draw from them)."""

    @abstractmethod
    def start(self, seed: int) -> None:
        """Deal the games (their opponents already set) and get ready to collect."""

    def describe(self) -> str:
        """The line printed before the first rollout: the work to do and how a rollout is made."""
        return ""

    @abstractmethod
    def collect(self, on_step: Callable[[GameResults], bool]) -> bool:
        """Play one rollout; ``on_step(results)`` after every step (False: stop now). False if stopped."""

    @abstractmethod
    def update(self) -> tuple[dict | None, int] | None:
        """Learn from the rollout up to where the run's schedule runs: (the update's statistics, or None when
        it has none yet, and the step the schedule runs at), or None when nothing is due yet."""

    def after_schedule(self) -> dict | None:
        """What follows the schedule (SB3: its update); the statistics of an update made here, if any."""
        return None

    def drain(self) -> tuple[dict, int] | None:
        """Finish an update still running (at the end of the run, or when it is cut): its statistics and step."""
        return None

    @abstractmethod
    def export_agent(self, deterministic: bool = True, step: int | None = None) -> Any:
        """The actor as a :class:`~gemenvs.agents.policy.PolicyAgent` (``step``: recorded in its metadata)."""

    def snapshot(self, step: int, run) -> None:
        """Freeze the actor as an opponent: by default a ``pool/snapshot_N.npz`` file added to ``run.pool``."""
        from gemenvs.files import make_folder

        name = f"snapshot_{step}"
        pool = make_folder(run.run_dir / "pool", root=run.run_dir)  # (a link or a file there: refused)
        self.export_agent(step=step).save(pool / f"{name}.npz")
        run.pool.add_snapshot(name, f"pool/{name}.npz")

    def save_model(self, folder: Path, stem: str) -> None:
        """Write the learner's own model file beside ``stem.npz`` (SB3: ``stem.zip``); most learners have none."""

    @abstractmethod
    def checkpoint_files(self) -> list[CheckpointFile]:
        """The learner's files of a checkpoint (besides policy.npz, config.yaml, pool.json, trainer.json)."""

    def state(self) -> dict:
        """Plain data of the learner kept in trainer.json besides the step counters (RLlib: its league slots)."""
        return {}

    @classmethod
    @abstractmethod
    def read_state(cls, folder: Path) -> dict:
        """Read and check the learner's checkpoint files in ``folder`` (before anything is written)."""

    @abstractmethod
    def restore(self, state: dict, num_timesteps: int, n_updates: int, trainer: dict) -> None:
        """Continue from what :meth:`read_state` read, the step counters and trainer.json."""

    def clone_policy(self):
        """The policy behaviour cloning fits (what :func:`gemenvs.training.pretrain.clone` takes)."""
        raise NotImplementedError(f"backend {self.name} has no behaviour cloning")

    def after_pretrain(self) -> None:
        """Called once behaviour cloning has set the weights."""

    @property
    def features(self):
        """The observation features the actor reads after the observation (None: the observation alone)."""
        return None

    def time_split(self) -> dict[str, float]:
        """Seconds spent so far per part of the work (env, policy, update, ...), for progress.csv."""
        return {}

    def close(self) -> None:
        """Release the games, processes and clusters the learner holds."""


# ----------------------------------------------------------------------------- capabilities

@dataclass(frozen=True)
class Capabilities:
    """What one learner runs: the games, and the config options beyond the common ones."""

    games: frozenset[str] | None = None
    """the games it plays (None: every game of the suite)"""
    games_why: str = ""
    """why only those (the error's words)"""
    options: frozenset[str] = frozenset()
    """the optional settings it runs, by config key (see :data:`OPTIONS`)"""
    state_features: bool = False
    """whether it runs observation features computed from the engine state (its games hand the state over)"""
    vec_envs: frozenset[str] = frozenset({"auto", "batched", "subproc"})
    """the values of vec_env it accepts"""
    whole_minibatches: Callable[[Any], bool] = field(default=lambda cfg: False)
    """whether ppo.batch_size must divide a rollout (ppo.n_steps * n_envs) for this config"""
    resume: bool = True
    """whether --resume continues its runs"""
    model_file: str = ""
    """the file of its own state in a checkpoint (beside policy.npz, config.yaml, pool.json, trainer.json)"""


#: option key -> (whether a config uses it, the value that turns it off)
OPTIONS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "env.features": (lambda cfg: cfg.env.features is not None, "null"),
    "env.shaping": (lambda cfg: cfg.env.shaping != 0, "0"),
    "pretrain.teacher": (lambda cfg: cfg.pretrain.teacher is not None, "null"),
    "ppo.target_kl": (lambda cfg: cfg.ppo.target_kl is not None, "null"),
    "ppo.anchor_coef": (lambda cfg: cfg.ppo.anchor_coef != 0, "0"),
    "lean.overlap": (lambda cfg: cfg.lean.overlap, "false"),
}

#: the games the batched engine plays (the lean learner and SB3's vec_env: batched play on it)
BATCHED_GAMES = frozenset({"megagem"})

#: each learner's capabilities, by backend name
CAPABILITIES: dict[str, Capabilities] = {
    "sb3": Capabilities(
        options=frozenset({"env.features", "env.shaping", "pretrain.teacher", "ppo.target_kl"}),
        state_features=True, whole_minibatches=lambda cfg: True, model_file="model.zip"),
    "lean": Capabilities(
        games=BATCHED_GAMES, games_why="plays on the batched engine, which runs MegaGem only",
        options=frozenset({"env.features", "env.shaping", "pretrain.teacher", "ppo.target_kl", "ppo.anchor_coef",
                           "lean.overlap"}),
        vec_envs=frozenset({"auto", "batched"}), whole_minibatches=lambda cfg: cfg.lean.rollout == "lockstep",
        model_file="model.pt"),
    "rllib": Capabilities(resume=False, model_file="modules.pt"),
}
#: where each learner lives (imported only when a run starts: torch, SB3 or Ray)
LEARNER_CLASSES = {"sb3": "gemenvs.training.selfplay:SB3Learner", "lean": "gemenvs.training.lean_ppo:LeanLearner",
                   "rllib": "gemenvs.training.rllib_backend:RLlibLearner"}


def supporting(key: str) -> list[str]:
    """The backends that run option ``key``, in the order of :data:`CAPABILITIES`."""
    return [name for name, caps in CAPABILITIES.items() if key in caps.options]


def _backends(names: list[str]) -> str:
    return f"backend {names[0]} only" if len(names) == 1 else f"backends {' and '.join(sorted(names))}"


def check_capabilities(cfg, game: str, features=None) -> str | None:
    """The one-line error of the first thing in ``cfg`` that its learner does not run (None: it runs it all).

    ``game``: the short name of the configured game; ``features``: the configured observation features."""
    backend, caps = cfg.backend, CAPABILITIES[cfg.backend]
    if caps.games is not None and game not in caps.games:
        others = [b for b, c in CAPABILITIES.items() if c.games is None]
        return (f"backend {backend} {caps.games_why}, not {game}; use backend {others[0]}"
                + "".join(f" (or {b})" for b in others[1:]) + f" for {game}")
    if cfg.vec_env not in caps.vec_envs:
        allowed = " or ".join(repr(v) for v in sorted(caps.vec_envs))
        return (f"backend {backend}: vec_env must be {allowed} (it plays the batched engine's games in this "
                f"process); got {cfg.vec_env!r}")
    for key, (used, off) in OPTIONS.items():
        if used(cfg) and key not in caps.options:
            return f"{key} runs on {_backends(supporting(key))}; set it to {off} for backend {backend}"
    if features is not None and features.needs_state and not caps.state_features:
        able = [b for b, c in CAPABILITIES.items() if c.state_features]
        return (f"env.features: {features.name} is computed from the engine state, which backend {backend}'s "
                f"batched games do not hand over; use backend {' or '.join(able)}")
    rollout = cfg.ppo.n_steps * cfg.n_envs
    if caps.whole_minibatches(cfg) and rollout % cfg.ppo.batch_size:
        return (f"ppo.batch_size ({cfg.ppo.batch_size}) must divide one rollout, ppo.n_steps * n_envs "
                f"= {cfg.ppo.n_steps} * {cfg.n_envs} = {rollout}, so every minibatch is full")
    return None


def learner_class(backend: str) -> type[Learner]:
    """The learner class of ``backend`` (imports its module: torch, SB3 or Ray)."""
    module, _, name = LEARNER_CLASSES[backend].partition(":")
    return getattr(importlib.import_module(module), name)


__all__ = ["BATCHED_GAMES", "CAPABILITIES", "Capabilities", "GameResults", "Learner", "check_capabilities",
           "learner_class", "supporting"]
