"""gemenvs: gem-themed tabletop games as PettingZoo environments.

Importing the package registers every game's entry (:data:`gemenvs.megagem.ENTRY`, ...): its
environments in PettingZoo's registry, e.g. ``pettingzoo.make("aec", "gemenvs/MegaGem-v0",
num_players=5)``, and its single-learner view in Gymnasium's, e.g.
``gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="heuristic")``.
:func:`register_game` adds a game of your own (docs/adding-a-game.md); :func:`entries` lists
the registered games and :func:`entry` finds one by name or id.
"""
from __future__ import annotations

from gemenvs.core.entry import GameEntry, entries, entry, entry_of
from gemenvs.core.entry import register as register_game
from gemenvs.version import __version__


def _register_builtin() -> None:
    """Register the suite's own games: MegaGem, GEM and Gem Jam."""
    from gemenvs.gem import ENTRY as GEM
    from gemenvs.gemjam import ENTRY as GEMJAM
    from gemenvs.megagem import ENTRY as MEGAGEM

    for game in (MEGAGEM, GEM, GEMJAM):
        register_game(game)


_register_builtin()

__all__ = ["GameEntry", "__version__", "entries", "entry", "entry_of", "register_game"]
