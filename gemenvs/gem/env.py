"""The GEM AEC and Parallel environments (thin layers over :class:`~gemenvs.gem.game.Gem`).

Under ``reward="win"`` and ``"rank"`` players are ordered by points and then by gems on
INVESTED cards (the rulebook's tiebreak), through the engine's ``Results.rank_keys``.
"""
from __future__ import annotations

from gemenvs.core.aec import GameAECEnv, wrap_aec
from gemenvs.core.envbase import RENDER_FPS, RENDER_MODES
from gemenvs.core.parallel import GameParallelEnv
from gemenvs.gem.game import Gem


class raw_env(GameAECEnv):  # noqa: N801 - PettingZoo naming convention
    """GEM as an AEC environment: one seat decides at a time."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gem_v0",
                "is_parallelizable": False}
    game_class = Gem


class parallel_raw_env(GameParallelEnv):  # noqa: N801
    """GEM as a Parallel environment: each step carries the action of the one seat to decide."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gem_v0"}
    game_class = Gem


def env(**options):
    """The AEC environment with PettingZoo's order-enforcing wrapper (options: see the module docs)."""
    return wrap_aec(raw_env(**options))


def parallel_env(**options):
    """The Parallel environment (options: see the module docs)."""
    return parallel_raw_env(**options)
