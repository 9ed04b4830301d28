"""Baseline and learned agents (installed as ``gemenvs.agents``)."""
from gemenvs.agents.base import Agent, BaseAgent, legal_actions
from gemenvs.agents.match import MatchResult, decide, play_game, run_match, wilson_interval
from gemenvs.agents.policy import PolicyAgent, PolicyLoadError
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.agents.registry import baseline_names, make_agent
from gemenvs.agents.search import ISMCTSAgent

__all__ = [
    "Agent", "BaseAgent", "ISMCTSAgent", "MatchResult", "PolicyAgent", "PolicyLoadError", "RandomAgent", "baseline_names", "decide", "legal_actions",
    "make_agent", "play_game", "run_match", "wilson_interval",
]
