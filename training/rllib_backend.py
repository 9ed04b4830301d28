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
3. :class:`RLlibLearner` is the run's learner (:mod:`gemenvs.training.run`): each rollout is one
   ``algo.train()`` iteration, counted in environment steps; the run evaluates ``main``'s actor as a
   :class:`~gemenvs.agents.policy.PolicyAgent` (:mod:`gemenvs.arena.evaluate`) and writes the checkpoints
   and the final report, as for every learner.

Its files: ``modules.pt`` in each checkpoint (the state dicts of every module, tensors only, for
``torch.load(weights_only=True)``) beside the run's ``policy.npz``, and the slots of the league in
``trainer.json``. RLlib's own checkpoints (pickles) are never written or read.

Not (yet) on this backend: ``--resume``, ``pool.sampling: prioritized`` (the league is drawn
uniformly), reward shaping and behaviour cloning (both refused by the config checks).
"""
from __future__ import annotations

import io
import math
import os
import socket
import time
import zlib
from functools import partial
from pathlib import Path
from typing import ClassVar

import numpy as np
from gemenvs.agents.policy import PolicyAgent
from gemenvs.training.checkpoint import CheckpointError
from gemenvs.training.config import ConfigError, TrainConfig
from gemenvs.training.learner import Learner

from gemenvs.arena.pool import pool_baselines
from gemenvs.core.entry import registry_state

try:
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core import COMPONENT_RL_MODULE
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
except ImportError as e:  # the rllib extra is missing
    raise ConfigError(f"backend rllib needs Ray RLlib, which cannot be imported here ({e}): "
                      f"pip install -c constraints.txt -e '.[rllib]'") from None

from gemenvs.training.rllib_env import FOCAL, LEAGUE, GemenvsMultiAgentEnv
from gemenvs.training.rllib_module import MaskedActorCritic, actor_layers

#: the trained module
MAIN = "main"


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
            "seat_mix": cfg.pool.seat_mix, "learner_seat": cfg.env.learner_seat,
            "registry": registry_state()}


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


# ----------------------------------------------------------------------------- the learner of a run

class RLlibLearner(Learner):
    """RLlib's PPO over the league (see the module docstring) as a run's learner: each rollout is one
    ``algo.train()`` iteration (sampling and the update), after which the run's schedule runs; a snapshot
    overwrites the oldest frozen slot with ``main``'s weights."""

    name = "rllib"
    steps_name = "environment steps"
    unit = "environment steps"
    progress_fields: ClassVar[list[str]] = ["main_steps", "episode_return_mean", "win_rate_baselines", "win_rate_self", "win_rate_past"]

    def __init__(self, cfg: TrainConfig):
        self.cfg = cfg
        if cfg.pool.sampling == "prioritized" and cfg.pool.baselines:
            print("note: backend rllib draws the league uniformly (pool.sampling, priority_power and window are not "
                  "used)")
        self.started = start_ray(cfg)  # first: a cluster that cannot be joined leaves no run folder behind
        self.algo = None
        try:
            self.algo = algo_config(cfg).build_algo()
        except BaseException:
            self.close()
            raise
        self.slots: list[dict] = [{"module": frozen_id(k), "step": 0} for k in range(league_size(cfg))]
        self.next_slot = 0
        if self.slots:  # the frozen versions start as the initial main
            main = module_weights(self.algo, [MAIN])[MAIN]
            set_module_weights(self.algo, {s["module"]: main for s in self.slots})
        self.num_timesteps, self._stats, self._start = 0, {}, time.time()
        self._prev = (0, 0.0)

    @property
    def n_updates(self) -> int:
        return self.algo.iteration if self.algo is not None else 0

    def seed_pool(self, run) -> None:
        """Nothing: the league's frozen slots start as copies of the initial ``main``."""

    def start(self, seed: int) -> None:
        """Nothing to deal: RLlib's env runners play their own games."""

    def describe(self) -> str:
        return (f"{self.cfg.rllib.num_env_runners} env runners x {self.cfg.rllib.num_envs_per_env_runner} games, "
                f"{train_batch_size(self.cfg)} steps per iteration, league: main + {len(self.slots)} frozen "
                f"versions, baselines {baselines(self.cfg)} in {baseline_share(self.cfg):.0%} of the episodes")

    def collect(self, on_step) -> bool:
        """One ``algo.train()`` iteration: the env runners' games, then PPO's update of ``main``."""
        result = self.algo.train()
        row = progress_row(result, self.algo.iteration, time.time() - self._start, self._prev)
        self.num_timesteps, self._prev = row["env_steps"], (row["env_steps"], row["seconds"])
        wins = ", ".join(f"{k[9:]} {row[k]:.0%}" for k in self.progress_fields[-3:]
                         if row[k] is not None and row[k] == row[k])
        print(f"iteration {row['iteration']}: {self.num_timesteps} steps, {row['env_steps_per_s']:.0f} steps/s"
              + (f", win share vs {wins}" if wins else ""), flush=True)
        self._stats = {k: row[k] for k in self.progress_fields}
        return True

    def update(self) -> tuple[dict, int]:
        return self._stats, self.num_timesteps

    def snapshot(self, step: int, run) -> None:
        """Overwrite the oldest frozen slot with ``main``'s current weights."""
        if not self.slots:
            return
        slot = self.slots[self.next_slot]
        set_module_weights(self.algo, {slot["module"]: module_weights(self.algo, [MAIN])[MAIN]})
        slot["step"] = step
        self.next_slot = (self.next_slot + 1) % len(self.slots)

    def export_agent(self, deterministic: bool = True, step: int | None = None) -> PolicyAgent:
        """``main`` now, as a PolicyAgent."""
        return export_agent(module_weights(self.algo, [MAIN])[MAIN], self.cfg,
                            self.num_timesteps if step is None else step, deterministic)

    def checkpoint_files(self) -> list:
        """``modules.pt``: the state dicts of ``main`` and every frozen slot (tensors only)."""
        modules = [MAIN] + [s["module"] for s in self.slots]
        weights = module_weights(self.algo, modules)
        state = io.BytesIO()
        torch.save({m: {k: torch.as_tensor(v) for k, v in w.items()} for m, w in weights.items()}, state)
        return [("modules.pt", state.getvalue())]

    def state(self) -> dict:
        return {"slots": [dict(s) for s in self.slots], "next_slot": self.next_slot}

    @classmethod
    def read_state(cls, folder: Path) -> dict:
        raise CheckpointError("--resume is not supported with backend rllib yet")  # (CAPABILITIES says so first)

    def restore(self, state: dict, num_timesteps: int, n_updates: int, trainer: dict) -> None:
        raise CheckpointError("--resume is not supported with backend rllib yet")

    def close(self) -> None:
        if self.algo is not None:
            self.algo.stop()
            self.algo = None
        if self.started:
            self.started = False
            ray.shutdown()


def progress_row(result: dict, iteration: int, seconds: float, prev: tuple[int, float]) -> dict:
    """One iteration's figures from an ``algo.train()`` result."""
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
