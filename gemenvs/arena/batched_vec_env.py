"""MegaGem's batched single-learner games as a Stable-Baselines3 ``VecEnv`` (:class:`BatchedVecEnv`).

Kept apart from :mod:`gemenvs.arena.batched_selfplay` so that the Gymnasium view of the same games
(``BatchedVectorEnv``, ``gymnasium.make_vec("gemenvs/MegaGem-v0", ...)``) imports neither
Stable-Baselines3 nor torch (``from gemenvs.arena import BatchedVecEnv`` loads this module).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from gemenvs.arena.batched_selfplay import BatchedSelfPlay


class BatchedVecEnv(VecEnv):
    """:class:`BatchedSelfPlay` as a Stable-Baselines3 ``VecEnv``: ``num_envs`` is the number of games.

    ``env_method("action_masks")`` (what MaskablePPO asks) returns the learner's masks, and
    ``env_method("update_opponents", members, weights)`` (what the trainer sends) updates the one
    pool; both are answered here, in this process. Arguments as :class:`BatchedSelfPlay`'s.
    """

    def __init__(self, num_games: int, opponents: Any = "random", **kwargs):
        self.core = BatchedSelfPlay(num_games, opponents, **kwargs)
        self.render_mode = None
        self._actions: np.ndarray | None = None
        super().__init__(self.core.num_games, self.core.observation_space, self.core.action_space)

    def reset(self):
        """Deal every game (seeded by ``seed()`` if it was called, else as :meth:`BatchedSelfPlay.reset`: the
        constructor's seed the first time) and return the learner's observations."""
        obs = self.core.reset(self._seeds[0])
        self._reset_seeds()
        masks, seats = self.core.action_masks(), self.core.seat
        self.reset_infos = [{"action_mask": masks[b], "learner_seat": int(seats[b])} for b in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, rewards, dones, finished = self.core.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if finished is not None:
            elapsed = self.core.elapsed()
            for i, b in enumerate(finished.slots.tolist()):
                infos[b] = finished.info(i, elapsed)
                infos[b]["terminal_observation"] = finished.terminal_observation[i]
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool: the learner's masks now."""
        return self.core.action_masks()

    def update_opponents(self, members, weights=None) -> None:
        """The pool's new members and weights (see :meth:`BatchedSelfPlay.update_opponents`)."""
        self.core.update_opponents(members, weights)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.core.action_masks()
            return [masks[i] for i in idx]
        value = getattr(self.core, method_name)(*method_args, **method_kwargs)  # one core: called once
        return [value] * len(idx)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name) if attr_name in ("render_mode", "action_masks") else \
            getattr(self.core, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.core, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self):  # pragma: no cover - no pictures from the batched engine
        raise NotImplementedError("the batched environment does not render")

    def close(self) -> None:
        self.core.close()


__all__ = ["BatchedVecEnv"]
