"""From what a user writes to an agent at a table: the one resolver of every tool that seats agents.

An agent spec is a baseline name (``heuristic``), a family member (``tuned_family:3``), a search agent
(``ismcts`` or ``ismcts:64``), the path of a saved policy (``.zip`` from MaskablePPO, ``.npz`` from
``PolicyAgent.save``; read as weights and plain metadata, never code), a program that plays over the JSON-lines
protocol (``cmd:python my_agent.py``, ``tcp:127.0.0.1:7000``, ``unix:/tmp/agent.sock``, with limits such as
``cmd,decision_timeout=2:...``; :mod:`gemenvs.agents.protocol`) or an :class:`~gemenvs.agents.base.Agent`
already built. A bad spec is an :class:`AgentSpecError` of one line naming the problem.
"""
from __future__ import annotations

from pathlib import Path

from gemenvs.agents.base import Agent
from gemenvs.agents.policy import is_policy_file

AgentSpec = str | Agent


class AgentSpecError(ValueError):
    """An agent spec that names no agent of the game, or a policy file that cannot play it."""


def agent_label(spec: AgentSpec) -> str:
    """The short name of a spec in tables and folder names: a policy file's stem, else the name itself."""
    if isinstance(spec, str):
        return Path(spec).stem if is_policy_file(spec) else spec
    return str(getattr(spec, "name", type(spec).__name__))


def resolve_agent(game: str, spec: AgentSpec, env, seed: int | None = None, greedy: bool = False,
                  protocol: dict | None = None) -> Agent:
    """The agent ``spec`` names, built for ``env`` (an AEC env of ``game``; only its spaces and specs are read).

    A policy file plays sampled actions unless ``greedy`` and must fit the env's observation and action sizes;
    a search agent is handed the engine state where the match runner plays it
    (:func:`gemenvs.agents.base.decide`). A protocol agent's program is started at its first game;
    ``protocol`` holds the keyword arguments of :class:`~gemenvs.agents.protocol.ProtocolAgent` a tool gives
    (its limits, which the spec's own override, and ``log_dir``, ``log_name`` for the program's stderr)."""
    from gemenvs.agents.registry import SEARCH_AGENTS, baseline_names, check_agent_name, families, make_agent

    if isinstance(spec, Agent):
        return spec
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent must be a baseline name, a policy file or an Agent; got {spec!r}")
    from gemenvs.agents.protocol import is_protocol_spec

    if is_protocol_spec(spec):
        from gemenvs.agents.protocol import ProtocolAgent, parse_spec

        try:
            return ProtocolAgent.for_env(env, parse_spec(spec), seed=seed, **(protocol or {}))
        except (ValueError, TypeError) as e:
            raise AgentSpecError(" ".join(str(e).split())) from None
    if is_policy_file(spec):
        from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

        try:  # (a missing file stays a FileNotFoundError)
            agent = PolicyAgent.load(spec, deterministic=greedy, seed=seed)
        except PolicyLoadError as e:
            raise AgentSpecError(" ".join(str(e).split())) from None
        try:
            agent.check_fits(env, f"policy {spec!r}", f"this {game} environment")
        except ValueError as e:
            raise AgentSpecError(" ".join(str(e).split())) from None
        return agent
    try:
        check_agent_name(game, spec)
    except ValueError as e:
        if spec.partition(":")[0] in SEARCH_AGENTS:  # a search agent with a bad budget: say what is wrong
            raise AgentSpecError(f"agent {spec!r}: {e}") from None
        known = ", ".join(baseline_names(game) + [f"{prefix}:K" for prefix in families(game)])
        search = ", ".join(f"{name} or {name}:N (N simulations per decision)" for name in SEARCH_AGENTS)
        raise AgentSpecError(f"unknown agent {spec!r} for {game}: give a baseline ({known}), a search agent "
                             f"({search}), a policy file (.zip or .npz) or a program (cmd:COMMAND, "
                             f"tcp:HOST:PORT, unix:PATH)") from None
    return make_agent(game, spec, env, seed=seed)
