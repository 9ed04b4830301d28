"""Self-play training for the games of the suite (installed as ``gemenvs.training``).

Importing this package is light: torch and stable-baselines3 are only imported by
:mod:`gemenvs.training.selfplay` and the CLI. Train with ``gemenvs-train CONFIG [key=value ...]``.
The single-learner Gymnasium view the trainer uses lives in :mod:`gemenvs.wrappers`.
"""
from gemenvs.wrappers.registration import register_gymnasium

__all__ = ["register_gymnasium"]
