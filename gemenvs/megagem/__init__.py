"""MegaGem: sealed simultaneous bids for gems whose values are hidden in the players' hands."""
from gemenvs.core.engine import StateError
from gemenvs.core.entry import RANDOM_AGENT, GameEntry
from gemenvs.megagem.game import MegaGem
from gemenvs.megagem.rules import MegaGemState, Options

#: MegaGem as the suite knows it (``gemenvs.megagem_v0``, docs/megagem.md)
ENTRY = GameEntry(
    MegaGem,
    env_id="gemenvs/MegaGem-v0",
    title="MegaGem",
    painter="gemenvs.pictures.megagem",
    docs_page="megagem.md",
    baselines={
        "random": RANDOM_AGENT,
        "truthful": "gemenvs.agents.megagem:TruthfulAgent",
        "heuristic": "gemenvs.agents.megagem:HeuristicBidder",
        "tuned": "gemenvs.agents.megagem:TunedBidder",
    },
    families={"tuned_family": "gemenvs.agents.megagem.family:make_member"},
    default_opponent="heuristic",
    vector_entry_point="gemenvs.arena.batched_selfplay:make_vector_env",
    simultaneous=True,
)

__all__ = ["ENTRY", "MegaGem", "MegaGemState", "Options", "StateError"]
