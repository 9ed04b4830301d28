"""The Gem Jam AEC and Parallel environments (thin layers over :class:`~gemenvs.gemjam.game.GemJam`).

In the AEC view ``agent_selection`` moves to whichever seat decides next: the turn player, a
responder in a window, a payer, the receiver placing a paid card. Decisions with one legal
action (a pass with no reaction in hand, a forced placement) are played by the engine.
"""
from __future__ import annotations

from gemenvs.core.aec import GameAECEnv, wrap_aec
from gemenvs.core.envbase import RENDER_FPS, RENDER_MODES
from gemenvs.core.parallel import GameParallelEnv
from gemenvs.gemjam.game import GemJam


class raw_env(GameAECEnv):  # noqa: N801 - PettingZoo naming convention
    """Gem Jam as an AEC environment: one seat decides at a time."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gemjam_v0",
                "is_parallelizable": False}
    game_class = GemJam


class parallel_raw_env(GameParallelEnv):  # noqa: N801
    """Gem Jam as a Parallel environment: each step carries the action of the one seat to decide."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": "gemjam_v0"}
    game_class = GemJam


def env(**options):
    """The AEC environment with PettingZoo's order-enforcing wrapper (options: see the module docs)."""
    return wrap_aec(raw_env(**options))


def parallel_env(**options):
    """The Parallel environment (options: see the module docs)."""
    return parallel_raw_env(**options)
