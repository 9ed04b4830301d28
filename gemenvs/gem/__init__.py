"""GEM: once-around auctions for gem cards paid for by leveraging (turning over) one's own cards."""
from gemenvs.core.entry import RANDOM_AGENT, GameEntry
from gemenvs.gem.actions import build_action_spec
from gemenvs.gem.data import Manifest, ManifestError, load_manifest
from gemenvs.gem.game import Gem
from gemenvs.gem.rules import GemState, Options

#: GEM as the suite knows it (``gemenvs.gem_v0``, docs/gem.md)
ENTRY = GameEntry(
    Gem,
    env_id="gemenvs/GEM-v0",
    title="GEM",
    painter="gemenvs.pictures.gem",
    docs_page="gem.md",
    baselines={"random": RANDOM_AGENT, "greedy": "gemenvs.agents.gem:GemGreedyAgent"},
    default_opponent="greedy",
)

__all__ = ["ENTRY", "Gem", "GemState", "Manifest", "ManifestError", "Options", "build_action_spec", "load_manifest"]
