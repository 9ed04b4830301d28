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
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

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
        self._mask_seen = None  # (state, log length, agent, mask) of the last mask shown to the agent to act

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
        state = self.game_state
        if state is None:
            self._require_game("observe()")
        player = self.agent_name_mapping.get(agent)
        if player is None:
            raise ValueError(f"no agent {agent!r}; agents are {', '.join(self.possible_agents)}")
        game = self.game
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask = game.legal_mask(state, player)
            # remembered for step(): the same state object at the same log length has the same mask
            self._mask_seen = (state, len(state.log), agent, mask.copy())
        else:
            mask = np.zeros(game.num_actions, dtype=np.int8)
        return {"observation": game.observe(state, player), "action_mask": mask}

    def _legal_by_seen_mask(self, agent: str, action) -> bool:
        """Whether ``action`` is legal by the mask this agent was last shown, when that mask is
        still current (same state object, no decision since); False when it cannot tell."""
        seen = self._mask_seen
        if seen is None or seen[0] is not self.game_state or seen[1] != len(self.game_state.log) or seen[2] != agent:
            return False
        a = action if type(action) is int else as_action_id(action)
        return a is not None and 0 <= a < seen[3].size and bool(seen[3][a])

    def step(self, action) -> None:
        if self.game_state is None:
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
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0.0
        if "game_log" in self.infos[agent]:  # it has seen them
            self.infos[agent] = {k: v for k, v in self.infos[agent].items() if k != "game_log"}
        if message is not None:
            self._end_illegal(agent, message)
            self._accumulate_rewards()
        else:
            game, state = self.game, self.game_state
            game.apply_legal(state, self.agent_name_mapping[agent], int(action))
            if game.is_over(state):
                self._end_game()
                self._accumulate_rewards()  # every reward is 0.0 before the end: nothing to add then
            else:
                self.agent_selection = self.possible_agents[game.to_act(state)[0]]
            if self._has_game_log:
                self._add_log_events()
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


class GameOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper with direct paths for the calls of every decision.

    The base wrapper reaches each attribute of the raw env through two ``__getattr__`` calls,
    eight of them per decision of an ``agent_iter`` / ``last`` / ``step`` loop; these overrides
    read the raw env directly and keep the base wrapper's checks and errors.
    """

    def last(self, observe: bool = True):
        """``(observation, cumulative reward, terminated, truncated, info)`` of the agent to act."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            return super().agent_iter(max_iter)  # the base wrapper's error
        return _GameIterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own wrapper prints: the env's name


class _GameIterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _GameIterator(self.env, self.max_iter)


class _GameIterator(AECOrderEnforcingIterator):
    """The base wrapper's iterator (stops when no agent is left, requires a step between two
    agents) reading the raw env directly."""

    def __next__(self) -> str:
        raw = self.env.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert self.env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        self.env._has_updated = False
        return raw.agent_selection


def wrap_aec(env: GameAECEnv) -> AECEnv:
    """The order-enforcing wrapper over a raw env (bounds are checked by the env itself)."""
    return GameOrderEnforcingWrapper(env)
