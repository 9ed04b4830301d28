"""What the AEC and Parallel layers share: env options, spaces, seeding, final infos, rendering."""
from __future__ import annotations

import copy
import importlib
from typing import Any

import numpy as np
from gymnasium import logger, spaces

from gemenvs.core.engine import Game, _short, check_choice, check_seed
from gemenvs.core.rewards import check_reward_mode

ILLEGAL_POLICIES = ("raise", "terminate")
#: "ansi": the game's text picture; "human": that text printed; "rgb_array": an (H, W, 3) uint8
#: picture of the table (drawn by the painter its entry names, sizes in docs/pictures.md)
RENDER_MODES = ("ansi", "human", "rgb_array")
#: the picture of a game without a painter of its own: its text render on a canvas
TEXT_PAINTER = "gemenvs.pictures.text"
#: frames per second of recorded games (Gymnasium's RecordVideo reads it from ``metadata``)
RENDER_FPS = 2
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
    return {
        agent: {
            "score": res.scores[i],
            "score_breakdown": dict(res.breakdown[i]),
            "scores": {agents[j]: res.scores[j] for j in range(len(agents))},
            "winners": [agents[w] for w in res.winners],
            **copy.deepcopy(res.extra),
        }
        for i, agent in enumerate(agents)
    }


class GameEnvBase:
    """Mixin holding a game, its agents and spaces; subclasses set ``game_class`` and ``entry``
    (:func:`gemenvs.core.entry.env_functions` builds them from an entry)."""

    game_class: type[Game]
    #: the game's entry: its text renderer and picture painter (None: found in the registry)
    entry = None

    def _setup(self, render_mode: str | None, illegal_action: str, reward: str, game_options: dict) -> None:
        """Validate the env options, build the game and the per-agent spaces."""
        self.settings = EnvSettings(render_mode, illegal_action, reward)
        self.render_mode = self.settings.render_mode
        self.game: Game = self.game_class(**game_options)
        self.observation_spec = self.game.spec
        self.action_spec = self.game.action_spec
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = observation_space_for(self.game)
        act_space = spaces.Discrete(self.game.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._seeder = np.random.default_rng()
        self.game_state = None
        # a game without a narrative log (the base game_log_size, always 0) never has events to hand out
        self._has_game_log = getattr(type(self.game), "game_log_size", None) is not Game.game_log_size

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _new_game(self, seed: int | None):
        """A new game state; a seed fixes this game and the seeds of the resets that follow it."""
        seed = check_seed(seed, "reset(seed=...)")
        if seed is not None:
            self._seeder = np.random.default_rng(seed)
        self._log_seen = 0
        return self.game.new_state(int(self._seeder.integers(0, 2**63 - 1)))

    def _new_log_events(self) -> dict[str, list[str]] | None:
        """Events of the game's narrative log added since the last call, per agent as each may
        see them, or None when there are none (``reset`` starts the count again)."""
        if self.game_state is None:
            return None
        size = self.game.game_log_size(self.game_state)
        seen = getattr(self, "_log_seen", 0)
        if size <= seen:
            return None
        self._log_seen = size
        entries = self.game.game_log_entries(self.game_state, seen)
        return {a: [text for who, text in entries if who in (-1, i)] for i, a in enumerate(self.possible_agents)}

    def game_log(self, agent: str | None = None) -> list[str]:
        """The whole narrative log of this game as ``agent`` may see it (None: every event)."""
        self._require_game("game_log()")
        viewer = None if agent is None else self.agent_name_mapping[agent]
        return self.game.game_log(self.game_state, viewer)

    def _require_game(self, what: str) -> None:
        """Raise a clear error when ``what`` is called before the first ``reset()``."""
        if self.game_state is None:
            raise RuntimeError(f"{what} called before reset(): call env.reset() first")

    def state(self) -> np.ndarray:
        """The full game state as one float32 vector (every seat's private view), laid out by
        ``env.state_spec``: for centralised critics, never for a seat's own policy."""
        self._require_game("state()")
        return self.game.state_vector(self.game_state)

    @property
    def state_spec(self):
        """The named slices of :meth:`state`."""
        return self.game.state_spec

    @property
    def state_space(self) -> spaces.Box:
        """The Box of :meth:`state` (built on first use: most users never ask for it)."""
        space = self.__dict__.get("_state_space")
        if space is None:
            low, high = self.game.state_spec.bounds()
            space = self._state_space = spaces.Box(low=low, high=high, dtype=np.float32)
        return space

    def _illegal_message(self, agent: str, action) -> str | None:
        """Why ``agent``'s ``action`` is illegal now, as a message naming both, or None when legal."""
        reason = self.game.why_illegal(self.game_state, self.agent_name_mapping[agent], action)
        if reason is None:
            return None
        return f"illegal action {_short(action)} ({self.game.safe_action_name(action)}) by {agent}: {reason}"

    def _render(self, viewer: int | None):
        """Render the table as seat ``viewer`` (None: no seat) sees it, in the env's render mode:
        the text for "ansi", printed for "human", an (H, W, 3) uint8 picture for "rgb_array"
        (the same information as the text, drawn by the entry's painter, imported with Pillow on
        the first picture)."""
        if self.render_mode is None:
            logger.warn("You are calling render without a render_mode (use 'ansi', 'human' or 'rgb_array').")
            return None
        if self.render_mode == "rgb_array":
            painter = self._painter()
            if self.game_state is None:
                return importlib.import_module(TEXT_PAINTER).notice(painter.size(self.game), self.game,
                                                                    "no game: call reset() first")
            return painter.draw(self.game, self.game_state, viewer).array()
        if self.game_state is None:
            text = "(no game: call reset() first)"
        elif self.entry is None:
            text = self.game.render(self.game_state, viewer)
        else:
            text = self.entry.render_text(self.game, self.game_state, viewer)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def _painter(self):
        """The module drawing this game's pictures: the entry's painter, or the text picture without an entry."""
        if self.entry is not None:
            return self.entry.load_painter()
        return importlib.import_module(TEXT_PAINTER)

    def render_view(self, agent: str | None):
        """Render as ``agent`` sees the table (None: the view without a seat), in the env's render
        mode, whoever is to act (``render()`` shows the seat to act)."""
        if agent is not None and agent not in self.agent_name_mapping:
            raise ValueError(f"no agent {agent!r}; agents are {', '.join(self.possible_agents)}")
        return self._render(None if agent is None else self.agent_name_mapping[agent])

    def close(self) -> None:
        pass
