"""``backend: lean``: a single-file masked PPO on torch, playing the batched MegaGem engine in-process.

The same algorithm as MaskablePPO (sb3-contrib) with the same ``ppo`` settings, written out in the
style of CleanRL's ``ppo.py`` so that nothing stands between the batched engine and the network:

1. **Rollout** (:meth:`LeanPPO.collect`): ``n_envs`` games of
   :class:`~gemenvs.arena.batched_selfplay.BatchedSelfPlay` (the learner in one seat of each, the
   opponents drawn from the pool and acting in batch) are stepped ``ppo.n_steps`` times in lockstep.
   Each step is one forward pass of the actor and the critic over all games, straight from the
   engine's numpy arrays into preallocated torch buffers ``(n_steps, n_envs, ...)``; no SB3 VecEnv,
   no per-game Python. The pool's bidders (HeuristicBidder, the tuned bidder and its family members)
   play through one shared :class:`~gemenvs.agents.megagem.batched.BidderGames` table, each row with its
   member's parameters: one call per engine round for all of them (BatchedSelfPlay's, as on the SB3
   path).
   ``lean.rollout`` says what a step is:

   * ``lockstep``: one learner decision in every game, as on the SB3 path
     (``BatchedSelfPlay.step``: the games where the learner has no decision, an opponent revealing
     or the learner's bid forced, are played on while the others wait). With many games some
     learner is always broke or waiting, so a step takes many engine rounds, most over a handful
     of games, each paying the opponents' fixed costs per call.
   * ``rounds``: one engine round of every game (:class:`RoundSelfPlay`): the learner decides in
     the games that wait on it (about 60%), the opponents everywhere else, and no game waits. The
     buffers keep which games the learner acted in (``acted``); only those rows are trained on,
     and GAE links each decision to the learner's next decision in the same game. A rollout ends
     with a settle pass (:meth:`RoundSelfPlay.settle`): the games that do not wait on the learner
     are played on, the others held, until they do, so every game's last decision gets its
     outcome and the bootstrap value is that of a decision state.
2. **Masking**: every illegal action's logit is set to :data:`MASKED_LOGIT` before the softmax, so
   it is never sampled, never the argmax, has probability exactly 0, and adds nothing to the
   entropy or to the log-probabilities in the loss (whatever the actor's raw logit there).
3. **Advantages** (:meth:`LeanPPO.advantages`): GAE(gamma, lambda) over each game's learner decisions,
   the value of the learner's observation after the rollout bootstrapping its last one; a finished
   game's last decision has no successor (its next observation is the next game's first), and a
   reward that comes in a round without a learner decision belongs to its last decision.
4. **Update** (:meth:`LeanPPO.update`): ``ppo.n_epochs`` passes over the rollout in shuffled
   minibatches of ``ppo.batch_size``: advantages normalised per minibatch, the clipped surrogate
   objective, the value loss (MSE to the GAE returns, unclipped) times ``vf_coef``, the entropy
   bonus times ``ent_coef``, Adam (eps 1e-5) and the gradient norm clipped to ``max_grad_norm``;
   with ``ppo.target_kl`` the epochs stop at the first minibatch whose approximate KL exceeds
   1.5 * target_kl (as SB3 does). With ``ppo.anchor_coef`` > 0 after pretraining, the loss also holds
   ``anchor_coef * KL(policy || the actor as pretraining left it)`` over the legal actions
   (:meth:`LeanPPO.set_anchor`), so fine-tuning leaves the cloned teacher only where the reward pays.
   With ``lean.critic_thread`` (the default) the critic's forward and backward pass of each minibatch
   run in a second thread beside the actor's (:meth:`LeanPPO._critic_pass`): the networks share no
   parameters, so the gradients are the same bit for bit, and an update uses two cores.
5. **Overlap** (``lean.overlap: true``): the update of rollout k runs in a background thread
   (:meth:`LeanPPO.update_async`, :meth:`LeanPPO.join`) while rollout k+1 is collected, so the engine
   and the update use both cores (torch and numpy release the GIL in their kernels). Rollout k+1 is
   played by a separate acting copy of the actor-critic (``LeanPPO.acting``) that holds the weights
   from before update k and takes the new ones when it joins: the update never writes what collection
   reads, and the collecting policy lags the learning one by one update, as in asynchronous PPO
   (APPO, IMPALA). The loss needs no change: the ratio and the clipping are relative to the behaviour
   log-probabilities recorded at collection, the values to the behaviour critic. Two rollout buffers
   alternate (collection fills one while the update reads the other), and sampling and the
   minibatch order draw from separate torch generators, so a run is the same under its seed however
   the threads are timed. Evaluations, snapshots and checkpoints are taken after the update joins,
   from the learning model, at the step count of the rollouts it has trained on.

The networks are MaskablePPO's ``MlpPolicy`` ones (separate actor and critic MLPs from
``ppo.net_arch`` and ``ppo.activation``, orthogonal initialisation with SB3's gains), so the actor
exports exactly to a :class:`~gemenvs.agents.policy.PolicyAgent` (:meth:`ActorCritic.to_agent`).

:func:`train` runs it like the SB3 path (:mod:`gemenvs.training.selfplay`): the same opponent pool
(:class:`~gemenvs.arena.pool.OpponentPool`, prioritized sampling included; a snapshot every
``pool.snapshot_every`` steps goes to ``pool/snapshot_N.npz`` and to the games through
``update_opponents``), the same evaluation (:mod:`gemenvs.arena.evaluate`) and the same files
where they mean the same: ``config.yaml``, ``eval.csv``, ``best_model.npz``, ``final_model.npz``,
``results.md``, ``results.json``, ``timing.json``, ``learning_curve.png``, ``tb/`` (TensorBoard, the SB3
path's tags: ``train/policy_gradient_loss``, ``train/value_loss``, ``train/entropy_loss``, ``train/approx_kl``,
``train/clip_fraction``, ``time/fps``, ``pool/win_rate_*``, ``eval/win_rate_*``, ``eval/mean_margin_*``, the x-axis
learner decisions), ``progress.csv`` (one row per update: losses, win rate, steps/s and the time split env /
policy / update), and ``checkpoints/step_N/{policy.npz, model.pt, config.yaml, pool.json, trainer.json}``
(``model.pt``: the networks' and the optimizer's state dicts, tensors only, read with
``torch.load(weights_only=True)``). Nothing is pickled. The budget is ``total_timesteps`` learner decisions;
the opt-in guard ``max_train_minutes`` is checked after every step, as on the SB3 path.

``pretrain`` (behaviour cloning of a teacher, then DAgger rounds, before PPO) runs as on backend sb3
(:func:`pretrain`: :mod:`gemenvs.training.pretrain`'s ``collect`` and ``clone``, the latter through
:class:`ClonePolicy`; ``pretrain.json`` and the step-0 evaluation).

Not on this backend (refused by the config checks, one line each): other games than MegaGem (the
batched engine plays MegaGem only), ``vec_env: subproc``. ``env.shaping`` changes nothing, as on the SB3 batched
path (MegaGem has no shaping potential).
"""
from __future__ import annotations

import copy
import io
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from gemenvs.agents.policy import PolicyAgent
from gemenvs.training.budget import count
from gemenvs.training.checkpoint import CheckpointError
from gemenvs.training.config import TrainConfig
from gemenvs.training.learner import Learner
from torch import nn

from gemenvs.arena.batched_selfplay import BatchedSelfPlay, Finished

#: the logit of an illegal action: exp of it underflows to exactly 0 next to any legal logit
MASKED_LOGIT = -1e8
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
#: the generator of the update's minibatch order with ``lean.overlap`` is seeded ``seed + this`` (sampling: ``seed``)
UPDATE_SEED_OFFSET = 1_000_003


# ----------------------------------------------------------------------------- the networks

def mlp(inputs: int, hidden: list[int], outputs: int, activation: str, last_gain: float) -> nn.Sequential:
    """Linear layers with ``activation`` between them, initialised as SB3's MlpPolicy (orthogonal weights,
    gain sqrt(2) in the hidden layers and ``last_gain`` in the last; zero biases)."""
    layers: list[nn.Module] = []
    sizes = [inputs, *hidden]
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), ACTIVATIONS[activation]()]
    layers.append(nn.Linear(sizes[-1], outputs))
    linear = [m for m in layers if isinstance(m, nn.Linear)]
    for k, m in enumerate(linear):
        nn.init.orthogonal_(m.weight, gain=last_gain if k == len(linear) - 1 else math.sqrt(2))
        nn.init.zeros_(m.bias)
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor (one logit per action) and critic MLPs over the flat observation."""

    def __init__(self, obs_dim: int, num_actions: int, net_arch: list[int], activation: str = "tanh"):
        super().__init__()
        self.activation = activation
        self.actor = mlp(obs_dim, list(net_arch), num_actions, activation, last_gain=0.01)
        self.critic = mlp(obs_dim, list(net_arch), 1, activation, last_gain=1.0)

    def masked_logits(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """The actor's logits with every illegal action (``masks`` False) set to :data:`MASKED_LOGIT`."""
        return self.actor(obs).masked_fill(~masks, MASKED_LOGIT)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's value of each observation, shape (N,)."""
        return self.critic(obs).squeeze(-1)

    def to_agent(self, deterministic: bool = True, seed: int | None = None,
                 metadata: dict | None = None, features=None) -> PolicyAgent:
        """The actor as a PolicyAgent (numpy, same layers and activation; saved as ``.npz``), reading
        ``features`` (:mod:`gemenvs.agents.features`) after the observation if the network was trained on them."""
        layers = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy())
                  for m in self.actor if isinstance(m, nn.Linear)]
        activation = self.activation if len(layers) > 1 else "identity"
        return PolicyAgent(layers, activation, deterministic=deterministic, seed=seed, metadata=metadata,
                           features=features)


class ClonePolicy:
    """An :class:`ActorCritic` seen through the methods :func:`gemenvs.training.pretrain.clone` calls on a
    MaskablePPO policy (``parameters``, ``set_training_mode``, ``evaluate_actions``, ``get_distribution``,
    ``predict_values``), so behaviour cloning fits the lean networks with the same code as SB3's."""

    def __init__(self, model: ActorCritic):
        self.model = model

    def parameters(self):
        """The actor's and the critic's parameters."""
        return self.model.parameters()

    def set_training_mode(self, mode: bool) -> None:
        """Training or evaluation mode (the MLPs behave the same in both)."""
        self.model.train(mode)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks) -> tuple:
        """The critic's values (N, 1), log pi(action) and the entropy of the masked distribution."""
        masks = torch.as_tensor(action_masks, dtype=torch.bool)
        logp, entropy = log_probs_and_entropy(self.model.masked_logits(obs, masks), masks, actions)
        return self.model.value(obs)[:, None], logp, entropy

    def get_distribution(self, obs: torch.Tensor, action_masks):
        """The masked action distribution (``.distribution.logits``, as SB3's wrapper has it)."""
        masks = torch.as_tensor(action_masks, dtype=torch.bool)
        return SimpleNamespace(distribution=torch.distributions.Categorical(
            logits=self.model.masked_logits(obs, masks)))

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's values, shape (N, 1)."""
        return self.model.value(obs)[:, None]


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row of masked ``logits``, drawn from their softmax (Gumbel-max: argmax of logits +
    Gumbel noise; an illegal action's -1e8 never wins)."""
    u = torch.rand(logits.shape, generator=generator).clamp_(min=1e-20)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=1)


def log_probs_and_entropy(logits: torch.Tensor, masks: torch.Tensor,
                          actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """log pi(action) per row and the entropy of the masked distribution (illegal actions add nothing)."""
    logp_all = torch.log_softmax(logits, dim=1)
    logp = logp_all.gather(1, actions[:, None]).squeeze(1)
    # illegal entries set to 0 before exp (exp(0) * 0 = 0): the same entropy, and no exp of the -1e8 logits,
    # whose underflow costs about 70 times a normal exp on this CPU (a quarter of a minibatch step)
    legal = logp_all.masked_fill(~masks, 0.0)
    entropy = -(legal.exp() * legal).sum(dim=1)
    return logp, entropy


def masked_kl(logits: torch.Tensor, ref_logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """KL(pi || ref) per row over the legal actions, ``pi`` and ``ref`` the masked softmaxes of the two logits."""
    logp, ref = torch.log_softmax(logits, dim=1), torch.log_softmax(ref_logits, dim=1)
    logp, ref = logp.masked_fill(~masks, 0.0), ref.masked_fill(~masks, 0.0)  # (no exp of -1e8: see above)
    return (logp.exp() * (logp - ref)).sum(dim=1)


# ----------------------------------------------------------------------------- the learner

class Rollout:
    """The buffers of one rollout, ``(n_steps, n_envs, ...)``: observations, masks, actions, their behaviour
    log-probabilities and values, rewards, game ends, the games the learner acted in (``rounds``: some), and
    the bootstrap value and what came after the last step (``rounds``: :meth:`RoundSelfPlay.settle`)."""

    def __init__(self, T: int, B: int, obs_dim: int, num_actions: int):
        self.obs = torch.zeros((T, B, obs_dim))
        self.masks = torch.zeros((T, B, num_actions), dtype=torch.bool)
        self.actions = torch.zeros((T, B), dtype=torch.long)
        self.logp = torch.zeros((T, B))
        self.values = torch.zeros((T, B))
        self.rewards = torch.zeros((T, B))
        self.dones = torch.zeros((T, B))
        self.acted = torch.ones((T, B), dtype=torch.bool)
        self.last_value = torch.zeros(B)
        self.settle_rewards = torch.zeros(B)
        self.settle_dones = torch.zeros(B)


def _rollout_field(name: str) -> property:
    return property(lambda self: getattr(self.rollout, name), doc=f"``{name}`` of the last rollout collected")


class LeanPPO:
    """The actor-critic, its optimizer, the rollout buffers, and PPO's two halves (see the module docstring).

    ``env`` is a :class:`~gemenvs.arena.batched_selfplay.BatchedSelfPlay` whose opponents are set;
    :meth:`start` deals its games. ``seconds`` accumulates the time in the environment
    (``env``: engine and opponents), in the learner's forward passes and buffers (``policy``) and
    in the updates (``update``); with ``lean.overlap`` the updates run beside the other two (another
    thread) and ``wait`` is the time collection waited for an update to join.

    ``model`` is the learning actor-critic, ``acting`` the one that collects (the same object
    without ``lean.overlap``; a copy, synced when an update joins, with it). ``rollout`` is the last
    rollout collected (its buffers also read as ``obs``, ``masks``, ``actions``, ...).
    """

    obs, masks, actions, logp, values = (_rollout_field(n) for n in ("obs", "masks", "actions", "logp", "values"))
    rewards, dones, acted = (_rollout_field(n) for n in ("rewards", "dones", "acted"))
    last_value, settle_rewards, settle_dones = (_rollout_field(n) for n in ("last_value", "settle_rewards",
                                                                           "settle_dones"))

    def __init__(self, cfg: TrainConfig, env):
        p = cfg.ppo
        self.cfg, self.env = cfg, env
        torch.manual_seed(cfg.seed)
        self.overlap = cfg.lean.overlap
        self.generator = torch.Generator().manual_seed(cfg.seed)  # sampling (and, without overlap, minibatches)
        # with overlap the minibatch order has its own stream, drawn in the update's thread
        self.update_generator = torch.Generator().manual_seed(cfg.seed + UPDATE_SEED_OFFSET) if self.overlap \
            else self.generator
        obs_dim, num_actions = int(env.observation_space.shape[0]), int(env.action_space.n)
        self.model = ActorCritic(obs_dim, num_actions, p.net_arch, p.activation)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=p.learning_rate, eps=1e-5)
        self.acting = copy.deepcopy(self.model).requires_grad_(False) if self.overlap else self.model
        T, B = p.n_steps, env.num_games
        self.rollouts = [Rollout(T, B, obs_dim, num_actions) for _ in range(2 if self.overlap else 1)]
        self.rollout = self.rollouts[0]  # the last one collected
        self._fill = 0  # the buffer the next rollout goes to
        self._job: threading.Thread | None = None  # the update running in the background (overlap)
        self._job_out: dict = {}
        self.num_timesteps = 0
        self.n_updates = 0
        self.seconds = {"env": 0.0, "policy": 0.0, "update": 0.0, **({"wait": 0.0} if self.overlap else {})}
        self._next_obs: np.ndarray | None = None
        self._next_masks: np.ndarray | None = None
        self.anchor: nn.Module | None = None  # set_anchor(): the frozen actor that ppo.anchor_coef pulls towards
        # lean.critic_thread: the critic's pass of each minibatch beside the actor's
        self._critic_thread = ThreadPoolExecutor(1, thread_name_prefix="lean-ppo-critic") \
            if cfg.lean.critic_thread else None

    def set_anchor(self) -> None:
        """Freeze a copy of the actor as it is now (after pretraining): each update then adds
        ``ppo.anchor_coef * KL(policy || this copy)`` to the loss."""
        self.anchor = copy.deepcopy(self.model.actor).requires_grad_(False)

    def start(self, seed: int | None = None) -> None:
        """Deal every game and read the learner's first observations and masks (with ``lean.overlap``, the
        acting copy takes the learning model's weights first: pretraining or a checkpoint may have set them)."""
        self.sync_acting()
        self._next_obs = self.env.reset(self.cfg.seed if seed is None else seed)
        self._next_masks = self.env.action_masks()

    def sync_acting(self) -> None:
        """Copy the learning model's weights into the acting copy (``lean.overlap``; no update may be running)."""
        if self.acting is not self.model:
            if self._job is not None:
                raise RuntimeError("sync_acting() while an update runs: join() it first")
            self.acting.load_state_dict(self.model.state_dict())

    @torch.no_grad()
    def collect(self, on_step=None) -> bool:
        """Play one rollout of ``n_steps`` steps in every game (``lean.rollout``: learner decisions in
        lockstep, or engine rounds). ``on_step(finished)`` is called after each step with the engine's
        :class:`~gemenvs.arena.batched_selfplay.Finished` games (or None); when it returns False the
        rollout stops there and False is returned (no update should follow)."""
        if self._next_obs is None:
            raise RuntimeError("collect() called before start()")
        B = self.env.num_games
        rounds = self.cfg.lean.rollout == "rounds"
        clock = time.perf_counter
        buf, model = self.rollouts[self._fill], self.acting  # (overlap: not the buffer the update reads)
        if buf is getattr(self._job, "rollout", None):
            raise RuntimeError("collect() into the rollout buffer an update is reading")
        for t in range(self.cfg.ppo.n_steps):
            t0 = clock()
            obs, masks = buf.obs[t], buf.masks[t]
            obs.copy_(torch.from_numpy(self._next_obs))
            masks.copy_(torch.from_numpy(self._next_masks))
            logits = model.masked_logits(obs, masks)
            action = sample(logits, self.generator)
            buf.actions[t] = action
            buf.logp[t] = torch.log_softmax(logits, dim=1).gather(1, action[:, None]).squeeze(1)
            buf.values[t] = model.value(obs)
            t1 = clock()
            if rounds:
                self._next_obs, rewards, dones, finished, acted = self.env.step_round(action.numpy())
            else:
                self._next_obs, rewards, dones, finished = self.env.step(action.numpy())
            self._next_masks = self.env.action_masks()
            t2 = clock()
            buf.rewards[t] = torch.from_numpy(rewards)
            buf.dones[t] = torch.from_numpy(dones.astype(np.float32))
            if rounds:
                buf.acted[t] = torch.from_numpy(acted)
                self.num_timesteps += int(acted.sum())
            else:
                self.num_timesteps += B
            self.seconds["policy"] += t1 - t0 + clock() - t2
            self.seconds["env"] += t2 - t1
            if on_step is not None and not on_step(finished):
                return False
        if rounds:  # every game's last decision gets its outcome, and the next observations are decisions
            t0 = clock()
            self._next_obs, rewards, dones, finished = self.env.settle()
            self._next_masks = self.env.action_masks()
            buf.settle_rewards.copy_(torch.from_numpy(rewards))
            buf.settle_dones.copy_(torch.from_numpy(dones.astype(np.float32)))
            self.seconds["env"] += clock() - t0
            if on_step is not None and not on_step(finished):
                return False
        t0 = clock()
        buf.last_value = model.value(torch.from_numpy(self._next_obs))
        self.seconds["policy"] += clock() - t0
        self.rollout, self._fill = buf, (self._fill + 1) % len(self.rollouts)
        return True

    @torch.no_grad()
    def advantages(self, rollout: Rollout | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """GAE advantages and the returns (advantage + value) of ``rollout`` (by default the last one
        collected), each (n_steps, n_envs), 0 where the learner did not act.

        Read backwards, per game: ``reward`` and ``ended`` gather what came after the learner's last
        decision (a game's end, in any round, cuts the bootstrap: the next observation is the next
        game's); at a decision, ``delta = reward + gamma * V(next decision) * (1 - ended) - V`` and
        ``A = delta + gamma * lambda * (1 - ended) * A(next decision)``. In lockstep every step is a
        decision, and this is the usual recursion.
        """
        p, r = self.cfg.ppo, self.rollout if rollout is None else rollout
        advantages = torch.zeros_like(r.rewards)
        next_value, next_adv = r.last_value.clone(), torch.zeros_like(r.last_value)
        reward, ended = r.settle_rewards.clone(), r.settle_dones.clone()  # (lockstep: zeros)
        for t in reversed(range(p.n_steps)):
            done = r.dones[t] > 0
            reward = torch.where(done, r.rewards[t], reward + r.rewards[t])
            ended = torch.where(done, torch.ones_like(ended), ended)
            live = 1.0 - ended
            delta = reward + p.gamma * next_value * live - r.values[t]
            adv = delta + p.gamma * p.gae_lambda * live * next_adv
            acted = r.acted[t]
            advantages[t] = torch.where(acted, adv, torch.zeros_like(adv))
            next_value = torch.where(acted, r.values[t], next_value)
            next_adv = torch.where(acted, adv, next_adv)
            reward = torch.where(acted, torch.zeros_like(reward), reward)
            ended = torch.where(acted, torch.zeros_like(ended), ended)
        return advantages, advantages + r.values

    def update(self) -> dict[str, float]:
        """PPO's update on the last rollout (see the module docstring), in this thread; mean losses and
        statistics. With ``lean.overlap`` the acting copy then takes the new weights."""
        if self._job is not None:
            raise RuntimeError("update() while an update runs in the background: join() it first")
        stats = self._update(self.rollout)
        self.sync_acting()
        return stats

    def update_async(self) -> None:
        """Start PPO's update on the last rollout in a background thread (``lean.overlap``); the next
        :meth:`collect` may run meanwhile (with the acting copy, into the other buffer); :meth:`join` ends it."""
        if not self.overlap:
            raise RuntimeError("update_async() needs lean.overlap: true (a separate acting copy and two buffers)")
        if self._job is not None:
            raise RuntimeError("update_async() while an update runs: join() it first")
        out, rollout = {}, self.rollout

        def work():
            try:
                out["stats"] = self._update(rollout)
            except BaseException as e:  # (re-raised in join())
                out["error"] = e

        self._job_out = out
        self._job = threading.Thread(target=work, name="lean-ppo-update", daemon=True)
        self._job.rollout = rollout
        self._job.start()

    def join(self) -> dict[str, float] | None:
        """Wait for the background update (:meth:`update_async`), sync the acting copy, and return its
        statistics (None when none was running). The wait counts in ``seconds['wait']``."""
        if self._job is None:
            return None
        t0 = time.perf_counter()
        self._job.join()
        self.seconds["wait"] += time.perf_counter() - t0
        self._job, out = None, self._job_out
        if "error" in out:
            raise out["error"]
        self.sync_acting()
        return out["stats"]

    def _update(self, rollout: Rollout) -> dict[str, float]:
        """The update itself, on ``rollout`` (reads only it, the learning model, its optimizer and anchor, and
        the update's generator: what :meth:`update_async` may run beside :meth:`collect`)."""
        p = self.cfg.ppo
        start = time.perf_counter()
        advantages, returns = self.advantages(rollout)
        N = p.n_steps * self.env.num_games
        obs, masks = rollout.obs.view(N, -1), rollout.masks.view(N, -1)
        actions, old_logp = rollout.actions.view(N), rollout.logp.view(N)
        advantages, returns = advantages.view(N), returns.view(N)
        rows = torch.nonzero(rollout.acted.view(N)).squeeze(1)  # (lockstep: every row)
        params = list(self.model.parameters())
        stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "approx_kl": [],
                                         "clip_fraction": [], "anchor_kl": []}
        epochs, stop = 0, False
        for _ in range(p.n_epochs):
            order = rows[torch.randperm(len(rows), generator=self.update_generator)]
            for first in range(0, len(rows), p.batch_size):
                idx = order[first:first + p.batch_size]
                o, m = obs[idx], masks[idx]  # (gathered once for the actor and the critic)
                self.optimizer.zero_grad(set_to_none=True)
                critic = self._critic_pass(o, returns[idx])  # (lean.critic_thread: running beside the actor's)
                logits = self.model.masked_logits(o, m)
                logp, entropy = log_probs_and_entropy(logits, m, actions[idx])
                adv = advantages[idx]
                if len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                log_ratio = logp - old_logp[idx]
                ratio = log_ratio.exp()
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_range, 1 + p.clip_range)).mean()
                actor_loss = policy_loss - p.ent_coef * entropy.mean()
                if self.anchor is not None and p.anchor_coef:
                    with torch.no_grad():
                        ref_logits = self.anchor(o).masked_fill(~m, MASKED_LOGIT)
                    anchor_kl = masked_kl(logits, ref_logits, m).mean()
                    actor_loss = actor_loss + p.anchor_coef * anchor_kl
                    stats["anchor_kl"].append(anchor_kl.item())
                with torch.no_grad():
                    approx_kl = float(((ratio - 1) - log_ratio).mean())
                    stats["clip_fraction"].append(float(((ratio - 1).abs() > p.clip_range).float().mean()))
                stats["approx_kl"].append(approx_kl)
                if p.target_kl is not None and approx_kl > 1.5 * p.target_kl:
                    critic.result()  # (its gradients are dropped: no step follows)
                    stop = True
                    break
                actor_loss.backward()
                value_loss = critic.result()
                nn.utils.clip_grad_norm_(params, p.max_grad_norm)
                self.optimizer.step()
                stats["policy_loss"].append(policy_loss.item())
                stats["value_loss"].append(value_loss.item())
                stats["entropy"].append(entropy.mean().item())
            epochs += 1
            if stop:
                break
        self.n_updates += 1
        self.seconds["update"] += time.perf_counter() - start
        out = {k: float(np.mean(v)) if v else float("nan") for k, v in stats.items()}
        out["epochs"] = epochs
        return out

    def _critic_pass(self, obs: torch.Tensor, returns: torch.Tensor) -> Future:
        """The critic's part of a minibatch: its value loss (MSE to ``returns``) and the gradients of
        ``vf_coef`` times it, in the critic thread (``lean.critic_thread``) or here; a future of the loss.

        Actor and critic share no parameters, so this backward pass and the actor's give the gradients one
        backward pass of the summed loss gives, bit for bit."""
        def run() -> torch.Tensor:
            value_loss = F.mse_loss(self.model.value(obs), returns)
            (self.cfg.ppo.vf_coef * value_loss).backward()
            return value_loss

        if self._critic_thread is None:
            done: Future = Future()
            done.set_result(run())
            return done
        return self._critic_thread.submit(run)

    def close(self) -> None:
        """Stop the critic thread (``lean.critic_thread``); no update may run after this."""
        if self._critic_thread is not None:
            self._critic_thread.shutdown()

    def agent(self, deterministic: bool = True, seed: int | None = None, step: int | None = None) -> PolicyAgent:
        """The learning actor now, as a PolicyAgent (metadata: backend, ``step`` (by default the decisions
        collected), game)."""
        return self.model.to_agent(deterministic, seed, metadata={
            "backend": "lean", "step": self.num_timesteps if step is None else step, "env": self.cfg.env.id,
            "options": self.cfg.env.options}, features=self.env.features)

    def state_dict(self) -> dict:
        """Networks, optimizer and the anchor if set (tensors and plain data only: ``torch.load(weights_only=True)``
        reads it)."""
        out = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        if self.anchor is not None:
            out["anchor"] = self.anchor.state_dict()
        return out

    def restore(self, params: dict, num_timesteps: int, n_updates: int) -> None:
        """Continue from a checkpoint's ``model.pt`` state (:func:`load_model_state`): weights, optimizer state,
        anchor, and the step counters; the sampling generator reseeded from ``seed + steps`` (with ``lean.overlap``
        the update's too, from its own seed; the games themselves are dealt afresh by :meth:`start`, which also
        syncs the acting copy)."""
        try:
            self.model.load_state_dict(params["model"])
            self.optimizer.load_state_dict(params["optimizer"])
            if "anchor" in params:
                self.set_anchor()
                self.anchor.load_state_dict(params["anchor"])
        except (RuntimeError, ValueError, KeyError) as e:
            first = " ".join(str(e).split())[:300]
            raise CheckpointError(f"model.pt does not fit the network of the config "
                                  f"(ppo.net_arch / ppo.activation / the game's sizes): {first}") from None
        self.num_timesteps, self.n_updates = num_timesteps, n_updates
        self.generator.manual_seed(self.cfg.seed + self.num_timesteps)
        if self.update_generator is not self.generator:
            self.update_generator.manual_seed(self.cfg.seed + UPDATE_SEED_OFFSET + self.num_timesteps)


class RoundSelfPlay(BatchedSelfPlay):
    """:class:`~gemenvs.arena.batched_selfplay.BatchedSelfPlay` that can also play one engine round of
    every game (``lean.rollout: rounds``), holding none.

    :meth:`step_round` plays the learner's actions in the games that wait on it and the opponents'
    choices everywhere else (the learner's action is ignored in a game that does not wait on it: an
    opponent reveals, or the learner's bid is forced); finished games are reported and dealt afresh
    as ``step`` does. It reads
    BatchedSelfPlay's internals; the engine rejects any illegal action (``check``), and
    tests/test_lean_ppo.py plays it against the rules.
    """

    def step_round(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, Finished | None, np.ndarray]:
        """One engine step of every game. ``actions``: one per game, used where the learner is to act.
        Returns the learner's next observations (B, obs_dim), rewards (B,), dones (B,), the
        :class:`Finished` games (None if none; ``terminal_observation`` left empty: games end, never
        truncate) and the games the learner acted in (bool (B,))."""
        if not self._started:
            raise RuntimeError("step_round() called before reset()")
        B = self.num_games
        acted = self.games.to_act()[self._ar, self.seat]
        a = np.asarray(actions).reshape(B).astype(np.int64)
        full = self._opponent_actions(np.ones(B, np.bool_))
        full[self._ar[acted], self.seat[acted]] = a[acted]
        self._clear_final()
        self._record(self.games.step(full))  # (an illegal action of the learner raises here)
        self._current = None
        self.engine_steps += 1
        self._length += acted
        # (a new game's first round is a bid of every seat: the learner decides, no advance needed)
        rewards, done, finished = self._deal_finished(terminal=False, advance=False)
        return self._obs.copy(), rewards, done, finished, acted

    def settle(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, Finished | None]:
        """Play on the games that do not wait on the learner, holding the others, until every game waits
        on it (``BatchedSelfPlay``'s advance: the end of a ``rounds`` rollout, so that every game's last
        decision gets its outcome and bootstraps on a decision state). Returns the learner's observations
        (B, obs_dim), its rewards (B,), the games that ended meanwhile (B,) and those :class:`Finished`
        games (or None)."""
        self._clear_final()
        self._advance()
        rewards, done, finished = self._deal_finished(terminal=False, advance=False)
        return self._obs.copy(), rewards, done, finished


def make_env(cfg: TrainConfig) -> RoundSelfPlay:
    """The ``n_envs`` batched games of the config, their opponents to come from the pool."""
    return RoundSelfPlay(cfg.n_envs, None, learner_seat=cfg.env.learner_seat, reward=cfg.env.reward,
                         seat_mix=cfg.pool.seat_mix, seed=cfg.seed, env_id=cfg.env.id, features=cfg.env.features,
                         **cfg.env.options)


def load_model_state(path: str | Path) -> dict:
    """A checkpoint's ``model.pt``, read with ``weights_only=True`` (tensors and plain data; no code runs)."""
    state = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or not {"model", "optimizer"} <= set(state) <= {"model", "optimizer", "anchor"}:
        raise ValueError(f"{path} is not a lean checkpoint's model.pt (a dict of 'model', 'optimizer' and maybe "
                         f"'anchor')")
    return state


# ----------------------------------------------------------------------------- the learner of a run

class LeanLearner(Learner):
    """:class:`LeanPPO` on :func:`make_env`'s games as a run's learner (:class:`gemenvs.training.run.Run`).

    Without ``lean.overlap`` each rollout is collected, then updated on, then the schedule runs. With it the
    update of rollout k runs beside the collection of rollout k+1; it joins after that collection, the schedule
    runs then (at the step count of the rollouts the weights were trained on), and the next update starts."""

    name = "lean"
    progress_fields: ClassVar[list[str]] = ["policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "anchor_kl", "epochs",
                       "win_rate_all", "env_share", "policy_share", "update_share", "wait_share"]

    def __init__(self, cfg: TrainConfig):
        self.cfg = cfg
        self.env = make_env(cfg)
        self.ppo = LeanPPO(cfg, self.env)
        self._pending: int | None = None  # overlap: the step count after the rollout whose update runs beside
        self._trained = 0  # the decisions the learning model's weights were trained on (what its exports record)
        self._closed = False

    @property
    def num_timesteps(self) -> int:
        return self.ppo.num_timesteps

    @property
    def n_updates(self) -> int:
        return self.ppo.n_updates

    @property
    def features(self):
        return self.env.features

    def set_opponents(self, members: list, weights: list[float]) -> None:
        self.env.update_opponents(members, weights)

    def start(self, seed: int) -> None:
        self.ppo.start(seed=seed)

    def describe(self) -> str:
        unit = "engine rounds" if self.cfg.lean.rollout == "rounds" else "learner decisions"
        return f"an update after every {self.cfg.ppo.n_steps} {unit} of {count(self.env.num_games)} games"

    def collect(self, on_step) -> bool:
        return self.ppo.collect(lambda finished: on_step(
            None if finished is None else list(zip(finished.opponent, finished.win_share.tolist()))))

    def update(self) -> tuple[dict, int] | None:
        if not self.ppo.overlap:
            stats = self.ppo.update()
            self._trained = self.ppo.num_timesteps
            return stats, self._trained
        return self.drain()  # (the update of the rollout before, if any, joins)

    def after_schedule(self) -> None:
        if self.ppo.overlap:
            self._pending = self.ppo.num_timesteps
            self.ppo.update_async()

    def drain(self) -> tuple[dict, int] | None:
        if self._pending is None:
            return None
        stats = self.ppo.join()
        self._trained, self._pending = self._pending, None
        return stats, self._trained

    def export_agent(self, deterministic: bool = True, step: int | None = None) -> PolicyAgent:
        """The learning actor (its metadata's step by default the decisions its weights were trained on)."""
        return self.ppo.agent(deterministic, step=self._trained if step is None else step)

    def checkpoint_files(self) -> list:
        model = io.BytesIO()
        torch.save(self.ppo.state_dict(), model)
        return [("model.pt", model.getvalue())]

    @classmethod
    def read_state(cls, folder: Path) -> dict:
        """``model.pt``, read with ``weights_only=True``."""
        try:
            return load_model_state(folder / "model.pt")
        except Exception as e:  # torch's unpickler refuses anything but tensors and plain data, with many error types
            raise CheckpointError(f"{folder / 'model.pt'} cannot be read as a lean checkpoint "
                                  f"({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None

    def restore(self, state: dict, num_timesteps: int, n_updates: int, trainer: dict) -> None:
        self.ppo.restore(state, num_timesteps, n_updates)
        self._trained = num_timesteps

    def clone_policy(self) -> ClonePolicy:
        return ClonePolicy(self.ppo.model)

    def after_pretrain(self) -> None:
        if self.cfg.ppo.anchor_coef:
            self.ppo.set_anchor()

    def time_split(self) -> dict[str, float]:
        return dict(self.ppo.seconds)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self.ppo._job is not None:  # (an error in collection: let the update finish before leaving)
                self.ppo._job.join()
                self.ppo._job = None
            self.ppo.close()
            self.env.close()


__all__ = [
    "MASKED_LOGIT",
    "ActorCritic",
    "ClonePolicy",
    "LeanLearner",
    "LeanPPO",
    "RoundSelfPlay",
    "load_model_state",
    "log_probs_and_entropy",
    "make_env",
    "masked_kl",
    "sample",
]
