"""The RLlib module of the RLlib backend: separate actor and critic MLPs, the actor's logits masked.

:class:`MaskedActorCritic` reads the observation dict that
:class:`~gemenvs.training.rllib_env.GemenvsMultiAgentEnv` gives every seat, ``{"observations":
float32 vector, "action_mask": 0/1 vector}``: the actor and the critic see ``observations`` only,
and every action the mask forbids gets the logit ``FLOAT_MIN`` before RLlib builds the
categorical distribution, so no illegal action is ever sampled, taken as the argmax, or given
probability in the PPO loss. The networks are the ones MaskablePPO's ``MlpPolicy`` builds from
the same ``ppo`` section (``net_arch``, ``activation``, orthogonal initialisation with the same
gains), so :func:`actor_layers` turns the actor into a
:class:`~gemenvs.agents.policy.PolicyAgent` exactly: same layers, same activation.

Importing this module imports ray and torch (the ``rllib`` extra).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

#: the activations the module can use, by the name the config gives them (PolicyAgent runs both)
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def mlp(inputs: int, hidden: list[int], outputs: int, activation: str, last_gain: float) -> torch.nn.Sequential:
    """Linear layers with ``activation`` between them, initialised as SB3 initialises MlpPolicy
    (orthogonal weights, gain sqrt(2) in the hidden layers and ``last_gain`` in the last; zero biases)."""
    layers: list[torch.nn.Module] = []
    sizes = [inputs, *hidden]
    for a, b in zip(sizes, sizes[1:]):
        layers += [torch.nn.Linear(a, b), ACTIVATIONS[activation]()]
    layers.append(torch.nn.Linear(sizes[-1], outputs))
    linear = [m for m in layers if isinstance(m, torch.nn.Linear)]
    for k, m in enumerate(linear):
        torch.nn.init.orthogonal_(m.weight, gain=last_gain if k == len(linear) - 1 else math.sqrt(2))
        torch.nn.init.zeros_(m.bias)
    return torch.nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """PPO's module for one policy of the league (see the module docstring).

    ``model_config``: ``net_arch`` (hidden layer sizes, [] for linear networks) and ``activation``
    (``"tanh"`` or ``"relu"``).
    """

    def setup(self):
        """Build the actor and the critic for the ``observations`` part of the observation dict."""
        space = self.observation_space
        if not hasattr(space, "spaces") or set(space.spaces) != {"observations", "action_mask"}:
            raise ValueError(f"MaskedActorCritic reads a Dict observation of 'observations' and 'action_mask'; "
                             f"got {space}")
        inputs = int(np.prod(space["observations"].shape))
        actions = int(self.action_space.n)
        hidden = [int(h) for h in self.model_config.get("net_arch", [128, 128])]
        activation = self.model_config.get("activation", "tanh")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}")
        self.actor = mlp(inputs, hidden, actions, activation, last_gain=0.01)
        self.critic = mlp(inputs, hidden, 1, activation, last_gain=1.0)

    def _forward(self, batch, **kwargs):
        """Masked action logits: FLOAT_MIN wherever ``action_mask`` is 0."""
        obs = batch[Columns.OBS]
        logits = self.actor(obs["observations"])
        legal = obs["action_mask"] > 0
        return {Columns.ACTION_DIST_INPUTS: torch.where(legal, logits, torch.full_like(logits, FLOAT_MIN))}

    def compute_values(self, batch, embeddings=None):
        """The critic's value of each observation, shape (B,)."""
        return self.critic(batch[Columns.OBS]["observations"]).squeeze(-1)


def actor_layers(state: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(weight (inputs, outputs), bias)`` of the actor's linear layers, from the module's state dict
    (``actor.<k>.weight`` / ``actor.<k>.bias``, numpy arrays or tensors): PolicyAgent's layout."""
    indices = sorted({int(k.split(".")[1]) for k in state if k.startswith("actor.") and k.endswith(".weight")})
    if not indices:
        raise ValueError("the state holds no actor layers (actor.<k>.weight)")
    layers = []
    for k in indices:
        w = np.asarray(state[f"actor.{k}.weight"], dtype=np.float32)
        b = np.asarray(state[f"actor.{k}.bias"], dtype=np.float32)
        if w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"actor.{k} is not a linear layer's weight and bias")
        layers.append((w.T.copy(), b.copy()))
    return layers
