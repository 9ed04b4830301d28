"""A generic PettingZoo Parallel environment over any :class:`~gemenvs.core.engine.Game`.

Each ``step`` takes one action from every agent that is to act now (all bidders in a
simultaneous round, or the single player of a sequential decision); actions given for agents
that are not to act are ignored, as their action masks are all zero.
"""
from __future__ import annotations


import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from gemenvs.core.aec import ILLEGAL_REWARD, RENDER_MODES, EnvSettings, final_infos, observation_space_for
from gemenvs.core.engine import Game, IllegalActionError
from gemenvs.core.rewards import terminal_rewards


class GemParallelEnv(ParallelEnv):
    """Parallel environment over a pure game engine; subclasses set ``game_class`` and ``metadata``."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "gem_base_parallel"}
    game_class: type[Game]

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", reward: str = "win",
                 **game_options):
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
        self.agents = []

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _observations(self, over: bool = False) -> dict:
        state, game = self.game_state, self.game
        acting = () if over else game.to_act(state)
        zero = np.zeros(game.num_actions, dtype=np.int8)
        return {
            a: {
                "observation": game.observe(state, i),
                "action_mask": game.legal_mask(state, i) if i in acting else zero.copy(),
            }
            for i, a in enumerate(self.possible_agents)
        }

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a new game; a seed fixes this game and the seeds of the resets that follow it."""
        if seed is not None:
            self._seeder = np.random.default_rng(seed)
        self.game_state = self.game.new_state(int(self._seeder.integers(0, 2**63 - 1)))
        self.agents = self.possible_agents[:]
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Apply one action per agent to act (in seat order); see the module docstring."""
        if not self.agents:
            raise RuntimeError("step() called on a finished game: call reset() first")
        game, state = self.game, self.game_state
        acting = game.to_act(state)
        agents = self.agents
        rewards = {a: 0.0 for a in agents}
        infos = {a: {} for a in agents}
        offender = None
        for i in acting:
            agent = self.possible_agents[i]
            if agent not in actions:
                raise ValueError(f"{agent} is to act but has no entry in the actions dict")
            reason = game.why_illegal(state, i, actions[agent])
            if reason is not None:
                message = (f"illegal action {actions[agent]!r} ({game.safe_action_name(actions[agent])}) "
                           f"by {agent}: {reason}")
                if self.settings.illegal_action == "raise":
                    raise IllegalActionError(message)
                offender = (agent, message)
                break
        if offender is not None:
            agent, message = offender
            rewards = {a: (ILLEGAL_REWARD if a == agent else 0.0) for a in agents}
            infos = {a: {"illegal_action": {"agent": agent, "reason": message}} for a in agents}
            over = True
        else:
            for i in acting:
                game.apply_legal(state, i, int(actions[self.possible_agents[i]]))
            over = game.is_over(state)
            if over:
                res = game.results(state)
                rew = terminal_rewards(self.settings.reward, res.scores, game.score_scale, res.rank_keys)
                rewards = {a: rew[i] for i, a in enumerate(self.possible_agents)}
                infos = final_infos(game, state, self.possible_agents)
        obs = self._observations(over)
        terminations = {a: over for a in agents}
        truncations = {a: False for a in agents}
        if over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def render(self):
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("You are calling render without a render_mode (use 'ansi' or 'human').")
            return None
        if self.game_state is None:
            text = "(no game: call reset() first)"
        else:
            acting = () if self.game.is_over(self.game_state) else self.game.to_act(self.game_state)
            text = self.game.render(self.game_state, acting[0] if len(acting) == 1 else None)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
