"""Baseline and learned agents (installed as ``gemenvs.agents``)."""
from gemenvs.agents.base import Agent, BaseAgent, legal_actions
from gemenvs.agents.match import MatchResult, play_game, run_match, wilson_interval
from gemenvs.agents.random_agent import RandomAgent

__all__ = ["Agent", "BaseAgent", "MatchResult", "RandomAgent", "legal_actions", "play_game", "run_match",
           "wilson_interval"]
