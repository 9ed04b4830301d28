"""The Agent protocol: an agent maps one seat's observation and action mask to an action id."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from gemenvs.core.spec import ActionSpec, ObservationSpec


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act`` and ``reset`` plays: it sees only its own seat's observation."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Choose a legal action id given the seat's flat observation and int8 action mask."""

    def reset(self, seed: int | None = None) -> None:
        """Forget per-game memory and reseed the agent's own randomness."""


class BaseAgent:
    """Convenience base: holds the observation spec, the action spec, the number of actions and a seeded RNG."""

    #: short name used in result tables and configs
    name = "agent"

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None):
        self.spec = spec
        self.action_spec = action_spec
        if num_actions is None and action_spec is not None:
            num_actions = action_spec.size
        self.num_actions = num_actions
        self.rng = np.random.default_rng(seed)

    @classmethod
    def for_env(cls, env, seed: int | None = None, **kwargs):
        """Build the agent for an environment (reads only its observation spec, action spec and action space)."""
        agent = env.possible_agents[0]
        return cls(spec=env.unwrapped.observation_spec, num_actions=int(env.action_space(agent).n), seed=seed,
                   action_spec=env.unwrapped.action_spec, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal actions; raises if the mask allows none (the agent is not to act)."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("the action mask allows no action: this agent is not to act now")
    return legal
