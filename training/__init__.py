"""Self-play training for the games of the suite (installed as ``gemenvs.training``).

Importing this package is light: torch and stable-baselines3 are imported by the learners and the CLI only.
Train with ``gemenvs-train CONFIG [key=value ...]``; the tables the learners play at are in :mod:`gemenvs.arena`.
"""
