"""The MegaGem AEC and Parallel environments (thin layers over :class:`~gemenvs.megagem.game.MegaGem`)."""
from __future__ import annotations

from gemenvs.core.aec import GameAECEnv, wrap_aec
from gemenvs.core.envbase import RENDER_FPS, RENDER_MODES
from gemenvs.core.parallel import GameParallelEnv
from gemenvs.megagem.game import MegaGem


class raw_env(GameAECEnv):  # noqa: N801 - PettingZoo naming convention
    """MegaGem as an AEC environment; bidders act one after another, never seeing earlier sealed bids."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "megagem_v0",
                "is_parallelizable": False}
    game_class = MegaGem


class parallel_raw_env(GameParallelEnv):  # noqa: N801
    """MegaGem as a Parallel environment: all bids in one step, the winner alone in a reveal step."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "megagem_v0"}
    game_class = MegaGem


def env(**options):
    """The AEC environment with PettingZoo's order-enforcing wrapper (options: see the module docs)."""
    return wrap_aec(raw_env(**options))


def parallel_env(**options):
    """The Parallel environment (options: see the module docs)."""
    return parallel_raw_env(**options)
