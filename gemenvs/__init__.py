"""gemenvs: gem-themed tabletop games as PettingZoo environments.

Importing the package registers every environment in PettingZoo's registry, e.g.
``pettingzoo.make("aec", "gemenvs/MegaGem-v0", num_players=5)``, and its single-learner view in
Gymnasium's, e.g. ``gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="heuristic")``.
"""
from __future__ import annotations

__version__ = "0.1.0"

#: (id, module) of every environment of the suite
ENVIRONMENTS = {
    "gemenvs/MegaGem-v0": "gemenvs.megagem_v0",
    "gemenvs/GEM-v0": "gemenvs.gem_v0",
    "gemenvs/GemJam-v0": "gemenvs.gemjam_v0",
}


def _register() -> None:
    """Register every environment with PettingZoo (AEC and Parallel) and Gymnasium (one learner seat)."""
    import pettingzoo

    from gemenvs.wrappers.registration import register_gymnasium

    for env_id, module in ENVIRONMENTS.items():
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"{module}:env")
        if env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=f"{module}:parallel_env")
    register_gymnasium()


_register()
