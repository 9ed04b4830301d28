"""Baseline and learned agents (installed as ``gemenvs.agents``); matches between them are in :mod:`gemenvs.arena`."""
from gemenvs.agents.base import Agent, BaseAgent, decide, legal_actions
from gemenvs.agents.policy import PolicyAgent, PolicyLoadError
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.agents.registry import baseline_names, make_agent
from gemenvs.agents.search import ISMCTSAgent

__all__ = [
    "Agent", "BaseAgent", "ISMCTSAgent", "PolicyAgent", "PolicyLoadError", "RandomAgent", "baseline_names", "decide",
    "legal_actions", "make_agent",
]
