"""Moved to :mod:`gemenvs.wrappers.single_agent`; this re-export keeps the old import path working."""
from gemenvs.wrappers.single_agent import (  # noqa: F401
    FixedOpponents,
    OpponentSampler,
    OpponentSpec,
    SingleAgentEnv,
    build_opponent,
    is_policy_path,
    make_aec_env,
)

__all__ = ["FixedOpponents", "OpponentSampler", "OpponentSpec", "SingleAgentEnv", "build_opponent", "is_policy_path",
           "make_aec_env"]
