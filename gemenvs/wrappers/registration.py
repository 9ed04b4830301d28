"""Gymnasium registration of the single-agent view of every game of the suite.

After ``import gemenvs`` (which calls :func:`register_gymnasium`)::

    env = gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="heuristic")
    envs = gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=1024, opponents="heuristic")

``make_vec`` of MegaGem builds its games in the batched engine (``VECTOR_ENTRY_POINTS``: one
``BatchedVectorEnv``, same-step autoreset); ``vectorization_mode="sync"`` or ``"async"`` gives copies
of the single-learner env instead, as for the other games. Registering imports nothing heavy: the
entry points are only loaded by ``gymnasium.make`` / ``make_vec``.
"""
from __future__ import annotations

ENTRY_POINT = "gemenvs.arena.single_agent:SingleAgentEnv"
#: the games with a natively batched vector env (Gymnasium's ``vector_entry_point``)
VECTOR_ENTRY_POINTS = {"gemenvs/MegaGem-v0": "gemenvs.arena.batched_selfplay:make_vector_env"}


def register_gymnasium() -> None:
    """Register every environment of :data:`gemenvs.ENVIRONMENTS` as a single-learner Gymnasium env."""
    import gymnasium

    from gemenvs import ENVIRONMENTS

    for env_id in ENVIRONMENTS:
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"env_id": env_id},
                               vector_entry_point=VECTOR_ENTRY_POINTS.get(env_id))
