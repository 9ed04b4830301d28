"""Gem Jam: gems and sets in the Shrine, gold in the Vault, spells with counter-spell chains, the King's Vault."""
from gemenvs.core.entry import RANDOM_AGENT, GameEntry
from gemenvs.gemjam.data import Manifest, ManifestError, load_manifest
from gemenvs.gemjam.game import GemJam
from gemenvs.gemjam.rules import GemJamState, Options

#: Gem Jam as the suite knows it (``gemenvs.gemjam_v0``, docs/gemjam.md)
ENTRY = GameEntry(
    GemJam,
    env_id="gemenvs/GemJam-v0",
    title="Gem Jam",
    painter="gemenvs.pictures.gemjam",
    docs_page="gemjam.md",
    baselines={"random": RANDOM_AGENT, "rule": "gemenvs.agents.gemjam:GemJamRuleAgent"},
    # the one-turn lookahead (lookahead or lookahead:SAMPLES) reads the engine state: it plays where the match
    # runner's decide() hands it over (evaluations, tournaments), not as a training opponent
    families={"lookahead": "gemenvs.agents.gemjam:make_lookahead"},
    state_families=("lookahead",),
    default_opponent="rule",
)

__all__ = ["ENTRY", "GemJam", "GemJamState", "Manifest", "ManifestError", "Options", "load_manifest"]
