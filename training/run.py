"""One training run, for every learner: the budget, the schedule, the files (``gemenvs-train`` runs :func:`train`).

Read top to bottom:

1. :func:`train` reads the checkpoint to resume (every file checked before anything is written:
   :func:`gemenvs.training.checkpoint.read_checkpoint`), builds the config's learner
   (:mod:`gemenvs.training.learner`: ``sb3``, ``lean`` or ``rllib``), makes the run folder and a :class:`Run`.
2. :meth:`Run.learn` warm-starts the learner when the config asks (behaviour cloning, then DAgger rounds:
   :mod:`gemenvs.training.pretrain`), seats the opponent pool, then repeats until ``total_timesteps`` (the
   budget, in work) or until the opt-in wall-clock guard ``max_train_minutes`` cuts the run (it says so):
   one rollout (:meth:`Learner.collect`, the games' results recorded against their pool members), the
   update (:meth:`Learner.update`), one progress.csv row and TensorBoard scalars per update, and what the
   schedule has due at that step (:meth:`Run.after_rollout`): a snapshot of the learner into the pool every
   ``pool.snapshot_every`` decisions, the pool's members and weights sent to the games, an evaluation every
   ``eval.every`` (a row per opponent in ``eval.csv``; the best one kept as ``best_model.npz``) and a
   checkpoint every ``checkpoint_every``.
3. The end: ``final_model.npz``, a last checkpoint, and the final table (:mod:`gemenvs.training.report`:
   ``results.md``, ``results.json``, ``timing.json``, ``learning_curve.png``).

Run layout (``run_root/name``): ``.gemenvs-run`` (the marker that lets ``overwrite`` delete the folder),
``config.yaml``, ``checkpoints/step_N/{policy.npz, the learner's model file, config.yaml, pool.json,
trainer.json}``, ``pool/snapshot_N.npz``, ``best_model.npz``, ``final_model.npz`` (backend sb3: also
``best_model.zip`` and ``final_model.zip``), ``eval.csv``, ``progress.csv``, ``tb/`` (TensorBoard),
``results.md``, ``results.json``, ``timing.json`` and ``learning_curve.png``. Every file is written whole and
never through a symbolic link (:mod:`gemenvs.files`).
"""
from __future__ import annotations

import csv
import time
from collections import deque
from pathlib import Path

import numpy as np
from gemenvs.training.budget import TimeLimit, count
from gemenvs.training.checkpoint import (
    Checkpoint,
    due,
    prepare_run_dir,
    read_checkpoint,
    run_folder,
    write_checkpoint,
    write_config,
    write_json,
)
from gemenvs.training.config import ConfigError, TrainConfig
from gemenvs.training.learner import CAPABILITIES, GameResults, Learner, learner_class
from gemenvs.training.plotting import plot_learning_curve
from gemenvs.training.report import curve_title, final_evaluation, warm_start_label

from gemenvs.arena.evaluate import append_eval_rows, evaluate
from gemenvs.arena.pool import OpponentPool, pool_baselines
from gemenvs.files import open_append, write_file
from gemenvs.workers import fix_threads

#: the columns of progress.csv every learner fills (each adds its own, Learner.progress_fields, after them)
PROGRESS_FIELDS = ["update", "step", "seconds", "steps_per_s"]


class Run:
    """The schedule, the opponent pool, the files and the logs of one run around its learner."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, learner: Learner, players: int,
                 limit: TimeLimit | None = None):
        self.cfg, self.run_dir, self.learner, self.players = cfg, run_dir, learner, players
        self.limit = limit if limit is not None else TimeLimit(cfg.max_train_minutes)
        self.pool = OpponentPool(pool_baselines(cfg.pool), cfg.pool.max_snapshots, cfg.pool.sampling,
                                 cfg.pool.priority_power, cfg.pool.window, players, root=run_dir,
                                 baseline_share=cfg.pool.baseline_share)
        self.next_snapshot = cfg.pool.snapshot_every or None
        self.next_eval = cfg.eval.every or None
        self.next_checkpoint = cfg.checkpoint_every or None
        self.best_score, self.best_step = float("-inf"), -1
        self.recent: deque = deque(maxlen=500)  # win shares of the latest training games, any opponent
        self._tb = None  # the TensorBoard writer of run_dir/tb, made on first use

    # ------------------------------------------------------------------ state (trainer.json)

    def state_dict(self, step: int) -> dict:
        """The learner's step counters (``step``: the decisions its weights were trained on) and state, the
        schedule and the best score (trainer.json)."""
        return {"backend": self.learner.name, "num_timesteps": step,
                "n_updates": self.learner.n_updates, "next_snapshot": self.next_snapshot, "next_eval": self.next_eval,
                "next_checkpoint": self.next_checkpoint, "best_score": float(self.best_score),
                "best_step": self.best_step, **self.learner.state()}

    def restore(self, ckpt: Checkpoint) -> None:
        """Continue from a checkpoint: the learner's state and counters, the pool, and the schedule (keeping the
        current config's intervals)."""
        t = ckpt.trainer
        self.learner.restore(ckpt.params, ckpt.num_timesteps, ckpt.n_updates, t)
        self.pool.load_dict(ckpt.pool)
        self.next_snapshot = t["next_snapshot"] if self.cfg.pool.snapshot_every else None
        self.next_eval = t["next_eval"] if self.cfg.eval.every else None
        self.next_checkpoint = t["next_checkpoint"] if self.cfg.checkpoint_every else None
        self.best_score, self.best_step = t["best_score"], t["best_step"]
        print(f"resuming {self.run_dir} from {ckpt.path.name} at step {self.learner.num_timesteps}")

    # ------------------------------------------------------------------ logs

    def tensorboard(self):
        """The run's TensorBoard writer (``run_dir/tb``)."""
        if self._tb is None:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(run_folder(self.run_dir, "tb")))  # (tb/ itself never a link)
        return self._tb

    def log_update(self, stats: dict, step: int, seconds: float) -> None:
        """One update's losses and the pool's win rates, under the tags SB3's MaskablePPO logs them with."""
        tb = self.tensorboard()
        for tag, value in (("train/policy_gradient_loss", stats.get("policy_loss")),
                           ("train/value_loss", stats.get("value_loss")),
                           ("train/entropy_loss", None if stats.get("entropy") is None else -stats["entropy"]),
                           ("train/approx_kl", stats.get("approx_kl")),
                           ("train/clip_fraction", stats.get("clip_fraction")),
                           ("train/anchor_kl", stats.get("anchor_kl")),
                           ("train/learning_rate", self.cfg.ppo.learning_rate),
                           ("time/fps", step / max(seconds, 1e-9)),
                           ("pool/win_rate_all", float(np.mean(self.recent)) if self.recent else None),
                           ("pool/snapshots", len(self.pool.snapshots))):
            if value is not None and value == value:  # (nan: nothing to log, e.g. anchor_kl without an anchor)
                tb.add_scalar(tag, value, step)
        for m in self.pool.members:
            rate = self.pool.win_rate(m.name)
            if rate is not None and m.kind == "baseline":
                tb.add_scalar(f"pool/win_rate_{m.name}", rate, step)

    def close(self) -> None:
        """Flush and close the TensorBoard writer."""
        if self._tb is not None:
            self._tb.close()
            self._tb = None

    # ------------------------------------------------------------------ the schedule

    def record(self, results: GameResults | None) -> None:
        """Count the learner's finished training games against their pool members."""
        for label, share in results or ():
            self.pool.record(label, share)
            self.recent.append(share)

    def push_pool(self) -> None:
        """Send the pool's members and weights to the games (new games draw from them)."""
        self.learner.set_opponents(*self.pool.broadcast())

    def evaluate(self, step: int) -> dict[str, float]:
        """Periodic evaluation against each of eval.opponents; keeps best_model.npz; returns the win rates."""
        e = self.cfg.eval
        focal = self.learner.export_agent(e.deterministic)
        results = evaluate(focal, self.cfg.env.id, self.cfg.env.options, e.opponents, e.games,
                           seed=self.cfg.seed, workers=e.workers, charts=e.charts,
                           progress=self.cfg.progress_bar, desc=f"evaluation at step {step:,}")
        path = self.run_dir / "eval.csv"
        append_eval_rows(path, step, results)
        for name, r in results.items():
            self.tensorboard().add_scalar(f"eval/win_rate_{name}", r.win_rate, step)
            self.tensorboard().add_scalar(f"eval/mean_margin_{name}", r.mean_margin, step)
        rates = {name: r.win_rate for name, r in results.items()}
        score = e.best_score(rates)
        if score > self.best_score:
            self.best_score, self.best_step = score, step
            self.learner.save_model(self.run_dir, "best_model")
            focal.save(self.run_dir / "best_model.npz")
        plot_learning_curve(path, self.run_dir / "learning_curve.png", self.players,
                            curve_title(self.cfg, self.players), warm_start=warm_start_label(self.cfg))
        return rates

    def checkpoint(self, step: int) -> Path:
        """Write checkpoints/step_N, all or nothing (:func:`~gemenvs.training.checkpoint.write_checkpoint`):
        policy.npz (the actor), the learner's own files, config.yaml, pool.json and trainer.json (``step``: the
        decisions the weights were trained on)."""
        trainer = self.state_dict(step)
        return write_checkpoint(self.run_dir, step, [
            ("policy.npz", self.learner.export_agent(step=step).save),
            *self.learner.checkpoint_files(),
            ("config.yaml", lambda path: write_config(path.parent, self.cfg)),
            ("pool.json", lambda path: write_json(path.parent, path.name, self.pool.to_dict())),
            ("trainer.json", lambda path: write_json(path.parent, path.name, trainer))])

    def after_rollout(self, step: int) -> dict[str, float] | None:
        """The snapshot, pool push, evaluation and checkpoint due at ``step``; the win rates if evaluated."""
        rates = None
        snapshot_due, self.next_snapshot = due(self.next_snapshot, step, self.cfg.pool.snapshot_every)
        if snapshot_due:
            self.learner.snapshot(step, self)
        self.push_pool()
        eval_due, self.next_eval = due(self.next_eval, step, self.cfg.eval.every)
        if eval_due:
            rates = self.evaluate(step)
        checkpoint_due, self.next_checkpoint = due(self.next_checkpoint, step, self.cfg.checkpoint_every)
        if checkpoint_due:
            self.checkpoint(step)
        return rates

    # ------------------------------------------------------------------ the loop

    def pretrain(self) -> None:
        """Behaviour cloning of ``pretrain.teacher`` into the learner, then DAgger rounds
        (:func:`gemenvs.training.pretrain.pretrain`: pretrain.json and, with periodic evaluations, step 0)."""
        from gemenvs.training.pretrain import pretrain

        learner = self.learner
        pretrain(self.cfg, learner.clone_policy(), lambda: learner.export_agent(deterministic=True), self.run_dir,
                 lambda: self.evaluate(0), features=learner.features, limit=self.limit)
        learner.after_pretrain()

    def learn(self, warm_start: bool = True, append: bool = False) -> None:
        """The warm start (``warm_start`` and pretrain.teacher set), then rollouts and updates until
        ``total_timesteps`` or the time guard (see the module docstring). ``append``: add to progress.csv (a
        resumed run). Shows a progress bar of the budget (``progress_bar``)."""
        from tqdm.auto import tqdm

        cfg, learner, limit = self.cfg, self.learner, self.limit
        if warm_start and cfg.pretrain.teacher is not None:
            self.pretrain()
        learner.seed_pool(self)
        self.push_pool()
        learner.start(cfg.seed + learner.num_timesteps)
        total = cfg.total_timesteps
        if limit.hit:  # (the warm start used the time up)
            print(f"PPO: skipped, {limit.message()}", flush=True)
            return
        if learner.num_timesteps >= total:
            return
        print(f"PPO: {count(total - learner.num_timesteps)} {learner.steps_name} to go, {learner.describe()}",
              flush=True)
        bar = tqdm(total=total, initial=learner.num_timesteps, desc="PPO", unit="decision", dynamic_ncols=True,
                   mininterval=1.0, smoothing=0.05, disable=not cfg.progress_bar)
        write = bar.write if cfg.progress_bar else print
        start, first = time.time(), learner.num_timesteps

        def allowed() -> bool:
            """Whether to go on: the budget is not spent and the guard has time left (it records what it cuts)."""
            return learner.num_timesteps >= total or limit.allows(
                f"PPO after {count(learner.num_timesteps)} of {count(total)} {learner.unit}")

        def on_step(results: GameResults | None) -> bool:
            self.record(results)
            bar.update(learner.num_timesteps - bar.n)
            return allowed()

        progress = self.run_dir / "progress.csv"
        append = append and progress.is_file()
        if not append:
            write_file(self.run_dir, progress.name, "")  # (a new, empty file in place of an earlier one)
        with open_append(self.run_dir, progress.name) as f:
            writer = csv.DictWriter(f, fieldnames=PROGRESS_FIELDS + learner.progress_fields)
            if not append:
                writer.writeheader()

            def report(stats: dict, step: int) -> None:
                """The update's progress.csv row and TensorBoard scalars."""
                seconds = time.time() - start
                split = learner.time_split()
                spent = sum(split.values()) or 1.0
                writer.writerow({"update": learner.n_updates, "step": step, "seconds": round(seconds, 3),
                                 "steps_per_s": round((step - first) / max(seconds, 1e-9), 1), **stats,
                                 **({"win_rate_all": float(np.mean(self.recent)) if self.recent else None}
                                    if "win_rate_all" in learner.progress_fields else {}),
                                 **{f"{k}_share": round(v / spent, 4) for k, v in split.items()}})
                f.flush()
                self.log_update(stats, step, seconds)

            def schedule(step: int) -> bool:
                """What is due at ``step``; False once the time is up (an evaluation may have used it)."""
                rates = self.after_rollout(step)
                if rates:
                    write(f"step {step:,}: eval win rates " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))
                post = {"updates": learner.n_updates}
                if self.recent:
                    post["win"] = f"{np.mean(self.recent):.0%}"
                bar.set_postfix(post, refresh=False)
                return allowed()

            try:
                while learner.num_timesteps < total:
                    if not learner.collect(on_step):
                        if (last := learner.drain()) is not None:
                            report(*last)
                        write(limit.message())
                        return
                    if (done := learner.update()) is not None:
                        stats, step = done
                        if stats is not None:
                            report(stats, step)
                        if not schedule(step):
                            write(limit.message())
                            return
                    if (stats := learner.after_schedule()) is not None:
                        report(stats, learner.num_timesteps)
                if (last := learner.drain()) is not None:  # (an update still running when the budget is spent)
                    report(*last)
                    schedule(last[1])
            finally:
                bar.close()

    def finish(self, train_seconds: float) -> None:
        """The final model and checkpoint, then the learner released and the final report."""
        learner, step, updates = self.learner, self.learner.num_timesteps, self.learner.n_updates
        final = learner.export_agent(step=step)
        final.save(self.run_dir / "final_model.npz")
        learner.save_model(self.run_dir, "final_model")
        self.checkpoint(step)
        learner.close()
        final_evaluation(self.cfg, self.run_dir, final, self.best_step, self.players, step, train_seconds,
                         backend=learner.name, steps_name=learner.steps_name, updates=updates, limit=self.limit)


def num_players(cfg: TrainConfig) -> int:
    """Seats of the configured game."""
    from gemenvs.arena.single_agent import make_aec_env

    env = make_aec_env(cfg.env.id, **cfg.env.options)
    n = len(env.possible_agents)
    env.close()
    return n


def train(cfg: TrainConfig, resume: str | Path | None = None) -> Path:
    """Train (or resume) one run with the config's learner; returns the run folder.

    On resume every file of the checkpoint is read and checked first (:func:`read_checkpoint`), and the
    learner is built from ``cfg`` and given the saved state, so a bad checkpoint fails before anything is
    written and no file can run code."""
    if resume is not None and not CAPABILITIES[cfg.backend].resume:
        raise ConfigError(f"--resume is not supported with backend {cfg.backend} yet: start a new run (its "
                          f"checkpoints hold policy.npz, which pool.baselines can name as an opponent)")
    ckpt = read_checkpoint(resume, cfg) if resume is not None else None
    fix_threads(cfg.torch_threads)  # torch and numpy's BLAS (the frozen policies); 1 on 2 cores
    limit = TimeLimit(cfg.max_train_minutes)  # the opt-in guard (pretraining and evaluations count in it)
    players = num_players(cfg)
    learner = learner_class(cfg.backend)(cfg)
    run = None
    try:
        run_dir = ckpt.run_dir if ckpt is not None else prepare_run_dir(cfg)
        run = Run(cfg, run_dir, learner, players, limit)
        if ckpt is not None:
            run.restore(ckpt)
        write_config(run_dir, cfg)
        start = time.time()
        run.learn(warm_start=ckpt is None, append=ckpt is not None)
        train_seconds = time.time() - start
        run.finish(train_seconds)
    finally:
        learner.close()
        if run is not None:
            run.close()
    return run_dir


__all__ = ["PROGRESS_FIELDS", "Run", "num_players", "train"]
