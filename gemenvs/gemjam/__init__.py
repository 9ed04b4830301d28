"""Gem Jam: gems and sets in the Shrine, gold in the Vault, spells with counter-spell chains, the King's Vault."""
from gemenvs.gemjam.data import Manifest, ManifestError, load_manifest
from gemenvs.gemjam.game import GemJam
from gemenvs.gemjam.rules import GemJamState, Options

__all__ = ["GemJam", "GemJamState", "Manifest", "ManifestError", "Options", "load_manifest"]
