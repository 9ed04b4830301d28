"""GEM: once-around auctions for gem cards paid for by leveraging (turning over) one's own cards."""
from gemenvs.gem.actions import ActionLayout
from gemenvs.gem.data import Manifest, ManifestError, load_manifest
from gemenvs.gem.game import Gem
from gemenvs.gem.rules import GemState, Options
from gemenvs.gem.serialize import StateError

__all__ = ["ActionLayout", "Gem", "GemState", "Manifest", "ManifestError", "Options", "StateError", "load_manifest"]
