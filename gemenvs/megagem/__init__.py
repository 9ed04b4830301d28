"""MegaGem: sealed simultaneous bids for gems whose values are hidden in the players' hands."""
from gemenvs.megagem.game import MegaGem
from gemenvs.megagem.rules import MegaGemState, Options
from gemenvs.megagem.serialize import StateError

__all__ = ["MegaGem", "MegaGemState", "Options", "StateError"]
