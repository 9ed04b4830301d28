"""GEM: once-around auctions for gem cards paid for by leveraging (turning over) one's own cards."""
from gemenvs.gem.actions import build_action_spec
from gemenvs.gem.data import Manifest, ManifestError, load_manifest
from gemenvs.gem.game import Gem
from gemenvs.gem.rules import GemState, Options

__all__ = ["Gem", "GemState", "Manifest", "ManifestError", "Options", "build_action_spec", "load_manifest"]
