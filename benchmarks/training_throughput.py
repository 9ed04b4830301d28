"""Training throughput: environment steps per second of MaskablePPO, as SB3 counts them (``time/fps``).

Three setups run in the same process, one after the other, each for ``--steps`` steps after a
short warm-up:

* ``connect_four_v3, tutorial setup``: the PettingZoo SB3 tutorial (``tutorials/SB3/connect_four``):
  MaskablePPO with its default hyperparameters on one ``connect_four_v3`` environment that one
  policy plays from both seats (each AEC step is one SB3 step), masks through sb3-contrib's
  ``ActionMasker``. The tutorial's wrapper subclasses ``pettingzoo.utils.BaseWrapper``, which
  Gymnasium >= 1.0 rejects inside ``ActionMasker``, so an equivalent ``gymnasium.Env`` adapter
  with the same step semantics is used here.
* ``MegaGem, tutorial setup``: the same defaults and one in-process environment, on the
  gemenvs single-learner wrapper against three RandomAgents.
* ``MegaGem, default config``: ``configs/megagem/selfplay.yaml`` as ``make train`` runs it
  (``n_envs`` SubprocVecEnv workers, its PPO settings, the baseline opponents of its pool),
  without the periodic evaluations.

    python benchmarks/training_throughput.py                 # 20k steps per setup
    python benchmarks/training_throughput.py --steps 50000 --config configs/megagem/selfplay.yaml
"""
from __future__ import annotations

import argparse
import os
import platform
import time

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


def measure(model: MaskablePPO, steps: int, warmup: int) -> float:
    """Env steps per second of ``model.learn`` over ``steps`` steps, after ``warmup`` unmeasured steps."""
    model.learn(total_timesteps=warmup)
    done, start = model.num_timesteps, time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)  # whole rollouts: a few steps more
    return (model.num_timesteps - done) / (time.perf_counter() - start)


def connect_four_tutorial(steps: int, warmup: int) -> float:
    """MaskablePPO defaults on connect_four_v3 self-play, one env (the tutorial setup)."""
    from pettingzoo.classic import connect_four_v3

    env = ActionMasker(AECSelfPlayEnv(connect_four_v3.env()), lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, seed=0, device="cpu", verbose=0)
    return measure(model, steps, warmup)


def megagem_tutorial(steps: int, warmup: int) -> float:
    """The same defaults and one env, on the gemenvs single-learner MegaGem against RandomAgents."""
    from gemenvs.wrappers.single_agent import SingleAgentEnv

    env = SingleAgentEnv("gemenvs/MegaGem-v0", opponents="random", num_players=4)
    model = MaskablePPO(MaskableActorCriticPolicy, env, seed=0, device="cpu", verbose=0)
    return measure(model, steps, warmup)


def megagem_default_config(config: str, steps: int, warmup: int) -> tuple[float, int]:
    """The training setup of ``config`` (vectorised workers, its PPO settings and baseline pool)."""
    from gemenvs.training.config import load_config
    from gemenvs.training.pool import OpponentPool
    from gemenvs.training.selfplay import make_model, make_vec_env

    cfg = load_config(config)
    env = make_vec_env(cfg)
    pool = OpponentPool(cfg.pool.baselines, cfg.pool.max_snapshots, "uniform")
    env.env_method("update_opponents", *pool.broadcast())
    try:
        return measure(make_model(cfg, env), steps, warmup), cfg.n_envs
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_000, help="measured steps per setup")
    parser.add_argument("--warmup", type=int, default=2_048, help="unmeasured steps first (one rollout of the defaults)")
    parser.add_argument("--config", default="configs/megagem/selfplay.yaml")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"

    rows = [("connect_four_v3, PettingZoo SB3 tutorial setup (1 env, MaskablePPO defaults)",
             connect_four_tutorial(args.steps, args.warmup))]
    rows.append(("MegaGem 4p vs 3 RandomAgents, tutorial setup (1 env, MaskablePPO defaults)",
                 megagem_tutorial(args.steps, args.warmup)))
    fps, n_envs = megagem_default_config(args.config, args.steps, args.warmup)
    rows.append((f"MegaGem 4p, {args.config} ({n_envs} SubprocVecEnv workers, baseline pool)", fps))

    print(f"\nMaskablePPO training throughput, env steps/s as SB3 counts them; {args.steps} steps each; "
          f"{os.cpu_count()} CPUs, torch {torch.__version__}, {platform.python_version()}\n")
    print("| setup | steps/s | vs connect_four tutorial |\n|---|---|---|")
    base = rows[0][1]
    for name, value in rows:
        print(f"| {name} | {value:,.0f} | {value / base:.2f}x |")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
