"""A generic PettingZoo Parallel environment over any :class:`~gemenvs.core.engine.Game`.

Each ``step`` takes one action from every agent that is to act now (all bidders in a
simultaneous round, or the single player of a sequential decision); actions given for agents
that are not to act are ignored, as their action masks are all zero. ``infos[agent]["game_log"]``
holds the events of the game's narrative log (Gem Jam) of this step that the agent may see.
"""
from __future__ import annotations

import numpy as np
from pettingzoo import ParallelEnv

from gemenvs.core.engine import IllegalActionError
from gemenvs.core.envbase import ILLEGAL_REWARD, RENDER_FPS, RENDER_MODES, GameEnvBase, final_infos
from gemenvs.core.rewards import terminal_rewards


class GameParallelEnv(GameEnvBase, ParallelEnv):
    """Parallel environment over a pure game engine; subclasses set ``game_class`` and ``metadata``."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gem_base_parallel"}

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", reward: str = "win",
                 **game_options):
        self._setup(render_mode, illegal_action, reward, game_options)
        self.agents = []

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
        self.game_state = self._new_game(seed)
        self.agents = self.possible_agents[:]
        new = self._new_log_events() or {}
        return self._observations(), {a: ({"game_log": new[a]} if a in new else {}) for a in self.agents}

    def step(self, actions: dict):
        """Apply one action per agent to act (in seat order); see the module docstring."""
        self._require_game("step()")
        if not self.agents:
            raise RuntimeError("step() called on a finished game: call reset() first")
        if not isinstance(actions, dict):
            raise TypeError(f"step() takes a dict of agent -> action, not {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.agent_name_mapping]
        if unknown:
            raise ValueError(f"actions name unknown agent(s) {', '.join(map(repr, unknown))}; "
                             f"agents are {', '.join(self.possible_agents)}")
        game, state = self.game, self.game_state
        acting = game.to_act(state)
        agents = self.agents
        rewards = {a: 0.0 for a in agents}
        infos = {a: {} for a in agents}
        missing = [self.possible_agents[i] for i in acting if self.possible_agents[i] not in actions]
        if missing:
            raise ValueError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} to act "
                             f"but {'has' if len(missing) == 1 else 'have'} no entry in the actions dict")
        offenders = {}
        for i in acting:
            agent = self.possible_agents[i]
            message = self._illegal_message(agent, actions[agent])
            if message is not None:
                if self.settings.illegal_action == "raise":
                    raise IllegalActionError(message)
                offenders[agent] = message
        if offenders:
            rewards = {a: (ILLEGAL_REWARD if a in offenders else 0.0) for a in agents}
            first = next(iter(offenders))
            infos = {a: {"illegal_action": {"agent": first, "reason": offenders[first], "offenders": dict(offenders)}}
                     for a in agents}
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
        new = self._new_log_events()
        if new:
            infos = {a: {**infos[a], "game_log": new[a]} for a in agents}
        obs = self._observations(over)
        terminations = {a: over for a in agents}
        truncations = {a: False for a in agents}
        if over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def render(self):
        """The table as the one seat to act sees it (the view without a seat while several act
        at once, and once the game is over); :meth:`render_view` renders a chosen seat's view."""
        viewer = None
        if self.game_state is not None and self.agents:
            acting = self.game.to_act(self.game_state)
            viewer = acting[0] if len(acting) == 1 else None
        return self._render(viewer)
