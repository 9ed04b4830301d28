"""A generic PettingZoo AEC environment over any :class:`~gemenvs.core.engine.Game`.

The game supplies rules, observations and rendering; this layer maps seats to agent names,
wraps observations with action masks, applies the illegal-action policy, hands out terminal
rewards and puts the final score breakdown in ``infos``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from gemenvs.core.engine import Game, IllegalActionError, check_choice
from gemenvs.core.rewards import check_reward_mode, terminal_rewards

ILLEGAL_POLICIES = ("raise", "terminate")
RENDER_MODES = ("ansi", "human")
#: reward given to a player whose illegal action ended the game under ``illegal_action="terminate"``
ILLEGAL_REWARD = -1.0


class EnvSettings:
    """The environment-level options shared by every game (validated once)."""

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", reward: str = "win"):
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_POLICIES)
        self.reward = check_reward_mode(reward)


def observation_space_for(game: Game) -> spaces.Dict:
    """The Dict space {"observation": Box, "action_mask": Box(0,1,int8)} of a game."""
    low, high = game.spec.bounds()
    return spaces.Dict(
        {
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(game.num_actions,), dtype=np.int8),
        }
    )


def final_infos(game: Game, state, agents: list[str]) -> dict[str, dict[str, Any]]:
    """Per-agent infos at the end of a game: own score, breakdown, rank and the winners."""
    res = game.results(state)
    winners = [agents[w] for w in res.winners]
    return {
        agent: {
            "score": res.scores[i],
            "score_breakdown": dict(res.breakdown[i]),
            "scores": {agents[j]: res.scores[j] for j in range(len(agents))},
            "winners": winners,
            **res.extra,
        }
        for i, agent in enumerate(agents)
    }


class GemAECEnv(AECEnv):
    """AEC environment over a pure game engine; subclasses set ``game_class`` and ``metadata``."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "gem_base", "is_parallelizable": False}
    game_class: type[Game]

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", reward: str = "win",
                 **game_options):
        super().__init__()
        self.settings = EnvSettings(render_mode, illegal_action, reward)
        self.render_mode = self.settings.render_mode
        self.game: Game = self.game_class(**game_options)
        self.observation_spec = self.game.spec
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_space = observation_space_for(self.game)
        self._act_space = spaces.Discrete(self.game.num_actions)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self._seeder = np.random.default_rng()
        self.game_state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; a seed fixes this game and the seeds of the resets that follow it."""
        if seed is not None:
            self._seeder = np.random.default_rng(seed)
        game_seed = int(self._seeder.integers(0, 2**63 - 1))
        self.game_state = self.game.new_state(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._select_next()

    def _select_next(self) -> None:
        if self.game.is_over(self.game_state):
            return
        self.agent_selection = self.possible_agents[self.game.to_act(self.game_state)[0]]

    def observe(self, agent):
        player = self.agent_name_mapping[agent]
        state = self.game_state
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask = self.game.legal_mask(state, player)
        else:
            mask = np.zeros(self.game.num_actions, dtype=np.int8)
        return {"observation": self.game.observe(state, player), "action_mask": mask}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self.agent_name_mapping[agent]
        reason = self.game.why_illegal(self.game_state, player, action)
        message = None if reason is None else (
            f"illegal action {action!r} ({self.game.safe_action_name(action)}) by {agent}: {reason}")
        if message is not None and self.settings.illegal_action == "raise":
            raise IllegalActionError(message)
        self._cumulative_rewards[agent] = 0.0
        for a in self.rewards:
            self.rewards[a] = 0.0
        if message is not None:
            self._end_illegal(agent, message)
        else:
            self.game.apply_legal(self.game_state, player, int(action))
            if self.game.is_over(self.game_state):
                self._end_game()
            else:
                self._select_next()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_game(self) -> None:
        res = self.game.results(self.game_state)
        rew = terminal_rewards(self.settings.reward, res.scores, self.game.score_scale, res.rank_keys)
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = rew[i]
            self.terminations[a] = True
        self.infos = final_infos(self.game, self.game_state, self.possible_agents)

    def _end_illegal(self, agent: str, why: str) -> None:
        for a in self.agents:
            self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
            self.terminations[a] = True
            self.infos[a] = {"illegal_action": {"agent": agent, "reason": why}}

    def render(self):
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("You are calling render without a render_mode (use 'ansi' or 'human').")
            return None
        if self.game_state is None:
            text = "(no game: call reset() first)"
        else:
            viewer = None
            if not self.game.is_over(self.game_state) and not self.terminations.get(self.agent_selection, True):
                viewer = self.agent_name_mapping[self.agent_selection]
            text = self.game.render(self.game_state, viewer)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def wrap_aec(env: GemAECEnv) -> AECEnv:
    """PettingZoo's order-enforcing wrapper over a raw env (bounds are checked by the env itself)."""
    env = wrappers.OrderEnforcingWrapper(env)
    return env
