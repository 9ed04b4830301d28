"""Training throughput: learner steps per second of MaskablePPO and of the lean backend (SB3's ``time/fps``).

The setups run in the same process, one after the other, each for ``--steps`` steps after a
short warm-up:

* ``connect_four_v3, tutorial setup``: the PettingZoo SB3 tutorial (``tutorials/SB3/connect_four``):
  MaskablePPO with its default hyperparameters on one ``connect_four_v3`` environment that one
  policy plays from both seats (each AEC step is one SB3 step), masks through sb3-contrib's
  ``ActionMasker``. The tutorial's wrapper subclasses ``pettingzoo.utils.BaseWrapper``, which
  Gymnasium >= 1.0 rejects inside ``ActionMasker``, so an equivalent ``gymnasium.Env`` adapter
  with the same step semantics is used here.
* ``MegaGem, tutorial setup``: the same defaults and one in-process environment, on the
  gemenvs single-learner wrapper against three RandomAgents.
* ``MegaGem, SB3 config``: ``configs/megagem/selfplay_sb3.yaml`` (MaskablePPO, ``--config``: its PPO
  settings, ``n_envs``, the baseline opponents of its pool, sampled uniformly), without the
  periodic evaluations, on both environment paths: ``vec_env=subproc`` (``n_envs``
  SubprocVecEnv workers of ``SingleAgentEnv``, one process per environment) and
  ``vec_env=batched`` (``n_envs`` games of the batched engine in the training process:
  ``gemenvs.arena.batched_selfplay``).
* ``--wide N`` adds the batched path with N games and ``ppo.n_steps`` scaled to keep the same
  rollout (``n_steps * n_envs``) and minibatches: not the shipped config, a measure of what
  more games in lockstep buy.
* ``backend lean`` (``gemenvs.training.lean_ppo``, the single-file masked PPO on torch): the
  SB3 config's settings with the lean learner in lockstep (the same games, rollout and
  minibatches as the SB3 row: what SB3's own machinery costs), ``--lean-config``
  (``configs/megagem/selfplay_lean.yaml``: 2048 games stepped by engine rounds), and the same with
  ``lean.overlap=true`` (each PPO update in a background thread while the next rollout is collected;
  its time shares overlap: the update's is how busy its thread was, beside the other two).

Every configured row plays against its config's baseline pool (``pool.baselines`` plus the tuned
bidder family members of ``pool.family``), sampled uniformly, without periodic evaluations.
Every row also says where the time goes: the environment (SB3: ``step_wait``; lean: the batched
games' steps, opponents included), the rest of rollout collection (policy forward passes,
sampling, buffers) and the PPO update, as shares of the measured wall time. Learner steps are
learner decisions collected and trained on (SB3's ``time/fps``).

    python benchmarks/training_throughput.py                 # 20k steps per setup (60k for the lean rows)
    python benchmarks/training_throughput.py --steps 50000 --config configs/megagem/selfplay_sb3.yaml --wide 64
    python benchmarks/training_throughput.py --only lean      # the lean rows beside the SB3 config's and
                                                              # the connect_four tutorial setup's (both ratios)
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from sb3_contrib.common.wrappers import ActionMasker  # noqa: E402


class AECSelfPlayEnv(gymnasium.Env):
    """The tutorial's SB3ActionMaskWrapper semantics: every seat is played by the learner in turn.

    ``step`` plays the current agent's action and returns the *next* agent's observation with
    the acting agent's reward, termination and info, as the tutorial does.
    """

    def __init__(self, aec_env):
        self.env = aec_env
        first = aec_env.possible_agents[0]
        self.observation_space = aec_env.observation_space(first)["observation"]
        self.action_space = aec_env.action_space(first)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.env.reset(seed=seed)
        return self.env.observe(self.env.agent_selection)["observation"], {}

    def step(self, action):
        current = self.env.agent_selection
        self.env.step(action)
        return (self.env.observe(self.env.agent_selection)["observation"], self.env._cumulative_rewards[current],
                self.env.terminations[current], self.env.truncations[current], self.env.infos[current])

    def action_mask(self):
        return self.env.observe(self.env.agent_selection)["action_mask"]


@dataclass
class Measure:
    """Env steps per second of ``model.learn`` and the shares of its wall time."""

    fps: float
    env: float    # in the environment's step_wait (opponents included)
    rollout: float  # the rest of rollout collection (policy forward passes, masks, buffers)
    train: float  # PPO updates

    def shares(self) -> str:
        return f"{self.env:.0%} / {self.rollout:.0%} / {self.train:.0%}"


def measure(model: MaskablePPO, steps: int, warmup: int) -> Measure:
    """``model.learn`` over ``steps`` steps after ``warmup`` unmeasured ones: steps/s and where the time went."""
    model.learn(total_timesteps=warmup)
    spent = {"env": 0.0, "train": 0.0}
    env, train = model.get_env(), model.train

    def timed(name, fn):
        def run(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t
        return run
    env.step_wait, model.train = timed("env", env.step_wait), timed("train", train)
    done, start = model.num_timesteps, time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)  # whole rollouts: a few steps more
    wall = time.perf_counter() - start
    del env.step_wait, model.train
    return Measure((model.num_timesteps - done) / wall, spent["env"] / wall,
                   (wall - spent["env"] - spent["train"]) / wall, spent["train"] / wall)


def connect_four_tutorial(steps: int, warmup: int) -> Measure:
    """MaskablePPO defaults on connect_four_v3 self-play, one env (the tutorial setup)."""
    import pettingzoo

    env = ActionMasker(AECSelfPlayEnv(pettingzoo.make("aec", "classic/connect_four-v3")), lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, seed=0, device="cpu", verbose=0)
    return measure(model, steps, warmup)


def megagem_tutorial(steps: int, warmup: int) -> Measure:
    """The same defaults and one env, on the gemenvs single-learner MegaGem against RandomAgents."""
    from gemenvs.arena.single_agent import SingleAgentEnv

    env = SingleAgentEnv("gemenvs/MegaGem-v0", opponents="random", num_players=4)
    model = MaskablePPO(MaskableActorCriticPolicy, env, seed=0, device="cpu", verbose=0)
    return measure(model, steps, warmup)


def megagem_config(config: str, steps: int, warmup: int, overrides: list[str]) -> tuple[Measure, object]:
    """The training setup of ``config`` with ``overrides`` (its environments, PPO settings and baseline pool)."""
    from gemenvs.training.config import load_config
    from gemenvs.arena.pool import OpponentPool, pool_baselines
    from gemenvs.training.selfplay import make_model, make_vec_env

    cfg = load_config(config, overrides)
    env = make_vec_env(cfg)
    pool = OpponentPool(pool_baselines(cfg.pool), cfg.pool.max_snapshots, "uniform")
    env.env_method("update_opponents", *pool.broadcast())
    try:
        return measure(make_model(cfg, env), steps, warmup), cfg
    finally:
        env.close()


def lean_config(config: str, steps: int, overrides: list[str]) -> tuple[Measure, object]:
    """``backend: lean`` on the setup of ``config`` with ``overrides``: one rollout and update unmeasured, then
    rollouts and updates until ``steps`` learner decisions; steps/s and the time split env / policy / update.
    With ``lean.overlap`` each update runs in the background beside the next rollout, measured in the steady
    state: an update is already running when the clock starts (the warm-up's second rollout's), and the
    last rollout's runs on after it stops, so each measured rollout pays its collection and the wait for the
    update before it, as in a long run. The update's share then overlaps the other two, and the rest of
    rollout includes that wait."""
    from gemenvs.training.config import load_config
    from gemenvs.training.lean_ppo import LeanPPO, make_env
    from gemenvs.arena.pool import OpponentPool, pool_baselines

    cfg = load_config(config, ["backend=lean", *overrides])
    env = make_env(cfg)
    try:
        env.update_opponents(*OpponentPool(pool_baselines(cfg.pool), cfg.pool.max_snapshots, "uniform").broadcast())
        learner = LeanPPO(cfg, env)
        learner.start()
        learner.collect()
        learner.update()
        if cfg.lean.overlap:  # (the pipeline full: an update runs when the clock starts)
            learner.collect()
            learner.update_async()
        learner.seconds = dict.fromkeys(learner.seconds, 0.0)
        done, start = learner.num_timesteps, time.perf_counter()
        while learner.num_timesteps - done < steps:
            learner.collect()
            if cfg.lean.overlap:
                learner.join()  # (the update of the rollout before, which ran beside this one)
                learner.update_async()
            else:
                learner.update()
        wall = time.perf_counter() - start
        s = dict(learner.seconds)  # (overlap: the updates joined within the clock)
        learner.join()  # (overlap: the last rollout's update, which the next rollout would run beside)
        rest = s["policy"] + s.get("wait", 0.0) if cfg.lean.overlap else wall - s["env"] - s["update"]
        return Measure((learner.num_timesteps - done) / wall, s["env"] / wall, rest / wall, s["update"] / wall), cfg
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_000, help="measured steps per setup")
    parser.add_argument("--warmup", type=int, default=2_048, help="unmeasured steps first (one rollout of the defaults)")
    parser.add_argument("--config", default="configs/megagem/selfplay_sb3.yaml")
    parser.add_argument("--wide", type=int, default=0, metavar="N",
                        help="also the batched path with N games (n_steps scaled to keep the rollout size)")
    parser.add_argument("--only", choices=["tutorials", "config", "lean"],
                        help="run only these rows (for quick checks; lean: the connect_four tutorial row, the default "
                             "config's batched row and the lean rows, with the lean config's ratios to both)")
    parser.add_argument("--lean-config", default="configs/megagem/selfplay_lean.yaml")
    parser.add_argument("--lean-steps", type=int, default=60_000, help="measured learner steps per lean row")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a line on stderr as each row starts (default: only when stderr is a terminal)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    show = sys.stderr.isatty() if args.progress is None else args.progress
    started = time.perf_counter()

    def stage(what: str, steps: int) -> None:
        """Say on stderr which row is measured now (nothing is printed while one is timed)."""
        if show:
            print(f"[{time.perf_counter() - started:5.0f} s] row {len(rows) + 1}: {what}, {steps:,} learner steps "
                  f"measured after {args.warmup:,} unmeasured", file=sys.stderr, flush=True)

    rows = []
    if args.only in (None, "tutorials"):
        stage("connect_four_v3, tutorial setup", args.steps)
        rows.append(("connect_four_v3, PettingZoo SB3 tutorial setup (1 env, MaskablePPO defaults)",
                     connect_four_tutorial(args.steps, args.warmup)))
        stage("MegaGem, tutorial setup", args.steps)
        rows.append(("MegaGem 4p vs 3 RandomAgents, tutorial setup (1 env, MaskablePPO defaults)",
                     megagem_tutorial(args.steps, args.warmup)))
    if args.only in (None, "config"):
        from gemenvs.training.config import load_config

        base = load_config(args.config)
        rollout = base.ppo.n_steps * base.n_envs
        for path in ("subproc", "batched"):
            # (the per-process path with at most 8 worker processes, the rollout kept: one process per game
            # of a 64-game config would only queue on 2 cores)
            workers = ["n_envs=8", f"ppo.n_steps={rollout // 8}"] if path == "subproc" and base.n_envs > 8 else []
            stage(f"{args.config}, vec_env={path}", args.steps)
            m, cfg = megagem_config(args.config, args.steps, args.warmup, [f"vec_env={path}", *workers])
            what = "SubprocVecEnv workers" if path == "subproc" else "batched games in one process"
            rows.append((f"MegaGem 4p, {args.config}, vec_env={path} ({cfg.n_envs} {what}, baseline pool)", m))
        if args.wide:
            if rollout % args.wide:
                parser.error(f"--wide must divide the config's rollout, {rollout}")
            stage(f"{args.config}, vec_env=batched, n_envs={args.wide}", args.steps)
            m, cfg = megagem_config(args.config, args.steps, args.warmup,
                                    ["vec_env=batched", f"n_envs={args.wide}", f"ppo.n_steps={rollout // args.wide}"])
            rows.append((f"MegaGem 4p, {args.config}, vec_env=batched, n_envs={cfg.n_envs} ppo.n_steps="
                         f"{cfg.ppo.n_steps} (same rollout; not the shipped config)", m))
    if args.only == "lean":
        stage("connect_four_v3, tutorial setup", args.steps)
        rows.append(("connect_four_v3, PettingZoo SB3 tutorial setup (1 env, MaskablePPO defaults)",
                     connect_four_tutorial(args.steps, args.warmup)))
        stage(f"{args.config}, vec_env=batched", args.steps)
        m, cfg = megagem_config(args.config, args.steps, args.warmup, ["vec_env=batched"])
        rows.append((f"MegaGem 4p, {args.config}, vec_env=batched ({cfg.n_envs} batched games in one process, "
                     f"baseline pool)", m))
    if args.only in (None, "lean"):
        stage(f"{args.config} with backend=lean, lockstep", args.lean_steps)
        m, cfg = lean_config(args.config, args.lean_steps, ["lean.rollout=lockstep"])
        rows.append((f"MegaGem 4p, {args.config} with backend=lean (lockstep, {cfg.n_envs} games x "
                     f"{cfg.ppo.n_steps} steps: the same rollout and minibatches)", m))
        stage(f"{args.lean_config}, lean.overlap=false", args.lean_steps)
        m, cfg = lean_config(args.lean_config, args.lean_steps, ["lean.overlap=false"])
        rows.append((f"MegaGem 4p, {args.lean_config} (backend lean, {cfg.lean.rollout}, {cfg.n_envs} games x "
                     f"{cfg.ppo.n_steps}, minibatch {cfg.ppo.batch_size})", m))
        stage(f"{args.lean_config}, lean.overlap=true", args.lean_steps)
        m, cfg = lean_config(args.lean_config, args.lean_steps, ["lean.overlap=true"])
        rows.append((f"MegaGem 4p, {args.lean_config} with lean.overlap=true (the update in a background thread "
                     f"beside the next rollout; time shares overlap)", m))

    print(f"\nTraining throughput, learner steps/s (as SB3 counts them); {args.steps} steps per SB3 row, "
          f"{args.lean_steps} per lean row; {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"{platform.python_version()}\n")
    first = rows[1][1].fps if args.only == "lean" else rows[0][1].fps
    label = {None: "vs connect_four tutorial", "tutorials": "vs connect_four tutorial", "config": "vs vec_env=subproc",
             "lean": "vs the SB3 config (batched)"}[args.only]
    print(f"| setup | steps/s | {label} | time: env / rest of rollout / PPO update |\n|---|---|---|---|")
    for name, m in rows:
        print(f"| {name} | {m.fps:,.0f} | {m.fps / first:.2f}x | {m.shares()} |")
    if args.only in (None, "lean"):
        if args.only is None:
            tutorial, subproc, batched = rows[0][1].fps, rows[2][1].fps, rows[3][1].fps
            print(f"\nbatched vs subproc on the same config: {batched / subproc:.2f}x")
        else:
            tutorial, batched = rows[0][1].fps, rows[1][1].fps
        lean, overlap = rows[-2][1].fps, rows[-1][1].fps
        print(f"lean ({args.lean_config}) vs the connect_four tutorial setup: {lean / tutorial:.2f}x; "
              f"vs the SB3 config (batched): {lean / batched:.2f}x")
        print(f"lean.overlap=true vs lean.overlap=false, same config, same run: {overlap / lean:.2f}x; vs the connect_four "
              f"tutorial setup: {overlap / tutorial:.2f}x; vs the SB3 config (batched): {overlap / batched:.2f}x")
        if args.only is None:  # the SB3 config on the per-process path: SubprocVecEnv workers
            print(f"lean vs the SB3 config on the per-process path (SubprocVecEnv workers, one process per "
                  f"environment): {lean / subproc:.2f}x; with lean.overlap=true: {overlap / subproc:.2f}x")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
