"""A generic PettingZoo AEC environment over any :class:`~gemenvs.core.engine.Game`.

The game supplies rules, observations and rendering; this layer maps seats to agent names,
wraps observations with action masks, applies the illegal-action policy, hands out terminal
rewards and puts the final score breakdown in ``infos``, with ``infos[agent]["game_log"]``: the
events of the game's narrative log (Gem Jam's spells, payments ...) that the agent may see,
since its own last decision.
"""
from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from gemenvs.core.engine import IllegalActionError, as_action_id
from gemenvs.core.envbase import ILLEGAL_REWARD, RENDER_FPS, RENDER_MODES, GameEnvBase, final_infos
from gemenvs.core.rewards import terminal_rewards


class GameAECEnv(GameEnvBase, AECEnv):
    """AEC environment over a pure game engine; subclasses set ``game_class`` and ``metadata``."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gem_base",
                "is_parallelizable": False}

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", reward: str = "win",
                 **game_options):
        super().__init__()
        self._setup(render_mode, illegal_action, reward, game_options)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; a seed fixes this game and the seeds of the resets that follow it."""
        self.game_state = self._new_game(seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._add_log_events()
        self._select_next()

    def _add_log_events(self) -> None:
        """Append the game-log events of the last step to each agent's ``infos["game_log"]``
        (the events it may see since its own last decision)."""
        new = self._new_log_events()
        if new:
            for a in self.agents:
                self.infos[a] = {**self.infos[a], "game_log": self.infos[a].get("game_log", []) + new[a]}

    def _select_next(self) -> None:
        if self.game.is_over(self.game_state):
            return
        self.agent_selection = self.possible_agents[self.game.to_act(self.game_state)[0]]

    def observe(self, agent):
        self._require_game("observe()")
        if agent not in self.agent_name_mapping:
            raise ValueError(f"no agent {agent!r}; agents are {', '.join(self.possible_agents)}")
        player = self.agent_name_mapping[agent]
        state = self.game_state
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask = self.game.legal_mask(state, player)
            # remembered for step(): the same state object at the same log length has the same mask
            self._mask_seen = (state, len(state.log), agent, mask.copy())
        else:
            mask = np.zeros(self.game.num_actions, dtype=np.int8)
        return {"observation": self.game.observe(state, player), "action_mask": mask}

    def _legal_by_seen_mask(self, agent: str, action) -> bool:
        """Whether ``action`` is legal by the mask this agent was last shown, when that mask is
        still current (same state object, no decision since); False when it cannot tell."""
        seen = getattr(self, "_mask_seen", None)
        if seen is None or seen[0] is not self.game_state or seen[1] != len(self.game_state.log) or seen[2] != agent:
            return False
        a = as_action_id(action)
        return a is not None and 0 <= a < seen[3].size and bool(seen[3][a])

    def step(self, action) -> None:
        self._require_game("step()")
        if not self.agents:
            raise RuntimeError("step() called after the game ended and every agent was removed: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        message = None if self._legal_by_seen_mask(agent, action) else self._illegal_message(agent, action)
        if message is not None and self.settings.illegal_action == "raise":
            raise IllegalActionError(message)
        self._cumulative_rewards[agent] = 0.0
        for a in self.rewards:
            self.rewards[a] = 0.0
        if "game_log" in self.infos[agent]:  # it has seen them
            self.infos[agent] = {k: v for k, v in self.infos[agent].items() if k != "game_log"}
        if message is not None:
            self._end_illegal(agent, message)
        else:
            self.game.apply_legal(self.game_state, self.agent_name_mapping[agent], int(action))
            if self.game.is_over(self.game_state):
                self._end_game()
            else:
                self._select_next()
            self._add_log_events()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_game(self) -> None:
        res = self.game.results(self.game_state)
        rew = terminal_rewards(self.settings.reward, res.scores, self.game.score_scale, res.rank_keys)
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = rew[i]
            self.terminations[a] = True
        finals = final_infos(self.game, self.game_state, self.possible_agents)
        for a, info in finals.items():  # events not yet read stay
            if "game_log" in self.infos.get(a, {}):
                info["game_log"] = self.infos[a]["game_log"]
        self.infos = finals

    def _end_illegal(self, agent: str, why: str) -> None:
        for a in self.agents:
            self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
            self.terminations[a] = True
            self.infos[a] = {"illegal_action": {"agent": agent, "reason": why, "offenders": {agent: why}}}

    def render(self):
        """The table as the seat to act sees it (the view without a seat once the game is over),
        in the render mode; :meth:`render_view` renders a chosen seat's view."""
        viewer = None
        if self.game_state is not None and not self.game.is_over(self.game_state) \
                and not self.terminations.get(self.agent_selection, True):
            viewer = self.agent_name_mapping[self.agent_selection]
        return self._render(viewer)


def wrap_aec(env: GameAECEnv) -> AECEnv:
    """PettingZoo's order-enforcing wrapper over a raw env (bounds are checked by the env itself)."""
    env = wrappers.OrderEnforcingWrapper(env)
    return env
