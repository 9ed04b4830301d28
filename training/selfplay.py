"""Self-play training with MaskablePPO against an opponent pool, for any game of the suite.

Read top to bottom:

1. :func:`make_vec_env` builds ``n_envs`` single-learner environments whose opponents are drawn
   from the pool every episode: for MegaGem (``vec_env: auto``) ``n_envs`` games of the batched
   engine in this process (:mod:`gemenvs.arena.batched_selfplay`), otherwise (or with ``vec_env:
   subproc``) :class:`~gemenvs.arena.single_agent.SingleAgentEnv` worker processes.
2. :func:`train` creates (or resumes) the MaskablePPO model and runs ``model.learn`` with
   :class:`SelfPlayCallback`, which after every rollout records results against each pool
   member, adds a frozen snapshot every ``pool.snapshot_every`` steps, sends the new members and
   sampling weights to the workers, evaluates against the baselines every ``eval.every`` steps
   (keeping ``best_model.zip``) and writes a checkpoint every ``checkpoint_every`` steps.
3. At the end it evaluates the best model in ``eval.final_games`` games against three copies of
   each baseline, prints the table and draws the learning curve beside the run.

Run layout (``run_root/name``): ``.gemenvs-run`` (the marker that lets ``overwrite`` delete the
folder), ``config.yaml``, ``checkpoints/step_N/{model.zip, config.yaml, pool.json, trainer.json}``,
``pool/snapshot_N.npz``, ``best_model.zip`` (+ ``.npz``), ``final_model.zip``, ``eval.csv``,
``progress*.csv`` and ``tb/`` (TensorBoard), ``results.md``, ``results.json`` and
``learning_curve.png``. Resuming never unpickles anything: see :mod:`gemenvs.training.checkpoint`.
"""
from __future__ import annotations

import io
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import CSVOutputFormat, Logger, TensorBoardOutputFormat
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper
from tqdm.auto import tqdm

from gemenvs.agents.policy import PolicyAgent
from gemenvs.files import write_file
from gemenvs.training.budget import TimeLimit, count
from gemenvs.training.checkpoint import (
    Checkpoint,
    RunSchedule,
    due,
    find_checkpoint,
    load_checkpoint_config,
    prepare_run_dir,
    read_checkpoint,
    restore_model,
    run_folder,
    write_checkpoint,
    write_config,
    write_json,
)
from gemenvs.training.config import TrainConfig, game_name
from gemenvs.arena.evaluate import append_eval_rows, evaluate
from gemenvs.training.report import curve_title, final_evaluation, warm_start_label
from gemenvs.training.plotting import plot_learning_curve
from gemenvs.training.pretrain import CloneReport
from gemenvs.training.pretrain import pretrain as run_pretrain
from gemenvs.arena.pool import OpponentPool, PoolOpponents, pool_baselines
from gemenvs.workers import fix_threads
from gemenvs.arena.single_agent import SingleAgentEnv, make_aec_env


# ----------------------------------------------------------------------------- environments

class _EnvFactory:
    """Builds one worker's environment (a picklable callable for SubprocVecEnv)."""

    def __init__(self, cfg: TrainConfig):
        self.env_cfg, self.seat_mix, self.threads = cfg.env, cfg.pool.seat_mix, cfg.torch_threads
        self.gamma = cfg.ppo.gamma  # the shaping's discount is the learner's own

    def __call__(self):
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


def policy_agent(model: MaskablePPO, cfg: TrainConfig, **kwargs) -> PolicyAgent:
    """The model's actor as a :class:`PolicyAgent`, reading the run's observation features (if any)."""
    return PolicyAgent.from_sb3(model, features=run_features(cfg), **kwargs)


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


def num_players(cfg: TrainConfig) -> int:
    """Seats of the configured game."""
    return len(make_aec_env(cfg.env.id, **cfg.env.options).possible_agents)


# ----------------------------------------------------------------------------- the trainer

class Trainer(RunSchedule):
    """The state of one run beside the model: pool, schedule, best score (:class:`RunSchedule`), files."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, players: int):
        self.cfg, self.run_dir, self.players = cfg, run_dir, players
        self.pool = OpponentPool(pool_baselines(cfg.pool), cfg.pool.max_snapshots, cfg.pool.sampling,
                                 cfg.pool.priority_power, cfg.pool.window, players, root=run_dir,
                                 baseline_share=cfg.pool.baseline_share)
        self.init_schedule(cfg)

    def snapshot(self, model: MaskablePPO, step: int) -> None:
        """Freeze the current actor into the pool."""
        name = f"snapshot_{step}"
        path = Path("pool") / f"{name}.npz"
        policy_agent(model, self.cfg, metadata={"step": step}).save(run_folder(self.run_dir, "pool") / path.name)
        self.pool.add_snapshot(name, str(path))

    def evaluate(self, model: MaskablePPO, step: int, logger) -> dict:
        """Periodic evaluation against each baseline; keeps best_model.zip; returns win rates."""
        e = self.cfg.eval
        focal = policy_agent(model, self.cfg, deterministic=e.deterministic)
        results = evaluate(focal, self.cfg.env.id, self.cfg.env.options, e.opponents, e.games,
                           seed=self.cfg.seed, workers=e.workers, charts=e.charts,
                           progress=self.cfg.progress_bar, desc=f"evaluation at step {step:,}")
        path = self.run_dir / "eval.csv"
        append_eval_rows(path, step, results)
        for name, r in results.items():
            logger.record(f"eval/win_rate_{name}", r.win_rate)
            logger.record(f"eval/mean_margin_{name}", r.mean_margin)
        rates = {name: r.win_rate for name, r in results.items()}
        score = e.best_score(rates)
        if score > self.best_score:
            self.best_score, self.best_step = score, step
            save_model(model, self.run_dir, "best_model.zip")
            focal.save(self.run_dir / "best_model.npz")
        plot_learning_curve(path, self.run_dir / "learning_curve.png", self.players, curve_title(self.cfg, self.players),
                            warm_start=warm_start_label(self.cfg))
        return rates

    def checkpoint(self, model: MaskablePPO, step: int) -> Path:
        """Write model, config, pool and schedule to checkpoints/step_N, all or nothing
        (:func:`~gemenvs.training.checkpoint.write_checkpoint`)."""
        files = [("model.zip", lambda path: save_model(model, path.parent, path.name))]
        if self.cfg.env.features is not None:  # (model.zip cannot name the features the actor reads; this file does)
            files.append(("policy.npz", policy_agent(model, self.cfg, metadata={"step": step}).save))
        trainer = self.state_dict()
        files += [("config.yaml", lambda path: write_config(path.parent, self.cfg)),
                  ("pool.json", lambda path: write_json(path.parent, path.name, self.pool.to_dict())),
                  ("trainer.json", lambda path: write_json(path.parent, path.name, trainer))]
        return write_checkpoint(self.run_dir, step, files)


def save_model(model: MaskablePPO, folder: Path, name: str) -> Path:
    """``model.save`` as ``folder/name``, all or nothing and never through a symbolic link."""
    buffer = io.BytesIO()
    model.save(buffer)
    return write_file(folder, name, buffer.getvalue())


# ----------------------------------------------------------------------------- the callback

class SelfPlayCallback(BaseCallback):
    """Pool results, snapshots, evaluation, checkpoints and the progress bar (see the module docstring)."""

    def __init__(self, trainer: Trainer, limit: TimeLimit | None = None):
        super().__init__()
        self.trainer = trainer
        self.limit = limit if limit is not None else TimeLimit(trainer.cfg.max_train_minutes)  # (the run's guard)
        self.bar = None
        self.recent = deque(maxlen=500)  # win shares of the latest training games, any opponent
        self.eval_rates: dict[str, float] = {}
        self.start_time, self.start_step = time.time(), 0

    def _on_training_start(self) -> None:
        cfg = self.trainer.cfg
        self.start_time, self.start_step = time.time(), self.num_timesteps
        if cfg.progress_bar:
            rollout = cfg.ppo.n_steps * cfg.n_envs  # learn() runs whole rollouts, so it may end a little past
            total = self.num_timesteps + -(-(cfg.total_timesteps - self.num_timesteps) // rollout) * rollout
            self.bar = tqdm(total=total, initial=self.num_timesteps, unit="step",
                            dynamic_ncols=True, mininterval=1.0, smoothing=0.05)

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            if done and "opponent" in info:
                self.trainer.pool.record(info["opponent"], info["win_share"])
                self.recent.append(info["win_share"])
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        total = self.trainer.cfg.total_timesteps
        if not self.limit.allows(f"PPO after {count(self.num_timesteps)} of {count(total)} decisions"):
            self._write(self.limit.message())
            return False
        return True

    def _on_rollout_end(self) -> None:
        t, step = self.trainer, self.num_timesteps
        snapshot_due, t.next_snapshot = due(t.next_snapshot, step, t.cfg.pool.snapshot_every)
        if snapshot_due:
            t.snapshot(self.model, step)
        self._push_pool()
        for m in t.pool.members:
            rate = t.pool.win_rate(m.name)
            if rate is not None and m.kind == "baseline":
                self.logger.record(f"pool/win_rate_{m.name}", rate)
        if self.recent:
            self.logger.record("pool/win_rate_all", float(np.mean(self.recent)))
        self.logger.record("pool/snapshots", len(t.pool.snapshots))
        eval_due, t.next_eval = due(t.next_eval, step, t.cfg.eval.every)
        if eval_due:
            self.eval_rates = t.evaluate(self.model, step, self.logger)
            self._write(f"step {step}: eval win rates " +
                        ", ".join(f"{k} {v:.0%}" for k, v in self.eval_rates.items()))
        checkpoint_due, t.next_checkpoint = due(t.next_checkpoint, step, t.cfg.checkpoint_every)
        if checkpoint_due:
            t.checkpoint(self.model, step)
        self._update_bar()

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _push_pool(self) -> None:
        members, weights = self.trainer.pool.broadcast()
        self.training_env.env_method("update_opponents", members, weights)

    def _write(self, text: str) -> None:
        (self.bar.write if self.bar is not None else print)(text)

    def _update_bar(self) -> None:
        if self.bar is None:
            return
        pool = self.trainer.pool
        fps = (self.num_timesteps - self.start_step) / max(time.time() - self.start_time, 1e-9)
        post = {"fps": f"{fps:.0f}"}  # as SB3 counts it (time/fps): steps per second since learn() began
        if self.recent:
            post["win"] = f"{np.mean(self.recent):.0%}"
        for m in pool.members:
            rate = pool.win_rate(m.name)
            if m.kind == "baseline" and rate is not None and ":" not in m.name:  # (family members: below)
                post[m.name[:5]] = f"{rate:.0%}"
        family = [pool.win_rate(m.name) for m in pool.members if ":" in m.name and pool.win_rate(m.name) is not None]
        if family:
            post["family"] = f"{np.mean(family):.0%}"
        snaps = [pool.win_rate(m.name) for m in pool.snapshots if pool.win_rate(m.name) is not None]
        if snaps:
            post["snap"] = f"{np.mean(snaps):.0%}"
        for k, v in self.eval_rates.items():
            post[f"eval_{k[:5]}"] = f"{v:.0%}"
        self.bar.set_postfix(post, refresh=False)


# ----------------------------------------------------------------------------- the run

def make_logger(run_dir: Path, step: int) -> Logger:
    """CSV (a new file per resumed segment) and TensorBoard logs in the run folder."""
    csv_name = "progress.csv" if step == 0 else f"progress_from_{step}.csv"
    write_file(run_dir, csv_name, "")  # (a new file in place of a link or an earlier file, that SB3 then fills)
    return Logger(str(run_dir), [CSVOutputFormat(str(run_dir / csv_name)),
                                 TensorBoardOutputFormat(str(run_folder(run_dir, "tb")))])


def train(cfg: TrainConfig, resume: str | Path | None = None) -> Path:
    """Train (or resume) one self-play run; returns the run folder.

    On resume every file of the checkpoint is read and checked first (:func:`read_checkpoint`), and
    the model is rebuilt from ``cfg`` and given the saved weights, so a bad checkpoint fails before
    anything is written and no file can run code.
    """
    fix_threads(cfg.torch_threads)
    players = num_players(cfg)
    ckpt: Checkpoint | None = read_checkpoint(resume, cfg) if resume is not None else None
    run_dir = ckpt.run_dir if ckpt is not None else prepare_run_dir(cfg)
    trainer = Trainer(cfg, run_dir, players)
    if ckpt is not None:
        trainer.pool.load_dict(ckpt.pool)
        trainer.load_state_dict(ckpt.trainer)

    env = make_vec_env(cfg)
    logger = None
    try:
        model = make_model(cfg, env)
        if ckpt is not None:
            restore_model(model, ckpt)
            model.set_random_seed(cfg.seed + model.num_timesteps)
            print(f"resuming {run_dir} from {ckpt.path.name} at step {model.num_timesteps}")
        write_config(run_dir, cfg)
        logger = make_logger(run_dir, model.num_timesteps)
        model.set_logger(logger)
        start = time.time()
        limit = TimeLimit(cfg.max_train_minutes)  # (the opt-in guard: pretraining and evaluations count in it)
        if ckpt is None and cfg.pretrain.teacher is not None:
            pretrain(cfg, trainer, model, limit)
        if not trainer.pool.members:  # pure self-play: start against the initial (or cloned) policy
            trainer.snapshot(model, model.num_timesteps)
        env.env_method("update_opponents", *trainer.pool.broadcast())  # before learn() resets the workers

        remaining = cfg.total_timesteps - model.num_timesteps
        if remaining > 0 and not limit.hit:
            print(f"PPO: {count(remaining)} learner decisions in rollouts of {count(cfg.ppo.n_steps * cfg.n_envs)}",
                  flush=True)
            model.learn(total_timesteps=remaining, callback=SelfPlayCallback(trainer, limit),
                        reset_num_timesteps=ckpt is None)
    finally:
        env.close()
        if logger is not None:
            logger.close()  # (progress.csv and the TensorBoard file)
    train_seconds = time.time() - start
    step = model.num_timesteps
    save_model(model, run_dir, "final_model.zip")
    if cfg.env.features is not None:  # (a .zip cannot name the features the network reads; the .npz does)
        policy_agent(model, cfg, metadata={"step": step}).save(run_dir / "final_model.npz")
    trainer.checkpoint(model, step)
    finish(cfg, trainer, model, train_seconds, limit)
    return run_dir


def pretrain(cfg: TrainConfig, trainer: Trainer, model: MaskablePPO, limit: TimeLimit | None = None) -> CloneReport:
    """Behaviour cloning of ``cfg.pretrain.teacher`` into ``model``, then ``dagger_rounds`` DAgger rounds
    (:func:`gemenvs.training.pretrain.pretrain`); written to pretrain.json and, when periodic evaluation is
    on, evaluated as step 0 of the learning curve."""
    return run_pretrain(cfg, model.policy, lambda: policy_agent(model, cfg, deterministic=True),
                        trainer.run_dir, lambda: trainer.evaluate(model, 0, model.logger), features=run_features(cfg),
                        limit=limit)


def finish(cfg: TrainConfig, trainer: Trainer, model: MaskablePPO, train_seconds: float,
           limit: TimeLimit | None = None) -> None:
    """Final table against each baseline, results files and the learning curve."""
    final_evaluation(cfg, trainer.run_dir, policy_agent(model, cfg), trainer.best_step, trainer.players,
                     model.num_timesteps, train_seconds, updates=model._n_updates // max(cfg.ppo.n_epochs, 1),
                     limit=limit)


__all__ = ["SelfPlayCallback", "Trainer", "find_checkpoint", "load_checkpoint_config", "make_vec_env",
           "prepare_run_dir", "train"]
