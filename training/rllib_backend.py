"""``backend: rllib``: league self-play with multi-agent PPO on Ray RLlib, one machine or a cluster.

Read top to bottom:

1. The environment is :class:`~gemenvs.training.rllib_env.GemenvsMultiAgentEnv` (any game of the
   suite; agents named ``focal``, ``opponent_1`` ...), played by ``rllib.num_env_runners`` Ray
   actors (0: in this process). A share of the episodes (``pool.baseline_share``; null: one share
   per baseline, as many as the league's policies) has its opponents played inside the
   environment by the baselines of ``pool.baselines``.
2. The league: the trained module ``main`` and ``pool.max_snapshots`` frozen modules ``past_0``
   ... (none when ``pool.snapshot_every`` is 0), all :class:`~gemenvs.training.rllib_module.
   MaskedActorCritic`. :func:`map_agent` sends ``focal`` to ``main`` and the opponents to ``main``
   (``rllib.self_play_share`` of the league episodes) or to one frozen version; only ``main`` is
   trained, on every seat it played. The frozen modules start as copies of the initial ``main``;
   every ``pool.snapshot_every`` environment steps the oldest is overwritten with ``main``'s
   current weights, so the league holds the latest ``max_snapshots`` versions.
3. :func:`train` runs ``algo.train()`` iterations until ``total_timesteps`` environment steps (or
   ``max_train_minutes``), evaluating ``main``'s actor as a :class:`~gemenvs.agents.policy.
   PolicyAgent` with the SB3 path's match runner and tables (:mod:`gemenvs.arena.evaluate`),
   and writing checkpoints.

Files (``run_root/name``, as the SB3 path lays them out where they mean the same):
``config.yaml``, ``eval.csv``, ``best_model.npz``, ``final_model.npz`` (PolicyAgent files:
``PolicyAgent.load`` and every match, tournament and ``pool.baselines`` entry read them with numpy
only), ``checkpoints/step_N/{main.npz, modules.pt, config.yaml, trainer.json}`` (``modules.pt``:
the state dicts of every module, tensors only, for ``torch.load(weights_only=True)``),
``progress.csv`` (one row per iteration), ``results.md``, ``results.json`` and
``learning_curve.png``. RLlib's own checkpoints (pickles) are never written or read.

Not (yet) on this backend: ``--resume``, ``pool.sampling: prioritized`` (the league is drawn
uniformly), reward shaping and behaviour cloning (both refused by the config checks).
"""
from __future__ import annotations

import csv
import io
import math
import os
import socket
import time
import zlib
from functools import partial
from pathlib import Path

import numpy as np

from gemenvs.agents.policy import PolicyAgent
from gemenvs.training.budget import TimeLimit, count
from gemenvs.files import open_append, write_file
from gemenvs.training.checkpoint import due, prepare_run_dir, write_checkpoint, write_config, write_json
from gemenvs.training.config import ConfigError, TrainConfig
from gemenvs.arena.pool import pool_baselines
from gemenvs.workers import fix_threads

try:
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core import COMPONENT_RL_MODULE
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
except ImportError as e:  # the rllib extra is missing
    raise ConfigError(f"backend rllib needs Ray RLlib, which cannot be imported here ({e}): "
                      f"pip install -c constraints.txt -e '.[rllib]'") from None

from gemenvs.training.rllib_env import FOCAL, LEAGUE, GemenvsMultiAgentEnv
from gemenvs.training.rllib_module import MaskedActorCritic, actor_layers

#: the trained module
MAIN = "main"
PROGRESS_FIELDS = ["iteration", "env_steps", "main_steps", "seconds", "env_steps_per_s", "episode_return_mean",
                   "win_rate_baselines", "win_rate_self", "win_rate_past"]


def frozen_id(k: int) -> str:
    """The module id of frozen slot ``k``."""
    return f"past_{k}"


def map_agent(agent_id, episode, *, frozen: int, self_play_share: float, seat_mix: str, **kwargs) -> str:
    """The module that plays ``agent_id`` in ``episode``: ``focal`` is always ``main``; an opponent is
    ``main`` with probability ``self_play_share`` and otherwise one of the ``frozen`` past versions,
    drawn from a hash of the episode id (and of the agent id with ``seat_mix: per_seat``), so every
    env runner maps an episode's seats the same way."""
    if agent_id == FOCAL or frozen == 0:
        return MAIN
    key = episode.id_ if seat_mix == "same" else f"{episode.id_}/{agent_id}"
    u = zlib.crc32(str(key).encode()) / 2**32
    if u < self_play_share:
        return MAIN
    return frozen_id(min(frozen - 1, int((u - self_play_share) / (1.0 - self_play_share) * frozen)))


class LeagueMetrics(RLlibCallback):
    """Logs the focal seat's win share per kind of opponent: ``baselines``, ``self`` (main) or ``past``."""

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
        info = episode.get_infos(-1, agent_ids=[FOCAL]).get(FOCAL) if FOCAL in episode.agent_ids else None
        if not info or "win_share" not in info or metrics_logger is None:
            return
        if info["opponent"] != LEAGUE:
            kind = "baselines"
        else:
            kind = "self" if episode.module_for("opponent_1") == MAIN else "past"
        metrics_logger.log_value(("league", kind), info["win_share"], reduce="mean", window=200)


# ----------------------------------------------------------------------------- configuration

def league_size(cfg: TrainConfig) -> int:
    """Frozen past versions in the league (pool.max_snapshots, or 0 when pool.snapshot_every is 0)."""
    return cfg.pool.max_snapshots if cfg.pool.snapshot_every else 0


def baseline_share(cfg: TrainConfig) -> float:
    """Share of episodes whose opponents are baselines: pool.baseline_share, or (null) one share per
    baseline against one per league policy (main and each frozen version)."""
    if not baselines(cfg):
        return 0.0
    if cfg.pool.baseline_share is not None:
        return cfg.pool.baseline_share
    b = len(baselines(cfg))
    return b / (b + 1 + league_size(cfg))


def baselines(cfg: TrainConfig) -> list[str]:
    """The opponents played inside the environment: the pool's baselines, as on the SB3 path
    (pool.baselines, then the tuned bidder family's pool.family members)."""
    return pool_baselines(cfg.pool)


def eval_options(cfg: TrainConfig) -> dict:
    """Keyword arguments of :func:`gemenvs.arena.evaluate.evaluate` beyond the SB3 path's common ones."""
    return {"charts": cfg.eval.charts}


def env_config(cfg: TrainConfig) -> dict:
    """RLlib's ``env_config`` for :class:`GemenvsMultiAgentEnv`."""
    return {"env_id": cfg.env.id, "options": dict(cfg.env.options), "reward": cfg.env.reward,
            "baselines": baselines(cfg), "baseline_share": baseline_share(cfg),
            "seat_mix": cfg.pool.seat_mix, "learner_seat": cfg.env.learner_seat}


def train_batch_size(cfg: TrainConfig) -> int:
    """Environment steps per training iteration."""
    return cfg.rllib.train_batch_size or cfg.ppo.n_steps * cfg.n_envs


def algo_config(cfg: TrainConfig) -> PPOConfig:
    """The PPOConfig of a run: the league's modules and mapping, PPO's settings from the ``ppo`` section."""
    probe = GemenvsMultiAgentEnv(env_config(cfg))
    obs_space, act_space = probe.observation_spaces[FOCAL], probe.action_spaces[FOCAL]
    probe.aec.close()
    p, r = cfg.ppo, cfg.rllib
    modules = [MAIN] + [frozen_id(k) for k in range(league_size(cfg))]
    model = {"net_arch": list(p.net_arch), "activation": p.activation}
    spec = MultiRLModuleSpec(rl_module_specs={
        m: RLModuleSpec(module_class=MaskedActorCritic, observation_space=obs_space, action_space=act_space,
                        model_config=model) for m in modules})
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        # (RLlib's env check steps random unmasked actions, which our env refuses loudly, as it should)
        .environment(GemenvsMultiAgentEnv, env_config=env_config(cfg), disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=r.num_envs_per_env_runner,
                     num_cpus_per_env_runner=r.num_cpus_per_env_runner, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(lr=p.learning_rate, gamma=p.gamma, lambda_=p.gae_lambda, clip_param=p.clip_range,
                  entropy_coeff=p.ent_coef, vf_loss_coeff=p.vf_coef, grad_clip=p.max_grad_norm,
                  grad_clip_by="global_norm", num_epochs=p.n_epochs, minibatch_size=p.batch_size,
                  train_batch_size_per_learner=train_batch_size(cfg), use_kl_loss=False)
        .multi_agent(policies=set(modules), policies_to_train=[MAIN],
                     policy_mapping_fn=partial(map_agent, frozen=league_size(cfg),
                                               self_play_share=r.self_play_share, seat_mix=cfg.pool.seat_mix))
        .rl_module(rl_module_spec=spec)
        .callbacks(LeagueMetrics)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


def check_reachable(address: str) -> None:
    """A HOST:PORT address must accept a connection within 5 s (``ray.init`` would retry for minutes)."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise ConfigError(f"rllib.address: nothing answers at {address} ({e.strerror or e}); start the cluster's head "
                          f"with `ray start --head --port={port}` (see docs/scaling.md)") from None


def start_ray(cfg: TrainConfig) -> bool:
    """Join the cluster at ``rllib.address``, or start Ray on this machine; whether this call started it.

    A local Ray is a new one even where ``ray start`` runs a cluster here (joining it is ``address:
    auto``), and is told it has enough CPUs for every env runner plus the learner (runners past the
    real cores share them), so a run never waits for resources that this machine lacks.
    """
    if ray.is_initialized():
        return False
    r = cfg.rllib
    if r.address is not None:
        check_reachable(r.address)
        try:
            ray.init(address=r.address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ConfigError(f"rllib.address: cannot join the Ray cluster at {r.address!r} ({e}); start one "
                              f"with `ray start --head` (see docs/scaling.md)") from None
        return True
    cpus = max(os.cpu_count() or 1, math.ceil(r.num_env_runners * r.num_cpus_per_env_runner) + 1)
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"OMP_NUM_THREADS": str(cfg.torch_threads),
                                       "MKL_NUM_THREADS": str(cfg.torch_threads)}})
    return True


# ----------------------------------------------------------------------------- weights

def module_weights(algo, module_ids: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """The learner's state dicts of ``module_ids`` as numpy arrays."""
    weights = algo.learner_group.get_weights(module_ids=module_ids)
    return {m: {k: np.asarray(v.detach().cpu() if hasattr(v, "detach") else v) for k, v in weights[m].items()}
            for m in module_ids}


def set_module_weights(algo, weights: dict[str, dict[str, np.ndarray]]) -> None:
    """Give the learner and every env runner these modules' weights.

    RLlib's ``sync_weights`` would not do for the env runners: a runner skips weights whose sequence
    number (the learner's update count) it already holds, and a frozen copy made between two updates
    carries the same number as the weights it replaces. So the runners get the state directly.
    """
    algo.learner_group.set_weights({m: {k: torch.as_tensor(v) for k, v in w.items()} for m, w in weights.items()})
    state = {COMPONENT_RL_MODULE: {m: {k: torch.as_tensor(v) for k, v in w.items()} for m, w in weights.items()}}
    algo.env_runner_group.foreach_env_runner(lambda runner: runner.set_state(state), local_env_runner=True,
                                             timeout_seconds=60.0)


def export_agent(weights: dict[str, np.ndarray], cfg: TrainConfig, step: int, deterministic: bool = True) -> PolicyAgent:
    """``main``'s actor as a PolicyAgent (the same layers and activation: see rllib_module)."""
    layers = actor_layers(weights)
    activation = cfg.ppo.activation if len(layers) > 1 else "identity"
    return PolicyAgent(layers, activation, deterministic=deterministic,
                       metadata={"backend": "rllib", "step": step, "env": cfg.env.id, "options": cfg.env.options})


def load_modules(path: str | os.PathLike) -> dict[str, dict[str, np.ndarray]]:
    """The module state dicts of a checkpoint's ``modules.pt``, read with ``weights_only=True`` (no code runs)."""
    state = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
        raise ConfigError(f"{path} is not a dict of module state dicts")
    return {m: {k: v.numpy() for k, v in s.items()} for m, s in state.items()}


# ----------------------------------------------------------------------------- the run

class League:
    """Steps, schedule, frozen slots, evaluation and files of one RLlib run."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, algo):
        self.cfg, self.run_dir, self.algo = cfg, run_dir, algo
        self.slots: list[dict] = [{"module": frozen_id(k), "step": 0} for k in range(league_size(cfg))]
        self.next_slot = 0
        self.next_snapshot = cfg.pool.snapshot_every or None
        self.next_eval = cfg.eval.every or None
        self.next_checkpoint = cfg.checkpoint_every or None
        self.best_score, self.best_step = -np.inf, -1

    def snapshot(self, step: int) -> None:
        """Overwrite the oldest frozen slot with ``main``'s current weights."""
        if not self.slots:
            return
        slot = self.slots[self.next_slot]
        set_module_weights(self.algo, {slot["module"]: module_weights(self.algo, [MAIN])[MAIN]})
        slot["step"] = step
        self.next_slot = (self.next_slot + 1) % len(self.slots)

    def agent(self, step: int, deterministic: bool = True) -> PolicyAgent:
        """``main`` now, as a PolicyAgent."""
        return export_agent(module_weights(self.algo, [MAIN])[MAIN], self.cfg, step, deterministic)

    def evaluate(self, step: int) -> dict[str, float]:
        """Periodic evaluation against each baseline (the SB3 path's match runner); keeps best_model.npz."""
        from gemenvs.arena.evaluate import append_eval_rows, evaluate
        from gemenvs.training.report import curve_title, warm_start_label
        from gemenvs.training.plotting import plot_learning_curve

        e = self.cfg.eval
        focal = self.agent(step, e.deterministic)
        results = evaluate(focal, self.cfg.env.id, self.cfg.env.options, e.opponents, e.games,
                           seed=self.cfg.seed, workers=e.workers, **eval_options(self.cfg),
                           progress=self.cfg.progress_bar, desc=f"evaluation at step {step:,}")
        path = self.run_dir / "eval.csv"
        append_eval_rows(path, step, results)
        rates = {name: res.win_rate for name, res in results.items()}
        score = e.best_score(rates)
        if score > self.best_score:
            self.best_score, self.best_step = score, step
            focal.save(self.run_dir / "best_model.npz")
        plot_learning_curve(path, self.run_dir / "learning_curve.png", num_players(self.cfg),
                            curve_title(self.cfg, num_players(self.cfg)), warm_start=warm_start_label(self.cfg))
        return rates

    def checkpoint(self, step: int) -> Path:
        """Write checkpoints/step_N: main.npz, modules.pt (tensors only), config.yaml, trainer.json, all or
        nothing (:func:`~gemenvs.training.checkpoint.write_checkpoint`)."""
        modules = [MAIN] + [s["module"] for s in self.slots]
        weights = module_weights(self.algo, modules)
        state = io.BytesIO()
        torch.save({m: {k: torch.as_tensor(v) for k, v in w.items()} for m, w in weights.items()}, state)
        trainer = {"backend": "rllib", "step": step, "iteration": self.algo.iteration, "slots": self.slots,
                   "next_slot": self.next_slot, "next_snapshot": self.next_snapshot, "next_eval": self.next_eval,
                   "next_checkpoint": self.next_checkpoint, "best_score": float(self.best_score),
                   "best_step": self.best_step}
        return write_checkpoint(self.run_dir, step, [
            ("modules.pt", state.getvalue()),
            ("main.npz", export_agent(weights[MAIN], self.cfg, step).save),
            ("config.yaml", lambda path: write_config(path.parent, self.cfg)),
            ("trainer.json", lambda path: write_json(path.parent, path.name, trainer))])

    def after_iteration(self, step: int) -> dict[str, float] | None:
        """Snapshots, evaluation and checkpoints that are due at ``step``; the evaluation's win rates if one ran."""
        rates = None
        snapshot_due, self.next_snapshot = due(self.next_snapshot, step, self.cfg.pool.snapshot_every)
        if snapshot_due:
            self.snapshot(step)
        eval_due, self.next_eval = due(self.next_eval, step, self.cfg.eval.every)
        if eval_due:
            rates = self.evaluate(step)
        checkpoint_due, self.next_checkpoint = due(self.next_checkpoint, step, self.cfg.checkpoint_every)
        if checkpoint_due:
            self.checkpoint(step)
        return rates


def num_players(cfg: TrainConfig) -> int:
    """Seats of the configured game."""
    from gemenvs.arena.single_agent import make_aec_env

    env = make_aec_env(cfg.env.id, **cfg.env.options)
    n = len(env.possible_agents)
    env.close()
    return n


def progress_row(result: dict, iteration: int, seconds: float, prev: tuple[int, float]) -> dict:
    """One progress.csv row from an ``algo.train()`` result."""
    runners = result.get("env_runners", {})
    env_steps = int(runners.get("num_env_steps_sampled_lifetime", 0))
    main_steps = runners.get("num_module_steps_sampled_lifetime", {})
    main_steps = int(main_steps.get(MAIN, 0)) if isinstance(main_steps, dict) else 0
    league = runners.get("league", {}) if isinstance(runners.get("league"), dict) else {}
    rate = (env_steps - prev[0]) / max(seconds - prev[1], 1e-9)
    row = {"iteration": iteration, "env_steps": env_steps, "main_steps": main_steps, "seconds": round(seconds, 3),
           "env_steps_per_s": round(rate, 1), "episode_return_mean": runners.get("episode_return_mean")}
    for kind in ("baselines", "self", "past"):
        row[f"win_rate_{kind}"] = league.get(kind)
    return row


def train(cfg: TrainConfig, resume: str | os.PathLike | None = None) -> Path:
    """Train one league self-play run on Ray RLlib (see the module docstring); returns the run folder."""
    if resume is not None:
        raise ConfigError("--resume is not supported with backend rllib yet: start a new run (its checkpoints "
                          "hold main.npz, which pool.baselines can name as an opponent)")
    if cfg.pool.sampling == "prioritized" and cfg.pool.baselines:
        print("note: backend rllib draws the league uniformly (pool.sampling, priority_power and window are not used)")
    fix_threads(cfg.torch_threads)
    started = start_ray(cfg)  # first: a cluster that cannot be joined leaves no run folder behind
    algo = None
    try:
        run_dir = prepare_run_dir(cfg)
        write_config(run_dir, cfg)
        algo = algo_config(cfg).build_algo()
        league = League(cfg, run_dir, algo)
        if league.slots:  # the frozen versions start as the initial main
            main = module_weights(algo, [MAIN])[MAIN]
            set_module_weights(algo, {s["module"]: main for s in league.slots})
        limit = TimeLimit(cfg.max_train_minutes)
        start, step, prev = time.time(), 0, (0, 0.0)
        print(f"rllib: {cfg.rllib.num_env_runners} env runners x {cfg.rllib.num_envs_per_env_runner} games, "
              f"{train_batch_size(cfg)} steps per iteration, league: main + {len(league.slots)} frozen versions, "
              f"baselines {baselines(cfg)} in {baseline_share(cfg):.0%} of the episodes")
        write_file(run_dir, "progress.csv", "")
        with open_append(run_dir, "progress.csv") as f:
            writer = csv.DictWriter(f, fieldnames=PROGRESS_FIELDS)
            writer.writeheader()
            while step < cfg.total_timesteps:
                result = algo.train()
                row = progress_row(result, algo.iteration, time.time() - start, prev)
                writer.writerow(row)
                f.flush()
                step, prev = row["env_steps"], (row["env_steps"], row["seconds"])
                rates = league.after_iteration(step)
                wins = ", ".join(f"{k[9:]} {row[k]:.0%}" for k in PROGRESS_FIELDS[-3:] if row[k] is not None and row[k] == row[k])
                print(f"iteration {row['iteration']}: {step} steps, {row['env_steps_per_s']:.0f} steps/s"
                      + (f", win share vs {wins}" if wins else "")
                      + (", eval " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()) if rates else ""), flush=True)
                if step < cfg.total_timesteps and not limit.allows(
                        f"training after {count(step)} of {count(cfg.total_timesteps)} environment steps"):
                    print(limit.message(), flush=True)
                    break
        train_seconds = time.time() - start
        league.checkpoint(step)
        final = league.agent(step)
        final.save(run_dir / "final_model.npz")
        finish(cfg, league, final, step, train_seconds, algo.iteration, limit)
    finally:
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    return run_dir


def finish(cfg: TrainConfig, league: League, final: PolicyAgent, step: int, train_seconds: float,
           updates: int | None = None, limit: TimeLimit | None = None) -> None:
    """Final table against each baseline (best model if an evaluation kept one), results files, learning curve."""
    from gemenvs.training.report import final_evaluation

    final_evaluation(cfg, league.run_dir, final, league.best_step, num_players(cfg), step, train_seconds,
                     backend="rllib", steps_name="environment steps", updates=updates, limit=limit)
