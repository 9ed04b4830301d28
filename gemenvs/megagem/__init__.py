"""MegaGem: sealed simultaneous bids for gems whose values are hidden in the players' hands."""
from gemenvs.core.engine import StateError
from gemenvs.megagem.game import MegaGem
from gemenvs.megagem.rules import MegaGemState, Options

__all__ = ["MegaGem", "MegaGemState", "Options", "StateError"]
