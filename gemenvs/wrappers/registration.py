"""Gymnasium registration of the single-agent view of every registered game.

Registering a game (``import gemenvs`` for the suite's own, :func:`gemenvs.register_game` for
yours) registers its id with Gymnasium too::

    env = gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="heuristic")
    envs = gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=1024, opponents="heuristic")

``make_vec`` of a game whose entry names a ``vector_entry_point`` (MegaGem: one
``BatchedVectorEnv`` over the batched engine, same-step autoreset) builds that; ``vectorization_mode=
"sync"`` or ``"async"`` gives copies of the single-learner env instead, as for the other games.
Registering imports nothing heavy: the entry points are only loaded by ``gymnasium.make`` / ``make_vec``.
"""
from __future__ import annotations

from gemenvs.core.entry import SINGLE_LEARNER_ENTRY_POINT as ENTRY_POINT


def register_gymnasium() -> None:
    """Register the single-learner view of every registered game that Gymnasium does not know yet."""
    import gymnasium

    from gemenvs.core.entry import entries

    for e in entries():
        if e.env_id not in gymnasium.registry:
            gymnasium.register(id=e.env_id, entry_point=ENTRY_POINT, kwargs={"env_id": e.env_id},
                               vector_entry_point=e.vector_entry_point)


__all__ = ["ENTRY_POINT", "register_gymnasium"]
