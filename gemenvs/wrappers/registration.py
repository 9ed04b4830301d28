"""Gymnasium registration of the single-agent view of every game of the suite.

After ``import gemenvs`` (which calls :func:`register_gymnasium`)::

    env = gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="heuristic")

Registering imports nothing heavy: the entry point is only loaded by ``gymnasium.make``.
"""
from __future__ import annotations

ENTRY_POINT = "gemenvs.wrappers.single_agent:SingleAgentEnv"


def register_gymnasium() -> None:
    """Register every environment of :data:`gemenvs.ENVIRONMENTS` as a single-learner Gymnasium env."""
    import gymnasium

    from gemenvs import ENVIRONMENTS

    for env_id in ENVIRONMENTS:
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"env_id": env_id})
