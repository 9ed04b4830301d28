"""``backend: sb3``: the MaskablePPO learner (sb3-contrib) of a run, for any game of the suite.

1. :func:`make_vec_env` builds ``n_envs`` single-learner environments whose opponents are drawn
   from the pool every episode: for MegaGem (``vec_env: auto``) ``n_envs`` games of the batched
   engine in this process (:mod:`gemenvs.arena.batched_selfplay`), otherwise (or with ``vec_env:
   subproc``) :class:`~gemenvs.arena.single_agent.SingleAgentEnv` worker processes.
2. :class:`SB3Learner` drives MaskablePPO as its own ``learn`` does (``collect_rollouts``, then
   ``train``), one rollout at a time for :class:`~gemenvs.training.run.Run`, which runs its schedule (pool,
   evaluations, checkpoints) at the end of each rollout, before the update, where SB3 runs its callbacks.

Its files: ``model.zip`` in each checkpoint (an ordinary SB3 file, read back without unpickling anything:
:func:`gemenvs.agents.policy.read_sb3_zip`), ``best_model.zip`` and ``final_model.zip`` beside the ``.npz``
policies every learner writes.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import ClassVar

import torch
from gemenvs.agents.policy import PolicyAgent
from gemenvs.training.budget import count
from gemenvs.training.checkpoint import CheckpointError
from gemenvs.training.config import TrainConfig, game_name
from gemenvs.training.learner import Learner
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    SubprocVecEnv,
    VecEnv,
    VecEnvWrapper,
)

from gemenvs.arena.pool import PoolOpponents
from gemenvs.arena.single_agent import SingleAgentEnv
from gemenvs.core.entry import registry_state, restore_registry
from gemenvs.files import write_file

# ----------------------------------------------------------------------------- environments

class _EnvFactory:
    """Builds one worker's environment (a picklable callable for SubprocVecEnv)."""

    def __init__(self, cfg: TrainConfig):
        self.env_cfg, self.seat_mix, self.threads = cfg.env, cfg.pool.seat_mix, cfg.torch_threads
        self.gamma = cfg.ppo.gamma  # the shaping's discount is the learner's own
        self.registry = registry_state()  # (a worker process knows the games this one registered)

    def __call__(self):
        restore_registry(self.registry)
        torch.set_num_threads(self.threads)
        env = SingleAgentEnv(self.env_cfg.id, opponents=PoolOpponents(seat_mix=self.seat_mix),
                             learner_seat=self.env_cfg.learner_seat, reward=self.env_cfg.reward,
                             shaping=self.env_cfg.shaping, shaping_gamma=self.gamma,
                             potential=self.env_cfg.potential, features=self.env_cfg.features,
                             features_options=self.env_cfg.options, **self.env_cfg.options)
        return Monitor(env)


class MasksFromInfos(VecEnvWrapper):
    """Answers MaskablePPO's ``env_method("action_masks")`` from the masks every worker already sent
    in its step or reset info, saving one round trip to each worker per step."""

    def reset(self):
        obs = self.venv.reset()
        self.masks = [info["action_mask"] for info in self.venv.reset_infos]
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        # a finished worker has already reset: its next mask is in its reset info
        self.masks = [(self.venv.reset_infos[i] if done else infos[i])["action_mask"] for i, done in enumerate(dones)]
        return obs, rewards, dones, infos

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            return [self.masks[i].astype(bool) for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)


def uses_batched_env(cfg: TrainConfig) -> bool:
    """Whether :func:`make_vec_env` plays on the batched engine (``vec_env``: batched, or auto and MegaGem)."""
    return cfg.vec_env == "batched" or (cfg.vec_env == "auto" and game_name(cfg.env) == "megagem")


def make_vec_env(cfg: TrainConfig) -> VecEnv:
    """``n_envs`` single-learner environments: games of the batched engine in this process
    (:class:`~gemenvs.arena.batched_vec_env.BatchedVecEnv`, see :func:`uses_batched_env`), or
    ``SingleAgentEnv`` worker processes (in-process when n_envs is 1). Either way the pool reaches
    them through ``env_method("update_opponents", members, weights)``."""
    if uses_batched_env(cfg):
        from gemenvs.arena.batched_vec_env import BatchedVecEnv

        # (MegaGem has no shaping potential, so env.shaping changes nothing on either path)
        return BatchedVecEnv(cfg.n_envs, None, learner_seat=cfg.env.learner_seat, reward=cfg.env.reward,
                             seat_mix=cfg.pool.seat_mix, seed=cfg.seed, env_id=cfg.env.id, features=cfg.env.features,
                             **cfg.env.options)
    fns = [_EnvFactory(cfg) for _ in range(cfg.n_envs)]
    return MasksFromInfos(SubprocVecEnv(fns) if cfg.n_envs > 1 else DummyVecEnv(fns))


def run_features(cfg: TrainConfig):
    """A fresh instance of the run's observation features (``env.features``; None without), for one agent."""
    if cfg.env.features is None:
        return None
    from gemenvs.agents.features import make_features

    return make_features(cfg.env.features, cfg.env.options)


def make_model(cfg: TrainConfig, env: VecEnv) -> MaskablePPO:
    """A fresh MaskablePPO with separate actor and critic MLPs."""
    p = cfg.ppo
    return MaskablePPO(
        "MlpPolicy", env, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
        n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
        ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
        policy_kwargs={"net_arch": {"pi": list(p.net_arch), "vf": list(p.net_arch)},
                       "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[p.activation]},
        seed=cfg.seed, device="cpu", verbose=0,
    )


def save_model(model: MaskablePPO, folder: Path, name: str) -> Path:
    """``model.save`` as ``folder/name``, all or nothing and never through a symbolic link."""
    buffer = io.BytesIO()
    model.save(buffer)
    return write_file(folder, name, buffer.getvalue())


# ----------------------------------------------------------------------------- the learner

class _StepHook(BaseCallback):
    """Hands the run each environment step's finished games; stops the rollout when the run says so."""

    def __init__(self):
        super().__init__()
        self.report = None

    def _on_step(self) -> bool:
        results = [(info["opponent"], info["win_share"])
                   for info, done in zip(self.locals["infos"], self.locals["dones"]) if done and "opponent" in info]
        return self.report(results)


class SB3Learner(Learner):
    """MaskablePPO over :func:`make_vec_env`'s environments, one rollout at a time (see the module docstring)."""

    name = "sb3"
    progress_fields: ClassVar[list[str]] = ["policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "win_rate_all"]

    def __init__(self, cfg: TrainConfig, env: VecEnv | None = None):
        """``env``: the environments to learn from (by default :func:`make_vec_env`'s, against the run's pool)."""
        self.cfg = cfg
        self.env = make_vec_env(cfg) if env is None else env
        self.model = make_model(cfg, self.env)
        self.model.set_logger(Logger(None, []))  # (no files of its own: the run logs the update's statistics)
        self._hook = _StepHook()
        self._features = run_features(cfg)
        self._iteration = 0
        self._total = 0
        self._closed = False

    @property
    def num_timesteps(self) -> int:
        return self.model.num_timesteps

    @property
    def n_updates(self) -> int:
        return self.model._n_updates // max(self.cfg.ppo.n_epochs, 1)

    @property
    def features(self):
        return self._features

    def set_opponents(self, members: list, weights: list[float]) -> None:
        self.env.env_method("update_opponents", members, weights)

    def start(self, seed: int) -> None:
        """SB3's ``learn`` set-up: the environments reset and the hook bound (a fresh run counts from 0)."""
        remaining = self.cfg.total_timesteps - self.model.num_timesteps
        self._total, callback = self.model._setup_learn(max(remaining, 0), self._hook,
                                                        reset_num_timesteps=self.model.num_timesteps == 0)
        callback.on_training_start(locals(), globals())

    def describe(self) -> str:
        return f"an update after every rollout of {count(self.cfg.ppo.n_steps * self.cfg.n_envs)}"

    def collect(self, on_step) -> bool:
        self._hook.report = on_step
        return self.model.collect_rollouts(self.env, self._hook, self.model.rollout_buffer, self.model.n_steps)

    def update(self) -> tuple[None, int]:
        return None, self.model.num_timesteps  # (the schedule first, then train(): MaskablePPO.learn's order)

    def after_schedule(self) -> dict:
        """MaskablePPO's ``train`` on the rollout; its losses from the SB3 logger."""
        self._iteration += 1
        self.model._update_current_progress_remaining(self.model.num_timesteps, self._total)
        self.model.train()
        logged = self.model.logger.name_to_value
        stats = {"policy_loss": logged.get("train/policy_gradient_loss"), "value_loss": logged.get("train/value_loss"),
                 "entropy": None if "train/entropy_loss" not in logged else -logged["train/entropy_loss"],
                 "approx_kl": logged.get("train/approx_kl"), "clip_fraction": logged.get("train/clip_fraction")}
        self.model.logger.dump(self.model.num_timesteps)
        return stats

    def export_agent(self, deterministic: bool = True, step: int | None = None) -> PolicyAgent:
        return PolicyAgent.from_sb3(self.model, features=run_features(self.cfg), deterministic=deterministic,
                                    metadata=None if step is None else {"step": step})

    def save_model(self, folder: Path, stem: str) -> None:
        save_model(self.model, folder, f"{stem}.zip")

    def checkpoint_files(self) -> list:
        return [("model.zip", lambda path: save_model(self.model, path.parent, path.name))]

    @classmethod
    def read_state(cls, folder: Path) -> dict:
        """``model.zip``'s state dicts, read with ``torch.load(weights_only=True)`` (no pickled object decoded)."""
        from gemenvs.agents.policy import PolicyLoadError, read_sb3_zip

        model = folder / "model.zip"
        try:
            _, params = read_sb3_zip(model)
        except (PolicyLoadError, FileNotFoundError) as e:
            raise CheckpointError(str(e)) from None
        if "policy" not in params or "policy.optimizer" not in params:
            raise CheckpointError(f"{model} lacks policy.pth or policy.optimizer.pth, so it cannot be resumed")
        return params

    def restore(self, state: dict, num_timesteps: int, n_updates: int, trainer: dict) -> None:
        """The saved weights, optimizer state and step counters; the seeds moved on by the steps done."""
        try:
            self.model.policy.load_state_dict(state["policy"])
            self.model.policy.optimizer.load_state_dict(state["policy.optimizer"])
        except (RuntimeError, ValueError, KeyError) as e:
            first = " ".join(str(e).split())[:300]
            raise CheckpointError(f"model.zip does not fit the network of the config "
                                  f"(ppo.net_arch / ppo.activation / the game's sizes): {first}") from None
        self.model.num_timesteps = num_timesteps
        self.model._n_updates = n_updates * max(self.cfg.ppo.n_epochs, 1)
        self.model.set_random_seed(self.cfg.seed + num_timesteps)

    def clone_policy(self):
        return self.model.policy

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.env.close()


__all__ = ["MasksFromInfos", "SB3Learner", "make_model", "make_vec_env", "save_model", "uses_batched_env"]
