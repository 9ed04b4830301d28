"""Batched MegaGem: B games in numpy arrays, stepped in lockstep (``docs/megagem.md``, "Batched engine")."""
from gemenvs.megagem.batched.engine import BatchedMegaGem, StepResult, game_seeds

__all__ = ["BatchedMegaGem", "StepResult", "game_seeds"]
